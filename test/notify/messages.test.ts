import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pagerDutyEvent, runMail, slackMessage } from '../../src/notify/messages.js';
import type { RunFacts } from '../../src/notify/payload.js';
import { runPayload } from '../../src/notify/payload.js';
import type { TestRunRow } from '../../src/store/database.js';

const run = {
  id: 'run-1',
  test_id: 'test-1',
  bucket_key: 'bucket1',
  environment_id: 'env-1',
  environment_name: 'Prod <eu>',
  region: 'eu-west-1',
  agent: null,
  result: 'fail',
  queued_at: 1_700_000_000,
  started_at: 1_700_000_001,
  finished_at: 1_700_000_002,
  error: null,
  summary: JSON.stringify({
    requests: [
      {
        uuid: 's1',
        step_type: 'request',
        result: 'fail',
        method: 'GET',
        url: 'https://api.example.com/<x>',
        note: '',
        error: null,
        assertions: [
          {
            result: 'fail',
            source: 'response_json',
            property: 'user.name',
            comparison: 'equal',
            target_value: '<b>Ann</b>',
            actual_value: 'Bob & co',
            error: null,
          },
        ],
        scripts: [],
        variables: [],
        response_status_code: 200,
        response_time_ms: 12,
        response_size_bytes: 40,
      },
    ],
    initial_variables: { a: '1' },
    variables: { a: '1' },
  }),
} as unknown as TestRunRow;

const facts: RunFacts = {
  run,
  test: { id: 'test-1', name: 'Users "API"', trigger_id: 'trig' },
  bucket: { key: 'bucket1', name: 'Main' },
  publicUrl: 'https://vigil.example',
};

test('the mail escapes everything in HTML and names the failing assertion', () => {
  const mail = runMail(facts);
  assert.equal(mail.subject, '[Vigil] Users "API" failed (Prod <eu>, eu-west-1)');
  assert.match(mail.text, /Failing assertion: response_json user\.name equal <b>Ann<\/b>/);
  assert.match(mail.text, /Actual: Bob & co/);
  assert.ok(!/<b>|<eu>|<x>/.test(mail.html));
  assert.ok(mail.html.includes('&lt;b&gt;Ann&lt;/b&gt;'));
  assert.ok(mail.html.includes('Bob &amp; co'));
  assert.ok(mail.html.includes('Users &quot;API&quot;'));
});

test('the webhook payload counts assertions, scripts and variables per step', () => {
  const payload = runPayload(facts);
  assert.equal(payload.trigger_url, 'https://vigil.example/radar/trig/trigger');
  assert.equal(payload.test_run_url, 'https://vigil.example/buckets/bucket1/tests/test-1/results/run-1');
  assert.deepEqual(payload.requests[0]!.assertions, { pass: 0, fail: 1, total: 1 });
});

test('Slack and PagerDuty documents', () => {
  const slack = slackMessage(facts, { recovered: false });
  assert.match(slack.text, /Users "API" failed \(Prod &lt;eu&gt;, eu-west-1\)/);
  const event = pagerDutyEvent(facts, { routingKey: 'k'.repeat(32), action: 'trigger' });
  assert.equal(event.dedup_key, 'vigil-test-1-env-1-eu-west-1');
  assert.equal(event.payload.timestamp, new Date(1_700_000_002_000).toISOString());
  assert.equal(event.links[0]!.href, 'https://vigil.example/buckets/bucket1/tests/test-1/results/run-1');
});
