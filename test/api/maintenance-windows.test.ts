import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { eventually, finishedRun, startReceiver } from '../helpers/receiver.js';

/** Maintenance windows: the API, and what they do to scheduled runs and their notifications. */
const receiver = await startReceiver();
after(() => receiver.close());

const MISSING = '00000000-0000-4000-8000-000000000000';

await describeApi('maintenance windows API', (get) => {
  const windows = (key = get().alice.bucketKey) => `/buckets/${key}/maintenance_windows`;
  const now = () => Date.now() / 1000;

  async function notifyingTest(name: string) {
    const { data, alice } = get();
    const tests = `/buckets/${alice.bucketKey}/tests`;
    const created = await data('POST', tests, { name });
    await data('PUT', `${tests}/${created.id}/environments/${created.default_environment_id}`, {
      webhooks: [`${receiver.base}/hook/${created.id}`],
    });
    await data('PUT', `${tests}/${created.id}`, {
      steps: [{ step_type: 'request', method: 'GET', url: `${receiver.base}/ok` }],
    });
    return created as { id: string; default_environment_id: string };
  }

  test('create, read, list, change and delete a window', async () => {
    const { data } = get();
    const weekly = {
      days: ['sat', 'sun'],
      start_time: '22:00',
      duration_minutes: 240,
      time_zone: 'Europe/Berlin',
    };
    const created = await data('POST', windows(), { mode: 'mute', note: 'DB upgrade', weekly });
    assert.equal(created.mode, 'mute');
    assert.equal(created.test_id, null);
    assert.deepEqual(created.weekly, weekly);
    assert.equal(created.starts_at, null);
    assert.equal(typeof created.active, 'boolean');
    assert.deepEqual(await data('GET', `${windows()}/${created.id}`), created);
    assert.ok((await data('GET', windows())).some((w: { id: string }) => w.id === created.id));

    const changed = await data('PUT', `${windows()}/${created.id}`, {
      mode: 'pause',
      starts_at: now() - 60,
      ends_at: now() + 3600,
    });
    assert.equal(changed.mode, 'pause');
    assert.equal(changed.weekly, null);
    assert.equal(changed.active, true);
    assert.equal(changed.note, 'DB upgrade');

    const response = await get().call({ method: 'DELETE', url: `${windows()}/${created.id}` });
    assert.equal(response.statusCode, 204);
    await get().expectError({ method: 'GET', url: `${windows()}/${created.id}` }, 404, 'not_found');
  });

  test('bad input answers 400 naming the field', async () => {
    const { expectError } = get();
    const post = (body: unknown, field: string) =>
      expectError({ method: 'POST', url: windows(), body }, 400, 'validation_failed', field);
    await post({ mode: 'sleep', starts_at: 1, ends_at: 2 }, '/mode');
    await post({ mode: 'mute' }, '/starts_at');
    await post({ mode: 'mute', starts_at: 10, ends_at: 5 }, '/ends_at');
    await post(
      { mode: 'mute', weekly: { days: ['sun'], start_time: '25:00', duration_minutes: 5, time_zone: 'UTC' } },
      '/weekly/start_time',
    );
    await post(
      {
        mode: 'mute',
        weekly: { days: ['someday'], start_time: '01:00', duration_minutes: 5, time_zone: 'UTC' },
      },
      '/weekly/days/0',
    );
    await post(
      {
        mode: 'mute',
        weekly: { days: ['sun'], start_time: '01:00', duration_minutes: 5, time_zone: 'Mars/Olympus' },
      },
      '/weekly/time_zone',
    );
    await post(
      {
        mode: 'mute',
        starts_at: 1,
        ends_at: 2,
        weekly: { days: ['sun'], start_time: '01:00', duration_minutes: 5, time_zone: 'UTC' },
      },
      '/weekly',
    );
    await post({ mode: 'mute', starts_at: 1, ends_at: 2, test_id: MISSING }, '/test_id');
  });

  test('another account sees 404; a token without test:write gets 403', async () => {
    const { data, alice, bob, call, expectError, tokenWith } = get();
    const created = await data('POST', windows(), { mode: 'mute', starts_at: 1, ends_at: 2 });
    await expectError({ method: 'GET', url: `${windows()}/${created.id}`, as: bob }, 404, 'not_found');
    await expectError({ method: 'GET', url: windows(alice.bucketKey), as: bob }, 404, 'not_found');
    const readOnly = await tokenWith(['api:read']);
    const response = await call({
      method: 'POST',
      url: windows(),
      body: { mode: 'mute', starts_at: 1, ends_at: 2 },
      as: readOnly,
    });
    assert.equal(response.statusCode, 403);
    assert.equal((await call({ method: 'GET', url: windows(), as: readOnly })).statusCode, 200);
  });

  test('a mute window: runs carry in_maintenance and send no notification', async () => {
    const { data, alice, store } = get();
    const t = await notifyingTest('Muted');
    const window = await data('POST', windows(), {
      mode: 'mute',
      test_id: t.id,
      starts_at: now() - 60,
      ends_at: now() + 3600,
    });
    const started = await data('POST', `/buckets/${alice.bucketKey}/tests/${t.id}/runs`, {});
    const runId = started.runs[0].test_run_id as string;
    const run = await finishedRun(get(), t.id, runId);
    assert.equal(run.in_maintenance, true);
    // Planning the run (what its notify-run job does) plans nothing.
    assert.equal(await get().server.services.notifications.planRun(runId), 0);
    const rows = await store.db.selectFrom('notifications').selectAll().where('run_id', '=', runId).execute();
    assert.equal(rows.length, 0);

    // Without the window the next run notifies as usual.
    await get().call({ method: 'DELETE', url: `${windows()}/${window.id}` });
    const next = await data('POST', `/buckets/${alice.bucketKey}/tests/${t.id}/runs`, {});
    const nextId = next.runs[0].test_run_id as string;
    assert.equal((await finishedRun(get(), t.id, nextId)).in_maintenance, false);
    await eventually('the webhook planned', async () => {
      const planned = await store.db
        .selectFrom('notifications')
        .selectAll()
        .where('run_id', '=', nextId)
        .execute();
      return planned.length === 1 ? true : undefined;
    });
  });

  test('a pause window: the schedule starts no run; other tests of the bucket still run', async () => {
    const { data, server, store } = get();
    const paused = await notifyingTest('Paused');
    const other = await notifyingTest('Not paused');
    await data('POST', windows(), {
      mode: 'pause',
      test_id: paused.id,
      weekly: {
        days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
        start_time: '00:00',
        duration_minutes: 7 * 24 * 60,
        time_zone: 'America/New_York',
      },
    });
    const fire = (t: { id: string; default_environment_id: string }) =>
      store.transaction((trx) =>
        server.services.launcher.queueScheduled(
          trx,
          { id: MISSING, test_id: t.id, environment_id: t.default_environment_id },
          now(),
        ),
      );
    assert.deepEqual(await fire(paused), []);
    const started = await fire(other);
    assert.equal(started.length, 1);
    assert.equal(started[0]!.row.in_maintenance, 0);
  });
});
