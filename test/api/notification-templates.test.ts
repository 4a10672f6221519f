import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { settled, startReceiver, statusCodeTest } from '../helpers/receiver.js';

/**
 * Notification templates: validated on save (naming template.subject / template.body), used in
 * place of the standard message when a run notifies (values JSON-escaped in webhook bodies), and
 * previewed against the test's newest result.
 */
const receiver = await startReceiver((delivery) => {
  const url = new URL(delivery.path, 'http://receiver');
  return { status: url.pathname === '/check' ? Number(url.searchParams.get('code') ?? 200) : 200 };
});
after(() => receiver.close());

await describeApi('notification templates', (get) => {
  const teamOf = async () =>
    (await get().call({ method: 'GET', url: '/account' })).json().data.teams[0].id as string;
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

  /** A test whose runs pass or fail by `code`. */
  const checkedTest = async (name: string, settings: Record<string, unknown>) => {
    const { test: t, run } = await statusCodeTest(get(), {
      name,
      url: '{{base}}/check?code={{code}}',
      environment: { initial_variables: { base: receiver.base, code: '200' }, ...settings },
    });
    return { t, run };
  };

  test('integration templates are validated, shown, changed and cleared', async () => {
    const h = get();
    const base = `/teams/${await teamOf()}/integrations`;
    await h.expectError(
      {
        method: 'POST',
        url: base,
        body: {
          integration_type: 'slack',
          config: { url: 'https://hooks.slack.com/x' },
          template: { body: '{{hostname}}' },
        },
      },
      400,
      'validation_failed',
      '/template/body',
    );
    await h.expectError(
      {
        method: 'POST',
        url: base,
        body: {
          integration_type: 'webhook',
          config: { url: 'https://example.com/h' },
          template: { body: '{"a": {{test_name}}}' },
        },
      },
      400,
      'validation_failed',
      '/template/body',
    );
    await h.expectError(
      {
        method: 'POST',
        url: base,
        body: {
          integration_type: 'pagerduty',
          config: { routing_key: 'abc' },
          template: { subject: '{{ result ) }}', body: 'x' },
        },
      },
      400,
      'validation_failed',
      '/template/subject',
    );
    await h.expectError(
      {
        method: 'POST',
        url: base,
        body: {
          integration_type: 'slack',
          config: { url: 'https://hooks.slack.com/x' },
          template: { body: 'x'.repeat(20_001) },
        },
      },
      400,
      'validation_failed',
    );
    const slack = await h.data('POST', base, {
      integration_type: 'slack',
      config: { url: 'https://hooks.slack.com/x' },
      template: { body: ':rotating_light: {{test_name}} {{result}}' },
    });
    assert.deepEqual(slack.template, { body: ':rotating_light: {{test_name}} {{result}}' });
    await h.expectError(
      { method: 'PUT', url: `${base}/${slack.id}`, body: { template: { subject: 'S', body: 'B' } } },
      400,
      'validation_failed',
      '/template/subject',
    );
    const changed = await h.data('PUT', `${base}/${slack.id}`, { template: { body: '{{test_name}}' } });
    assert.deepEqual(changed.template, { body: '{{test_name}}' });
    assert.deepEqual((await h.data('GET', `${base}/${slack.id}`)).template, { body: '{{test_name}}' });
    assert.equal(
      (await h.data('PUT', `${base}/${slack.id}`, { description: 'kept' })).template.body,
      '{{test_name}}',
    );
    assert.equal((await h.data('PUT', `${base}/${slack.id}`, { template: null })).template, null);
    const plain = await h.data('POST', base, {
      integration_type: 'webhook',
      config: { url: 'https://example.com/h' },
    });
    assert.equal(plain.template, null);
  });

  test('a webhook integration sends its template with JSON-escaped values; the mail uses its own', async () => {
    const h = get();
    const hook = await h.data('POST', `/teams/${await teamOf()}/integrations`, {
      integration_type: 'webhook',
      config: { url: `${receiver.base}/hook/${h.dialect}` },
      template: {
        body: '{"text": "{{test_name}} is {{result}}", "failing": "{{failing_assertions}}", "ms": {{duration_ms}}, "link": "{{result_url}}"}',
      },
    });
    const badMail = await checkedTest('Bad mail', {});
    const envUrl = `${tests()}/${badMail.t.id}/environments/${badMail.t.default_environment_id}`;
    await h.expectError(
      {
        method: 'PUT',
        url: envUrl,
        body: { emails: { recipients: [{ email: 'a@example.com' }], template: { body: '{{secret}}' } } },
      },
      400,
      'validation_failed',
      '/emails/template/body',
    );

    const name = 'Shop "checkout", \\ done';
    const { t, run } = await checkedTest(name, {
      integrations: [{ id: hook.id }],
      emails: {
        notify_on: 'failures',
        recipients: [{ email: 'ops@example.com', name: 'Ops' }],
        template: {
          subject: 'DOWN: {{test_name}} ({{environment_name}})',
          body: 'Failing:\n{{failing_assertions}}\n{{result_url}}',
        },
      },
    });
    const env = await h.data('GET', `${tests()}/${t.id}/environments/${t.default_environment_id}`);
    assert.equal(env.emails.template.subject, 'DOWN: {{test_name}} ({{environment_name}})');

    const failed = await run('500');
    assert.equal(failed.result, 'fail');
    const notifications = await settled(h, t.id, failed.test_run_id, 2);
    assert.deepEqual(
      notifications.map((n: any) => n.status),
      ['delivered', 'delivered'],
    );

    const [delivery] = receiver.at(`/hook/${h.dialect}`);
    assert.ok(delivery);
    const body = JSON.parse(delivery.body);
    assert.deepEqual(Object.keys(body), ['text', 'failing', 'ms', 'link']);
    assert.equal(body.text, `${name} is fail`);
    assert.equal(body.failing, '#1 response_status equal_number: expected 200, actual 500');
    assert.equal(typeof body.ms, 'number');
    assert.equal(
      body.link,
      `${PUBLIC_URL}/buckets/${h.alice.bucketKey}/tests/${t.id}/results/${failed.test_run_id}`,
    );
    assert.match(String(delivery.headers['x-vigil-signature']), /^sha256=[0-9a-f]{64}$/);

    const outbox = await h.data('GET', '/account/outbox?count=100');
    const mail = outbox.find((m: any) => m.run_id === failed.test_run_id);
    assert.ok(mail, 'the mail is in the outbox');
    assert.equal(mail.subject, `DOWN: ${name} (${failed.environment_name})`);
    assert.equal(
      mail.text,
      `Failing:\n#1 response_status equal_number: expected 200, actual 500\n${PUBLIC_URL}/buckets/${h.alice.bucketKey}/tests/${t.id}/results/${failed.test_run_id}`,
    );
  });

  test('preview renders against the newest result, or sample values before the first run', async () => {
    const h = get();
    const { t, run } = await checkedTest('Previewed', {});
    const url = `${tests()}/${t.id}/notification-preview`;
    const sample = await h.data(
      'POST',
      url,
      { channel: 'slack', template: { body: '{{test_name}}: {{result}}' } },
      200,
    );
    assert.equal(sample.sample, true);
    assert.equal(sample.test_run_id, null);
    assert.deepEqual(JSON.parse(sample.body), { text: 'Previewed: fail' });
    await h.expectError({ method: 'POST', url, body: { channel: 'email' } }, 409, 'conflict');

    const failed = await run('500');
    const mail = await h.data(
      'POST',
      url,
      { channel: 'email', template: { subject: '{{test_name}} {{result}}', body: '{{failing_assertions}}' } },
      200,
    );
    assert.equal(mail.test_run_id, failed.test_run_id);
    assert.equal(mail.sample, false);
    assert.equal(mail.subject, 'Previewed fail');
    assert.equal(mail.body, '#1 response_status equal_number: expected 200, actual 500');
    assert.equal(mail.content_type, 'text/plain');
    const standard = await h.data('POST', url, { channel: 'email' }, 200);
    assert.match(standard.subject, /^\[Vigil\] Previewed failed/);
    const hook = await h.data(
      'POST',
      url,
      { channel: 'webhook', template: { body: '{"n": "{{test_name}}"}' } },
      200,
    );
    assert.deepEqual(JSON.parse(hook.body), { n: 'Previewed' });
    assert.equal(hook.content_type, 'application/json');
    await h.expectError(
      { method: 'POST', url, body: { channel: 'webhook', template: { body: '{{nope}}' } } },
      400,
      'validation_failed',
      '/template/body',
    );
    await h.expectError(
      { method: 'POST', url, body: { channel: 'slack', template: { subject: 'x', body: 'y' } } },
      400,
      'validation_failed',
      '/template/subject',
    );
    await h.expectError({ method: 'POST', url, as: h.bob, body: { channel: 'email' } }, 404, 'not_found');
  });
});
