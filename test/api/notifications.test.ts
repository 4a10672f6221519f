import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { finishedRun, settled, startReceiver } from '../helpers/receiver.js';

/**
 * Webhooks (DESIGN §5): payload, signature, retries with every attempt recorded, the trigger's
 * vigil_notification_url, the signing secret, and the outbox of mails kept without SMTP_URL.
 */
const receiver = await startReceiver((delivery, count) => {
  const url = new URL(delivery.path, 'http://receiver');
  if (url.pathname.startsWith('/flaky/')) return { status: count <= 2 ? 500 : 200 };
  if (url.pathname === '/status') return { status: Number(url.searchParams.get('code') ?? 200) };
  return { status: 200, body: { ok: true } };
});
after(() => receiver.close());

const MISSING = '00000000-0000-4000-8000-000000000000';

await describeApi(
  'notifications API',
  (get) => {
    const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

    async function newTest(name: string, environment: Record<string, unknown>, code = 200) {
      const { data } = get();
      const created = await data('POST', tests(), { name });
      await data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
        initial_variables: { base: receiver.base, code: String(code) },
        ...environment,
      });
      return data('PUT', `${tests()}/${created.id}`, {
        steps: [
          {
            step_type: 'request',
            method: 'GET',
            url: '{{base}}/status?code={{code}}',
            assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
          },
        ],
      });
    }

    async function trigger(triggerUrl: string, query = '') {
      const response = await get().call({
        method: 'GET',
        url: `${triggerUrl.slice(PUBLIC_URL.length)}${query}`,
        as: null,
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().data.runs[0].test_run_id as string;
    }

    test('a webhook failing twice is retried with backoff, every attempt recorded and signed', async () => {
      const h = get();
      const tag = `w${Date.now()}`;
      const flaky = `${receiver.base}/flaky/${tag}`;
      const direct = `${receiver.base}/direct/${tag}`;
      const t = await newTest('Webhooks', { webhooks: [flaky] });
      const runId = await trigger(t.trigger_url, `?vigil_notification_url=${encodeURIComponent(direct)}`);
      const run = await finishedRun(h, t.id, runId);
      assert.equal(run.result, 'pass');
      const list = await settled(h, t.id, runId, 2);

      const byTarget = new Map(list.map((n: any) => [n.target, n]));
      const retried = byTarget.get(flaky);
      assert.equal(retried.channel, 'webhook');
      assert.equal(retried.status, 'delivered');
      assert.equal(retried.attempts, 3);
      assert.equal(retried.integration, null);
      assert.deepEqual(
        retried.deliveries.map((d: any) => [d.attempt, d.status_code]),
        [
          [1, 500],
          [2, 500],
          [3, 200],
        ],
      );
      assert.match(retried.deliveries[0].error, /HTTP 500/);
      assert.equal(retried.deliveries[2].error, null);
      assert.ok(retried.delivered_at >= retried.created_at);
      // Backoff: the second retry waits at least as long as the first (1 s, then 2 s).
      const [a, b, c] = retried.deliveries.map((d: any) => d.started_at);
      assert.ok(b - a >= 0.9 && c - b >= 1.9, `attempts at ${a}, ${b}, ${c}`);
      const direct1 = byTarget.get(direct);
      assert.equal(direct1.status, 'delivered');
      assert.equal(direct1.attempts, 1);

      const { signing_secret } = await h.data('GET', `/buckets/${h.alice.bucketKey}/signing-secret`);
      assert.match(signing_secret, /^vgl_ws_/);
      const deliveries = receiver.at(`/flaky/${tag}`);
      assert.equal(deliveries.length, 3);
      for (const delivery of deliveries) {
        assert.equal(delivery.method, 'POST');
        assert.equal(delivery.headers['content-type'], 'application/json');
        assert.equal(delivery.headers['x-vigil-event'], 'run.finished');
        assert.equal(delivery.headers['x-vigil-delivery'], retried.id);
        assert.match(String(delivery.headers['user-agent']), /^Vigil\/\d+\.\d+\.\d+/);
        const expected = `sha256=${createHmac('sha256', signing_secret).update(delivery.body).digest('hex')}`;
        assert.equal(delivery.headers['x-vigil-signature'], expected);
      }
      // The same bytes each time.
      assert.equal(new Set(deliveries.map((d) => d.body)).size, 1);

      const payload = JSON.parse(deliveries[0]!.body);
      assert.deepEqual(Object.keys(payload).sort(), [
        'agent',
        'bucket_key',
        'bucket_name',
        'environment_name',
        'environment_uuid',
        'finished_at',
        'initial_variables',
        'region',
        'requests',
        'result',
        'started_at',
        'test_id',
        'test_name',
        'test_run_id',
        'test_run_url',
        'test_url',
        'trigger_url',
        'variables',
      ]);
      assert.equal(payload.test_run_id, runId);
      assert.equal(payload.test_id, t.id);
      assert.equal(payload.test_name, 'Webhooks');
      assert.equal(payload.test_url, `${PUBLIC_URL}/buckets/${h.alice.bucketKey}/tests/${t.id}`);
      assert.equal(payload.test_run_url, `${payload.test_url}/results/${runId}`);
      assert.equal(payload.trigger_url, t.trigger_url);
      assert.equal(payload.bucket_key, h.alice.bucketKey);
      assert.equal(payload.environment_uuid, t.default_environment_id);
      assert.equal(payload.result, 'pass');
      assert.equal(payload.initial_variables.code, '200');
      assert.equal(payload.requests.length, 1);
      const [step] = payload.requests;
      assert.deepEqual(Object.keys(step).sort(), [
        'assertions',
        'method',
        'note',
        'response_size_bytes',
        'response_status_code',
        'response_time_ms',
        'result',
        'scripts',
        'step_type',
        'url',
        'variables',
      ]);
      assert.equal(step.url, `${receiver.base}/status?code=200`);
      assert.equal(step.response_status_code, 200);
      assert.deepEqual(step.assertions, { pass: 1, fail: 0, total: 1 });
      assert.deepEqual(step.scripts, { pass: 0, fail: 0, total: 0 });

      // vigil_notification_url got the same payload, signed alike.
      const [other] = receiver.at(`/direct/${tag}`);
      assert.equal(other!.body, deliveries[0]!.body);
    });

    test('a webhook that never succeeds ends failed after NOTIFY_RETRIES attempts', async () => {
      const h = get();
      const tag = `never${Date.now()}`;
      const hook = `${receiver.base}/status?code=503&tag=${tag}`;
      const t = await newTest('Never', { webhooks: [hook] });
      const runId = await trigger(t.trigger_url);
      await finishedRun(h, t.id, runId);
      const [notification] = await settled(h, t.id, runId, 1);
      assert.equal((notification as any).status, 'failed');
      assert.equal((notification as any).attempts, 3);
      assert.match((notification as any).last_error, /HTTP 503/);
    });

    test('notifications of a run: 404 for unknown and foreign runs, api:read suffices', async () => {
      const h = get();
      const t = await newTest('Quiet', {});
      const runId = await trigger(t.trigger_url);
      await finishedRun(h, t.id, runId);
      const url = `${tests()}/${t.id}/results/${runId}/notifications`;
      const reader = await h.tokenWith(['api:read']);
      const response = await h.call({ method: 'GET', url, as: reader });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json().data, []);
      await h.expectError(
        { method: 'GET', url: `${tests()}/${t.id}/results/${MISSING}/notifications` },
        404,
        'not_found',
      );
      await h.expectError({ method: 'GET', url, as: h.bob }, 404, 'not_found');
    });

    test('signing secret: bucket:write to read or rotate, 404 for a foreign bucket', async () => {
      const h = get();
      const url = `/buckets/${h.alice.bucketKey}/signing-secret`;
      const first = (await h.data('GET', url)).signing_secret;
      const reader = await h.tokenWith(['api:read']);
      await h.expectError({ method: 'GET', url, as: reader }, 403, 'forbidden');
      await h.expectError({ method: 'POST', url, as: reader }, 403, 'forbidden');
      const rotated = (await h.data('POST', url, undefined, 200)).signing_secret;
      assert.match(rotated, /^vgl_ws_/);
      assert.notEqual(rotated, first);
      assert.equal((await h.data('GET', url)).signing_secret, rotated);
      await h.expectError({ method: 'GET', url, as: h.bob }, 404, 'not_found');
      await h.expectError({ method: 'POST', url, as: h.bob }, 404, 'not_found');
    });

    test('without SMTP_URL mails go to the outbox, readable at GET /account/outbox', async () => {
      const h = get();
      const t = await newTest(
        'Outboxed',
        {
          emails: {
            notify_on: 'failures',
            recipients: [{ email: 'ops@example.com', name: 'Ops' }],
          },
          webhooks: [`${receiver.base}/ok`],
        },
        500,
      );
      const runId = await trigger(t.trigger_url);
      assert.equal((await finishedRun(h, t.id, runId)).result, 'fail');
      const list = await settled(h, t.id, runId, 2);
      const mail = list.find((n: any) => n.channel === 'email') as any;
      assert.equal(mail.status, 'delivered');
      assert.equal(mail.target, 'ops@example.com');

      const outbox = await h.data('GET', '/account/outbox');
      const kept = outbox.find((m: any) => m.run_id === runId);
      assert.ok(kept, JSON.stringify(outbox));
      assert.deepEqual(kept.recipients, [{ email: 'ops@example.com', name: 'Ops' }]);
      assert.match(kept.subject, /Outboxed failed/);
      assert.match(kept.text, /Expected: 200/);
      assert.match(kept.text, /Actual: 500/);
      assert.match(kept.html, /<td>200<\/td>/);

      const noEmail = await h.tokenWith(['api:read']);
      const masked = (await h.call({ method: 'GET', url: '/account/outbox', as: noEmail })).json().data;
      assert.deepEqual(masked.find((m: any) => m.run_id === runId).recipients, [{ email: '', name: 'Ops' }]);
      assert.deepEqual((await h.call({ method: 'GET', url: '/account/outbox', as: h.bob })).json().data, []);

      // Paging: count and before.
      const second = await trigger(t.trigger_url);
      await finishedRun(h, t.id, second);
      await settled(h, t.id, second, 2);
      const newest = await h.data('GET', '/account/outbox?count=1');
      assert.equal(newest.length, 1);
      assert.equal(newest[0].run_id, second);
      const older = await h.data('GET', `/account/outbox?count=1&before=${newest[0].created_at}`);
      assert.equal(older[0].run_id, runId);
      await h.expectError(
        { method: 'GET', url: '/account/outbox?count=0' },
        400,
        'validation_failed',
        '?count',
      );
    });
  },
  { env: { NOTIFY_RETRY_DELAY: '1', NOTIFY_RETRIES: '2' } },
);

await describeApi(
  'notifications under EGRESS_POLICY=public-only',
  (get) => {
    test('a webhook to a loopback address is refused and recorded as a failed attempt', async () => {
      const h = get();
      const tests = `/buckets/${h.alice.bucketKey}/tests`;
      const created = await h.data('POST', tests, { name: 'Egress' });
      const hook = `${receiver.base}/egress/${h.dialect}`;
      await h.data('PUT', `${tests}/${created.id}/environments/${created.default_environment_id}`, {
        webhooks: [hook],
      });
      const started = await h.data('POST', `${tests}/${created.id}/runs`, {});
      const runId = started.runs[0].test_run_id;
      await finishedRun(h, created.id, runId);
      const [notification] = (await settled(h, created.id, runId, 1)) as any[];
      assert.equal(notification.status, 'failed');
      assert.equal(notification.attempts, 1);
      assert.equal(notification.deliveries.length, 1);
      assert.equal(notification.deliveries[0].status_code, null);
      assert.match(notification.deliveries[0].error, /egress policy.*loopback/);
      assert.equal(receiver.at(`/egress/${h.dialect}`).length, 0);
    });
  },
  { env: { EGRESS_POLICY: 'public-only', NOTIFY_RETRY_DELAY: '1' } },
);
