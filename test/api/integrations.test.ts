import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { finishedRun, settled, startReceiver } from '../helpers/receiver.js';

/**
 * Integrations (DESIGN §5): CRUD, validation naming the field, secrets masked, other teams' ones
 * invisible; Slack and PagerDuty messages on failure and recovery; the browser-test partner.
 */
const receiver = await startReceiver((delivery) => {
  const url = new URL(delivery.path, 'http://receiver');
  if (url.pathname === '/status') return { status: Number(url.searchParams.get('code') ?? 200) };
  const partner = /^\/partner\/suites\/([^/]+)\/tests\/([^/]+)\/runs$/.exec(url.pathname);
  if (partner) {
    if (delivery.headers.authorization !== 'Bearer pk_live_secret_1234') return { status: 401 };
    const passed = partner[2] === 'checkout';
    return {
      status: 200,
      body: {
        passed,
        result: { steps: [{ name: 'cart' }, { name: 'pay' }] },
        url: 'https://partner.example/r/1',
      },
    };
  }
  return { status: url.pathname === '/pagerduty' ? 202 : 200 };
});
after(() => receiver.close());

const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';
const ROUTING_KEY = 'R0123456789abcdef0123456789abcdE';

await describeApi(
  'integrations API',
  (get) => {
    const teamOf = async (as = get().alice) =>
      (await get().call({ method: 'GET', url: '/account', as })).json().data.teams[0].id as string;
    const integrations = (teamId: string) => `/teams/${teamId}/integrations`;
    const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

    test('CRUD with masked secrets; 404 for another team', async () => {
      const h = get();
      const team = await teamOf();
      const slack = await h.data('POST', integrations(team), {
        integration_type: 'slack',
        description: 'Ops channel',
        config: { url: SLACK },
      });
      assert.equal(slack.integration_type, 'slack');
      assert.equal(slack.team_id, team);
      assert.deepEqual(slack.config, { url: 'https://hooks.slack.com/…' });
      assert.ok(!JSON.stringify(slack).includes('XXXXSECRET'));
      const pd = await h.data('POST', integrations(team), {
        integration_type: 'pagerduty',
        description: 'On call',
        config: { routing_key: ROUTING_KEY },
      });
      assert.deepEqual(pd.config, { routing_key: '…bcdE' });
      const hook = await h.data('POST', integrations(team), {
        integration_type: 'webhook',
        config: { url: 'https://example.com/hook', secret: 'whsec_abcdef' },
      });
      assert.deepEqual(hook.config, { url: 'https://example.com/hook', secret: '…cdef' });
      assert.equal(hook.description, '');
      const partner = await h.data('POST', integrations(team), {
        integration_type: 'partner-inspector',
        description: 'Browser tests',
        config: { base_url: 'https://partner.example/api', api_key: 'pk_live_secret_1234' },
      });
      assert.deepEqual(partner.config, { base_url: 'https://partner.example/api', api_key: '…1234' });

      const list = await h.data('GET', integrations(team));
      assert.deepEqual(
        list.filter((i: any) => [slack.id, pd.id, hook.id, partner.id].includes(i.id)),
        [slack, pd, hook, partner],
      );
      assert.ok(!JSON.stringify(list).includes(ROUTING_KEY));
      assert.deepEqual(await h.data('GET', `${integrations(team)}/${pd.id}`), pd);

      // Another team sees nothing and can change nothing.
      const bobTeam = await teamOf(h.bob);
      for (const request of [
        { method: 'GET' as const, url: integrations(team) },
        { method: 'GET' as const, url: `${integrations(team)}/${pd.id}` },
        { method: 'DELETE' as const, url: `${integrations(team)}/${pd.id}` },
        {
          method: 'POST' as const,
          url: integrations(team),
          body: { integration_type: 'slack', config: { url: SLACK } },
        },
      ]) {
        await h.expectError({ ...request, as: h.bob }, 404, 'not_found');
      }
      await h.expectError(
        { method: 'GET', url: `${integrations(bobTeam)}/${pd.id}`, as: h.bob },
        404,
        'not_found',
      );

      // Scopes: api:read reads, bucket:write writes.
      const reader = await h.tokenWith(['api:read']);
      assert.equal((await h.call({ method: 'GET', url: integrations(team), as: reader })).statusCode, 200);
      await h.expectError(
        {
          method: 'POST',
          url: integrations(team),
          as: reader,
          body: { integration_type: 'slack', config: { url: SLACK } },
        },
        403,
        'forbidden',
      );

      const del = await h.call({ method: 'DELETE', url: `${integrations(team)}/${pd.id}` });
      assert.equal(del.statusCode, 204);
      await h.expectError({ method: 'GET', url: `${integrations(team)}/${pd.id}` }, 404, 'not_found');
      await h.expectError({ method: 'DELETE', url: `${integrations(team)}/${pd.id}` }, 404, 'not_found');
    });

    test('validation names the field', async () => {
      const h = get();
      const url = integrations(await teamOf());
      const cases: [unknown, string][] = [
        [{ integration_type: 'slack', config: { url: 'http://hooks.slack.com/x' } }, '/config/url'],
        [{ integration_type: 'slack', config: {} }, '/config/url'],
        [{ integration_type: 'pagerduty', config: { routing_key: 'has space' } }, '/config/routing_key'],
        [{ integration_type: 'pagerduty', config: { routing_key: 'a'.repeat(65) } }, '/config/routing_key'],
        [{ integration_type: 'webhook', config: { url: 'ftp://x' } }, '/config/url'],
        [
          { integration_type: 'partner-inspector', config: { base_url: 'https://p.example' } },
          '/config/api_key',
        ],
        [{ integration_type: 'carrier-pigeon', config: {} }, '/integration_type'],
        [{ integration_type: 'slack', description: 5, config: { url: SLACK } }, '/description'],
      ];
      for (const [body, field] of cases) {
        const error = await h.expectError({ method: 'POST', url, body }, 400, 'validation_failed');
        assert.ok(error.message.includes(field), `${JSON.stringify(body)}: ${error.message}`);
      }
    });

    test('Slack and PagerDuty hear of a failure (trigger) and of the recovery (resolve)', async () => {
      const h = get();
      const team = await teamOf();
      const slack = await h.data('POST', integrations(team), {
        integration_type: 'slack',
        description: 'Alerts',
        config: { url: SLACK },
      });
      // Slack only takes https URLs; the stored one points at the local fake.
      await h.store.db
        .updateTable('integrations')
        .set({ config: JSON.stringify({ url: `${receiver.base}/slack/${h.dialect}` }) })
        .where('id', '=', slack.id)
        .execute();
      const pd = await h.data('POST', integrations(team), {
        integration_type: 'pagerduty',
        description: 'Pager',
        config: { routing_key: ROUTING_KEY },
      });
      const bobPartner = await h.call({
        method: 'POST',
        url: integrations(await teamOf(h.bob)),
        as: h.bob,
        body: { integration_type: 'slack', config: { url: SLACK } },
      });
      const created = await h.data('POST', tests(), { name: 'Alerting' });
      await h.data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
        initial_variables: { base: receiver.base, code: '500' },
        integrations: [{ id: slack.id }, { id: pd.id }, { id: bobPartner.json().data.id }],
      });
      const t = await h.data('PUT', `${tests()}/${created.id}`, {
        steps: [
          {
            step_type: 'request',
            method: 'GET',
            url: '{{base}}/status?code={{code}}',
            assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
          },
        ],
      });
      const run = async (code: string) => {
        const response = await h.call({
          method: 'GET',
          url: `${t.trigger_url.slice(PUBLIC_URL.length)}?code=${code}`,
          as: null,
        });
        const runId = response.json().data.runs[0].test_run_id;
        await finishedRun(h, t.id, runId);
        return runId as string;
      };
      const failed = await run('500');
      const failedList = await settled(h, t.id, failed, 2);
      assert.deepEqual(failedList.map((n: any) => n.channel).sort(), ['pagerduty', 'slack']);
      for (const n of failedList as any[]) {
        assert.equal(n.status, 'delivered', JSON.stringify(n));
        assert.equal(n.integration.id, n.target);
        assert.ok(!JSON.stringify(n).includes(ROUTING_KEY));
      }
      const passed = await run('200');
      await settled(h, t.id, passed, 2);
      const quiet = await run('200');
      await finishedRun(h, t.id, quiet);

      const slackMessages = receiver.at(`/slack/${h.dialect}`).map((d) => JSON.parse(d.body));
      assert.equal(slackMessages.length, 2);
      assert.match(slackMessages[0].text, /Alerting failed/);
      assert.ok(Array.isArray(slackMessages[0].blocks));
      assert.match(JSON.stringify(slackMessages[0].blocks), /Expected\*\\n200/);
      assert.match(slackMessages[1].text, /passes again/);

      const events = receiver
        .at('/pagerduty')
        .map((d) => JSON.parse(d.body))
        .filter((e) => e.dedup_key.includes(t.id));
      assert.equal(events.length, 2);
      const dedup = `vigil-${t.id}-${t.default_environment_id}-local`;
      assert.deepEqual(
        events.map((e) => [e.event_action, e.dedup_key, e.routing_key]),
        [
          ['trigger', dedup, ROUTING_KEY],
          ['resolve', dedup, ROUTING_KEY],
        ],
      );
      assert.equal(events[0].payload.source, 'vigil');
      assert.equal(events[0].payload.severity, 'error');
      assert.match(events[0].payload.summary, /Alerting failed/);
      assert.ok(!Number.isNaN(Date.parse(events[0].payload.timestamp)));
      assert.equal(events[0].payload.custom_details.Actual, '500');
      assert.equal(
        events[0].links[0].href,
        `${t.test_url ?? `${PUBLIC_URL}/buckets/${h.alice.bucketKey}/tests/${t.id}`}/results/${failed}`,
      );
    });

    test('a webhook integration gets the run payload signed with its own secret', async () => {
      const h = get();
      const team = await teamOf();
      const own = await h.data('POST', integrations(team), {
        integration_type: 'webhook',
        config: { url: `${receiver.base}/team-hook/${h.dialect}/own`, secret: 'whsec_team_secret' },
      });
      const plain = await h.data('POST', integrations(team), {
        integration_type: 'webhook',
        config: { url: `${receiver.base}/team-hook/${h.dialect}/plain` },
      });
      const deleted = await h.data('POST', integrations(team), {
        integration_type: 'webhook',
        config: { url: `${receiver.base}/team-hook/${h.dialect}/deleted` },
      });
      await h.call({ method: 'DELETE', url: `${integrations(team)}/${deleted.id}` });
      const created = await h.data('POST', tests(), { name: 'Team hook' });
      await h.data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
        integrations: [{ id: own.id }, { id: plain.id }, { id: deleted.id }],
      });
      const started = await h.data('POST', `${tests()}/${created.id}/runs`, {});
      const runId = started.runs[0].test_run_id;
      await finishedRun(h, created.id, runId);
      const list = (await settled(h, created.id, runId, 2)) as any[];
      assert.deepEqual(
        list.map((n) => n.channel),
        ['integration-webhook', 'integration-webhook'],
      );
      assert.deepEqual(
        list.map((n) => n.status),
        ['delivered', 'delivered'],
      );
      const { signing_secret } = await h.data('GET', `/buckets/${h.alice.bucketKey}/signing-secret`);
      const sign = (body: string, key: string) =>
        `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
      const [ownDelivery] = receiver.at(`/team-hook/${h.dialect}/own`);
      const [plainDelivery] = receiver.at(`/team-hook/${h.dialect}/plain`);
      assert.equal(ownDelivery!.headers['x-vigil-signature'], sign(ownDelivery!.body, 'whsec_team_secret'));
      assert.equal(plainDelivery!.headers['x-vigil-signature'], sign(plainDelivery!.body, signing_secret));
      assert.equal(JSON.parse(ownDelivery!.body).test_run_id, runId);
      assert.equal(receiver.at(`/team-hook/${h.dialect}/deleted`).length, 0);
    });

    test('notify_on limits a webhook integration like e-mail; PUT changes it; bad values name the field', async () => {
      const h = get();
      const team = await teamOf();
      const created = await h.data('POST', integrations(team), {
        integration_type: 'webhook',
        config: { url: `${receiver.base}/limited-hook/${h.dialect}` },
        notify_on: 'switch',
      });
      assert.equal(created.notify_on, 'switch');
      assert.equal(created.notify_threshold, null);
      const every = await h.data('POST', integrations(team), {
        integration_type: 'webhook',
        config: { url: `${receiver.base}/every-hook/${h.dialect}` },
      });
      assert.equal(every.notify_on, null, 'unset: every finished run, as before');
      const made = await h.data('POST', tests(), { name: 'Limited hook' });
      await h.data('PUT', `${tests()}/${made.id}/environments/${made.default_environment_id}`, {
        initial_variables: { base: receiver.base },
        integrations: [{ id: created.id }, { id: every.id }],
      });
      const t = await h.data('PUT', `${tests()}/${made.id}`, {
        steps: [
          {
            step_type: 'request',
            method: 'GET',
            url: '{{base}}/status?code={{code}}',
            assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
          },
        ],
      });
      const run = async (code: string, notifications: number) => {
        const response = await h.call({
          method: 'GET',
          url: `${t.trigger_url.slice(PUBLIC_URL.length)}?code=${code}`,
          as: null,
        });
        const runId = response.json().data.runs[0].test_run_id as string;
        await finishedRun(h, t.id, runId);
        // A run's notifications are planned together: the count is final once one is there.
        await settled(h, t.id, runId, notifications);
        return runId;
      };
      await run('200', 1); // a first pass: no change
      const failed = await run('500', 2); // pass → fail
      await run('500', 1); // still failing
      const recovered = await run('200', 2); // fail → pass
      const limited = receiver.at(`/limited-hook/${h.dialect}`).map((d) => JSON.parse(d.body).test_run_id);
      assert.deepEqual(limited, [failed, recovered]);
      assert.equal(receiver.at(`/every-hook/${h.dialect}`).length, 4);

      const url = `${integrations(team)}/${every.id}`;
      const changed = await h.data('PUT', url, { notify_on: 'threshold', notify_threshold: 3 });
      assert.equal(changed.notify_on, 'threshold');
      assert.equal(changed.notify_threshold, 3);
      assert.deepEqual(await h.data('GET', url), changed);
      const back = await h.data('PUT', url, { notify_on: null, notify_threshold: null });
      assert.equal(back.notify_on, null);
      assert.equal(back.config.url, every.config.url, 'the configuration stays');

      const partner = await h.data('POST', integrations(team), {
        integration_type: 'partner-inspector',
        config: { base_url: 'https://p.example', api_key: 'pk_1234' },
      });
      const cases: ['PUT' | 'POST', string, unknown, string][] = [
        ['PUT', url, { notify_on: 'sometimes' }, '/notify_on'],
        ['PUT', url, { notify_threshold: 0 }, '/notify_threshold'],
        ['PUT', `${integrations(team)}/${partner.id}`, { notify_on: 'all' }, '/notify_on'],
        [
          'POST',
          integrations(team),
          { integration_type: 'webhook', config: { url: receiver.base }, notify_on: 'rarely' },
          '/notify_on',
        ],
      ];
      for (const [method, path, body, field] of cases) {
        const error = await h.expectError({ method, url: path, body }, 400, 'validation_failed');
        assert.ok(error.message.includes(field), `${JSON.stringify(body)}: ${error.message}`);
      }
    });

    test('a partner-inspector step runs through the team integration', async () => {
      const h = get();
      const team = await teamOf();
      const partner = await h.data('POST', integrations(team), {
        integration_type: 'partner-inspector',
        config: { base_url: `${receiver.base}/partner`, api_key: 'pk_live_secret_1234' },
      });
      const foreign = await h.call({
        method: 'POST',
        url: integrations(await teamOf(h.bob)),
        as: h.bob,
        body: {
          integration_type: 'partner-inspector',
          config: { base_url: `${receiver.base}/partner`, api_key: 'pk_live_secret_1234' },
        },
      });
      const created = await h.data('POST', tests(), { name: 'Browser' });
      const t = await h.data('PUT', `${tests()}/${created.id}`, {
        steps: [
          {
            step_type: 'partner-inspector',
            integration_id: partner.id,
            suite_id: `suite-${h.dialect}`,
            test_id: 'checkout',
            is_custom_start_url: true,
            start_url: 'https://shop.example/start',
            assertions: [
              { source: 'response_json', property: 'steps[-1].name', comparison: 'equal', value: 'pay' },
            ],
          },
          {
            step_type: 'partner-inspector',
            integration_id: foreign.json().data.id,
            suite_id: 'suite-1',
            test_id: 'checkout',
          },
        ],
      });
      const response = await h.data('POST', `${tests()}/${t.id}/runs`, {});
      const run = await finishedRun(h, t.id, response.runs[0].test_run_id);
      const [own, other] = run.requests;
      assert.equal(own.result, 'pass', JSON.stringify(own));
      assert.match(own.note, /passed \(https:\/\/partner\.example\/r\/1\)/);
      assert.equal(other.result, 'fail');
      assert.match(other.error, /no partner-inspector integration .* in this team/);
      const calls = receiver.at(`/partner/suites/suite-${h.dialect}/`);
      assert.equal(calls.length, 1);
      assert.equal(calls[0]!.path, `/partner/suites/suite-${h.dialect}/tests/checkout/runs`);
      assert.deepEqual(JSON.parse(calls[0]!.body), { start_url: 'https://shop.example/start' });
    });
  },
  { env: { NOTIFY_RETRY_DELAY: '1', PAGERDUTY_EVENTS_URL: `${receiver.base}/pagerduty` } },
);
