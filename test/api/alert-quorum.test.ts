import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { eventually, finishedRun, startReceiver } from '../helpers/receiver.js';

/**
 * Alert quorum across regions: the runs one start fans out to its regions form a round; under a
 * quorum the round notifies once, when complete, and only as failed when enough regions failed.
 * The upstream fails the regions named in the path: `/q/<failing regions, comma separated>/<region>`.
 */
const receiver = await startReceiver((delivery) => {
  const [, kind, failing = '', region = ''] = delivery.path.split('/');
  if (kind === 'q') return { status: failing.split(',').includes(region) ? 500 : 200 };
  return { status: 200 };
});
after(() => receiver.close());

await describeApi('alert quorum', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

  async function regionalTest(
    name: string,
    failing: string,
    settings: Record<string, unknown>,
  ): Promise<{ id: string; trigger_url: string; default_environment_id: string }> {
    const { data } = get();
    const created = await data('POST', tests(), { name });
    await data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
      initial_variables: { base: receiver.base, failing },
      regions: ['eu-a', 'us-b'],
      webhooks: [`${receiver.base}/hook/${created.id}`],
      emails: { notify_on: 'failures', recipients: [{ email: 'oncall@example.com' }] },
      ...settings,
    });
    return data('PUT', `${tests()}/${created.id}`, {
      steps: [
        {
          step_type: 'request',
          method: 'GET',
          url: '{{base}}/q/{{failing}}/{{vigil_region}}',
          assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
        },
      ],
    });
  }

  /** Triggers the test and waits until both runs finished; answers their ids and round id. */
  async function runRound(t: { id: string; trigger_url: string }) {
    const h = get();
    const response = await h.call({ method: 'GET', url: t.trigger_url.slice(PUBLIC_URL.length), as: null });
    assert.equal(response.statusCode, 201, response.body);
    const ids = (response.json().data.runs as { test_run_id: string }[]).map((r) => r.test_run_id);
    assert.equal(ids.length, 2);
    const runs = [];
    for (const id of ids) runs.push(await finishedRun(h, t.id, id));
    const rows = await h.store.db
      .selectFrom('test_runs')
      .select(['id', 'round_id'])
      .where('id', 'in', ids)
      .execute();
    const roundId = rows[0]!.round_id;
    assert.ok(roundId, 'the runs of one start share a round');
    assert.ok(rows.every((row) => row.round_id === roundId));
    return { ids, runs, roundId };
  }

  /** The notifications of the runs once every queued notify-run job is done. */
  async function notificationsOf(ids: string[], expected: number) {
    const h = get();
    return eventually(`${expected} notifications`, async () => {
      const rows = await h.store.db
        .selectFrom('notifications')
        .selectAll()
        .where('run_id', 'in', ids)
        .orderBy('channel')
        .execute();
      return rows.length === expected ? rows : undefined;
    });
  }

  const roundDecided = (roundId: string) =>
    eventually(`round ${roundId} decided`, () =>
      get()
        .store.db.selectFrom('alert_rounds')
        .selectAll()
        .where('round_id', '=', roundId)
        .executeTakeFirst(),
    );

  test('quorum 1 keeps notifying per run: every run its webhook, the failed one its mail', async () => {
    const t = await regionalTest('Quorum one', 'eu-a', {});
    const { ids, runs } = await runRound(t);
    assert.deepEqual(runs.map((r) => r.result).sort(), ['fail', 'pass']);
    const rows = await notificationsOf(ids, 3);
    assert.deepEqual(
      rows.map((r) => r.channel),
      ['email', 'webhook', 'webhook'],
    );
    const decided = await get().store.db.selectFrom('alert_rounds').selectAll().execute();
    assert.ok(!decided.some((row) => ids.includes(row.run_id)), 'quorum 1 decides no round');
  });

  test('quorum 2 with one region failing: the round passes, no alert, one webhook naming the regions', async () => {
    const t = await regionalTest('Quorum two, one failing', 'eu-a', { alert_quorum: 2 });
    const { ids, roundId } = await runRound(t);
    const round = await roundDecided(roundId);
    assert.equal(round.result, 'pass');
    assert.deepEqual(JSON.parse(round.failed_regions), ['eu-a']);
    assert.deepEqual(JSON.parse(round.passed_regions), ['us-b']);
    const rows = await notificationsOf(ids, 1);
    assert.equal(rows[0]!.channel, 'webhook');
    const payload = JSON.parse(rows[0]!.body);
    assert.equal(payload.result, 'pass');
    assert.deepEqual(payload.round, {
      round_id: roundId,
      quorum: 2,
      result: 'pass',
      failed_regions: ['eu-a'],
      passed_regions: ['us-b'],
    });
  });

  test('quorum 2 with both regions failing: exactly one alert per channel, naming both regions', async () => {
    const t = await regionalTest('Quorum two, both failing', 'eu-a,us-b', { alert_quorum: 2 });
    const { ids, roundId } = await runRound(t);
    const round = await roundDecided(roundId);
    assert.equal(round.result, 'fail');
    const rows = await notificationsOf(ids, 2);
    assert.deepEqual(
      rows.map((r) => r.channel),
      ['email', 'webhook'],
    );
    assert.ok(rows.every((r) => r.run_id === round.run_id));
    const payload = JSON.parse(rows.find((r) => r.channel === 'webhook')!.body);
    assert.equal(payload.result, 'fail');
    assert.deepEqual(payload.round.failed_regions.sort(), ['eu-a', 'us-b']);
    assert.deepEqual(payload.round.passed_regions, []);
    const mail = JSON.parse(rows.find((r) => r.channel === 'email')!.body);
    assert.match(mail.text, /Failed regions: (eu-a, us-b|us-b, eu-a)/);
    assert.match(mail.subject, /failed in/);

    // Planning again, concurrently for both runs (as two workers would), adds nothing.
    const { notifications } = get().server.services;
    const again = await Promise.all([...ids, ...ids].map((id) => notifications.planRun(id)));
    assert.deepEqual(again, [0, 0, 0, 0]);
    await notificationsOf(ids, 2);
  });

  /**
   * A round of a test that notifies nobody while it runs (so no notify-run job is under way), then
   * gets a mail recipient: the test drives the planning itself.
   */
  async function quietRound(name: string) {
    const silent = { alert_quorum: 2, webhooks: null, emails: { notify_on: 'failures', recipients: [] } };
    const t = await regionalTest(name, 'eu-a,us-b', silent);
    const round = await runRound(t);
    const { data } = get();
    await data('PUT', `${tests()}/${t.id}/environments/${t.default_environment_id}`, {
      emails: { notify_on: 'failures', recipients: [{ email: 'oncall@example.com' }] },
    });
    return round;
  }

  test('two planners deciding one complete round at once: one wins, the notifications exist once', async () => {
    const h = get();
    const { ids, roundId } = await quietRound('Quorum race');
    const { notifications } = h.server.services;
    const planned = await Promise.all(ids.map((id) => notifications.planRun(id)));
    assert.deepEqual(planned.sort(), [0, 1]);
    const rounds = await h.store.db
      .selectFrom('alert_rounds')
      .selectAll()
      .where('round_id', '=', roundId)
      .execute();
    assert.equal(rounds.length, 1);
    assert.equal(rounds[0]!.result, 'fail');
    await notificationsOf(ids, 1);
  });

  test('a round is not decided while one of its runs is still working', async () => {
    const h = get();
    const { ids, roundId } = await quietRound('Quorum pending');
    await h.store.db.updateTable('test_runs').set({ result: 'working' }).where('id', '=', ids[1]!).execute();
    assert.equal(await h.server.services.notifications.planRun(ids[0]!), 0);
    const rounds = await h.store.db
      .selectFrom('alert_rounds')
      .selectAll()
      .where('round_id', '=', roundId)
      .execute();
    assert.equal(rounds.length, 0);
    await h.store.db.updateTable('test_runs').set({ result: 'fail' }).where('id', '=', ids[1]!).execute();
    assert.equal(await h.server.services.notifications.planRun(ids[1]!), 1);
    assert.equal(await h.server.services.notifications.planRun(ids[0]!), 0);
  });

  test('a single-region run has no round and notifies as today whatever the quorum', async () => {
    const t = await regionalTest('Quorum single', 'eu-a', { alert_quorum: 3, regions: ['eu-a'] });
    const h = get();
    const response = await h.call({ method: 'GET', url: t.trigger_url.slice(PUBLIC_URL.length), as: null });
    const id = response.json().data.runs[0].test_run_id as string;
    const run = await finishedRun(h, t.id, id);
    assert.equal(run.result, 'fail');
    const row = await h.store.db
      .selectFrom('test_runs')
      .select('round_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.round_id, null);
    await notificationsOf([id], 2);
  });
});
