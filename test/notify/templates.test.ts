import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  renderNotificationTemplate,
  SAMPLE_VARIABLES,
  templateProblem,
} from '../../src/domain/notification-templates.js';
import { pagerDutyEvent, runMail, slackMessage } from '../../src/notify/messages.js';
import type { RunFacts } from '../../src/notify/payload.js';
import {
  notificationVariables,
  templatedMail,
  templatedPagerDuty,
  templatedSlack,
  templatedWebhook,
} from '../../src/notify/templates.js';
import type { TestRunRow } from '../../src/store/database.js';

const assertion = (target: unknown, actual: unknown, result = 'fail') => ({
  result,
  source: 'response_json',
  property: 'user.name',
  comparison: 'equal',
  target_value: target,
  actual_value: actual,
  error: null,
});

const run = {
  id: 'run-1',
  test_id: 'test-1',
  bucket_key: 'bucket1',
  environment_id: 'env-1',
  environment_name: 'Prod',
  region: 'eu-west-1',
  agent: null,
  result: 'fail',
  queued_at: 1_700_000_000,
  started_at: 1_700_000_001,
  finished_at: 1_700_000_002.5,
  error: null,
  summary: JSON.stringify({
    requests: [
      {
        step_type: 'request',
        result: 'pass',
        assertions: [assertion('a', 'a', 'pass')],
        scripts: [],
        variables: [],
      },
      {
        step_type: 'request',
        result: 'fail',
        assertions: [assertion('Ann', 'Bob'), assertion(200, { code: 500 })],
        scripts: [],
        variables: [],
      },
    ],
  }),
} as unknown as TestRunRow;

const facts: RunFacts = {
  run,
  test: { id: 'test-1', name: 'Users "API" <v2>\n', trigger_id: 'trig' },
  bucket: { key: 'bucket1', name: 'Main' },
  publicUrl: 'https://vigil.example',
};
const variables = notificationVariables(facts, false);

test('placeholders: the run facts, every failing assertion with expected and actual, duration, links', () => {
  assert.equal(variables.test_name, 'Users "API" <v2>\n');
  assert.equal(variables.result, 'fail');
  assert.equal(variables.duration_ms, '1500');
  assert.equal(variables.finished_at, '2023-11-14T22:13:22Z');
  assert.equal(variables.result_url, 'https://vigil.example/buckets/bucket1/tests/test-1/results/run-1');
  assert.equal(variables.test_url, 'https://vigil.example/buckets/bucket1/tests/test-1');
  assert.equal(variables.failing_assertions_count, '2');
  assert.equal(
    variables.failing_assertions,
    '#2 response_json user.name equal: expected Ann, actual Bob\n#2 response_json user.name equal: expected 200, actual {"code":500}',
  );
});

test('validation: unknown placeholders and syntax errors name the field; functions are allowed', () => {
  assert.equal(
    templateProblem({ subject: '{{test_name}} {{result}}', body: '{{failing_assertions}}' }, 'text'),
    null,
  );
  assert.equal(templateProblem({ body: 'at {{utc_datetime}}: {{url_encode(test_name)}}' }, 'text'), null);
  const unknown = templateProblem({ body: 'Host: {{hostname}}' }, 'text');
  assert.equal(unknown?.field, '/template/body');
  assert.match(unknown!.why, /unknown placeholder "hostname"/);
  const syntax = templateProblem({ subject: '{{test_name', body: 'x' }, 'text');
  assert.equal(syntax, null, 'a {{ with no }} after it is text, as in steps');
  const bad = templateProblem({ subject: '{{ test_name ) }}', body: 'x' }, 'text', '/emails');
  assert.equal(bad?.field, '/emails/template/subject');
  const call = templateProblem({ body: '{{nope(1)}}' }, 'text');
  assert.match(call!.why, /unknown function "nope"/);
  const json = templateProblem({ body: '{"name": {{test_name}}}' }, 'json');
  assert.equal(json?.field, '/template/body');
  assert.match(json!.why, /not JSON/);
});

test('JSON bodies escape values: a test name cannot break the payload', () => {
  const body = templatedWebhook(
    { body: '{"text": "{{test_name}} {{result}}", "details": "{{failing_assertions}}"}' },
    variables,
    '{"standard": true}',
  );
  const parsed = JSON.parse(body);
  assert.equal(parsed.text, 'Users "API" <v2>\n fail');
  assert.match(parsed.details, /actual \{"code":500\}/);
  const injected = renderNotificationTemplate(
    '{"a": "{{test_name}}"}',
    { ...SAMPLE_VARIABLES, test_name: '", "admin": true, "x": "' },
    'json',
  );
  assert.ok(injected.ok);
  assert.deepEqual(Object.keys(JSON.parse(injected.value)), ['a']);
});

test('each channel takes the template in place of its standard text; unset or failing stays standard', () => {
  const mail = templatedMail(
    { subject: 'ALERT {{test_name}}', body: 'Result {{result}} <{{result_url}}>' },
    variables,
    runMail(facts),
  );
  assert.equal(mail.subject, 'ALERT Users "API" <v2> ', 'no line breaks in a subject');
  assert.equal(mail.text, 'Result fail <https://vigil.example/buckets/bucket1/tests/test-1/results/run-1>');
  assert.ok(mail.html.includes('Result fail &lt;https://'));
  assert.ok(!mail.html.includes('<https://'));

  const slack = templatedSlack(
    { body: '*{{test_name}}* {{result}}' },
    variables,
    slackMessage(facts, { recovered: false }),
  );
  assert.deepEqual(slack, { text: '*Users "API" &lt;v2&gt;\n* fail' });

  const event = templatedPagerDuty(
    { subject: '{{test_name}} is down', body: '{{failing_assertions_count}} failing' },
    variables,
    pagerDutyEvent(facts, { routingKey: 'rk', action: 'trigger' }),
  );
  assert.equal(event.routing_key, 'rk');
  assert.equal(event.payload.summary, 'Users "API" <v2>\n is down');
  assert.deepEqual(event.payload.custom_details, { message: '2 failing' });

  const standard = runMail(facts);
  assert.deepEqual(templatedMail({ body: '{{decode_base64(test_name)}}' }, variables, standard), standard);
});
