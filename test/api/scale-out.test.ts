import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { nowFloat } from '../../src/domain/ids.js';
import { RunReaper } from '../../src/services/run-reaper.js';
import { intervalSeconds, nextSlot, phaseSeconds, Scheduler } from '../../src/services/scheduler.js';
import { WorkerRegistry } from '../../src/services/workers.js';
import { Store } from '../../src/store/store.js';
import { describeApi } from '../helpers/api.js';

test('phases spread schedules over their interval and stay put', () => {
  const interval = intervalSeconds('5m');
  assert.equal(interval, 300);
  assert.equal(intervalSeconds('1m', 60), 1);
  const perSecond = new Map<number, number>();
  for (let i = 0; i < 1000; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const phase = phaseSeconds(id, interval);
    assert.ok(phase >= 0 && phase < interval);
    assert.equal(phaseSeconds(id, interval), phase, 'stable');
    const second = Math.floor(phase);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    const now = 1_800_000_000.5;
    const next = nextSlot(id, interval, now);
    assert.ok(next > now && next <= now + interval);
    assert.ok(Math.abs((((next - phase) % interval) + interval) % interval) < 1e-6);
  }
  // 1,000 five-minute schedules: about 3.3 per second on average, never a crowd in one second.
  assert.ok(Math.max(...perSecond.values()) <= 15, `busiest second: ${Math.max(...perSecond.values())}`);
  assert.ok(perSecond.size > 250, `seconds used: ${perSecond.size}`);
});

await describeApi('scheduler, run reaper and regions', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;
  const scheduled = (testId: string) =>
    get()
      .store.db.selectFrom('test_runs')
      .select(['id', 'schedule_id', 'planned_at', 'result', 'error', 'executions'])
      .where('test_id', '=', testId)
      .where('source', '=', 'scheduled')
      .orderBy('planned_at')
      .execute();
  const nextRunAt = async (scheduleId: string) =>
    (
      await get()
        .store.db.selectFrom('schedules')
        .select('next_run_at')
        .where('id', '=', scheduleId)
        .executeTakeFirstOrThrow()
    ).next_run_at;

  before(async () => {
    // These tests drive the scheduler, the reaper and the runs by hand.
    await get().server.reaper.stop();
    await get().server.stopWorker();
  });

  test('a schedule fires once per planned start, with the planned time; no burst after downtime', async () => {
    const { data, server } = get();
    const scheduler = new Scheduler({ store: server.store, launcher: server.services.launcher });
    const t = await data('POST', tests(), { name: 'Every minute' });
    const s = await data('POST', `${tests()}/${t.id}/schedules`, { interval: '1m' });
    const t0 = Math.floor(nowFloat());
    await scheduler.tick(t0);
    const planned = await nextRunAt(s.id);
    assert.ok(planned !== null && planned > t0 && planned <= t0 + 60, `planned ${planned}`);
    assert.equal(Math.abs(planned - nextSlot(s.id, 60, t0)) < 1e-6, true);
    assert.equal((await scheduled(t.id)).length, 0, 'nothing fires before its slot');
    const scheduleUrl = `${tests()}/${t.id}/schedules/${s.id}`;
    assert.equal(s.next_run_at, null);
    assert.equal((await data('GET', scheduleUrl)).next_run_at, planned, 'the API shows the planned start');

    await scheduler.tick(planned + 0.1);
    await scheduler.tick(planned + 0.2);
    let runs = await scheduled(t.id);
    assert.equal(runs.length, 1, 'fired exactly once');
    assert.equal(runs[0]!.planned_at, planned);
    assert.equal(await nextRunAt(s.id), planned + 60);
    assert.equal((await data('GET', scheduleUrl)).next_run_at, planned + 60);
    assert.equal((await data('GET', `${tests()}/${t.id}`)).schedules[0].next_run_at, planned + 60);

    // Five hours of downtime: one late run, then back on its slots.
    const later = planned + 5 * 3600 + 7;
    await scheduler.tick(later);
    await scheduler.tick(later);
    runs = await scheduled(t.id);
    assert.equal(runs.length, 2, 'one catch-up run, not 300');
    const resumed = (await nextRunAt(s.id))!;
    assert.ok(resumed > later && resumed <= later + 60);
    assert.ok(
      Math.abs(((resumed - planned) % 60) - 0) < 1e-6 || Math.abs(((resumed - planned) % 60) - 60) < 1e-6,
    );
  });

  test('changed and deleted schedules take effect on the next tick', async () => {
    const { data, call, server } = get();
    const scheduler = new Scheduler({ store: server.store, launcher: server.services.launcher });
    const t = await data('POST', tests(), { name: 'Changing' });
    const s = await data('POST', `${tests()}/${t.id}/schedules`, { interval: '1d' });
    const t0 = Math.floor(nowFloat());
    await scheduler.tick(t0);
    const daily = (await nextRunAt(s.id))!;
    await data('PUT', `${tests()}/${t.id}/schedules/${s.id}`, { interval: '1m' });
    assert.equal(await nextRunAt(s.id), null, 'a new interval is planned afresh');
    await scheduler.tick(t0);
    const minutely = (await nextRunAt(s.id))!;
    assert.ok(minutely <= t0 + 60 && minutely !== daily);
    const removed = await call({ method: 'DELETE', url: `${tests()}/${t.id}/schedules/${s.id}` });
    assert.equal(removed.statusCode, 204);
    await scheduler.tick(minutely + 1);
    assert.equal((await scheduled(t.id)).length, 0);
  });

  test('two schedulers on one store fire each planned start exactly once', async () => {
    const { data, server, databaseUrl } = get();
    const t = await data('POST', tests(), { name: 'Contended' });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++)
      ids.push((await data('POST', `${tests()}/${t.id}/schedules`, { interval: '5m' })).id);
    // A second store: its own connections, as a second serve process would have.
    const otherStore = databaseUrl ? Store.open({ databaseUrl, dataDir: '.' }) : server.store;
    try {
      const a = new Scheduler({ store: server.store, launcher: server.services.launcher });
      const b = new Scheduler({ store: otherStore, launcher: server.services.launcher });
      const t0 = Math.floor(nowFloat());
      await a.tick(t0);
      // Each schedule's first slot lies in (t0, t0 + 300]: ticks one interval apart find exactly one
      // planned start of each due (a tick later than that could also find the next one due, which
      // the cadence rule fires too, and the count per tick would no longer be fixed).
      for (const tick of [t0 + 300, t0 + 600]) {
        const [fa, fb] = await Promise.all([a.tick(tick), b.tick(tick)]);
        assert.equal(fa + fb, 30, `fired ${fa} + ${fb}`);
      }
      const runs = await scheduled(t.id);
      assert.equal(runs.length, 60);
      // Two schedules may share a phase (it has a resolution of a millisecond), so a planned start
      // is a schedule's slot, not a time alone.
      const starts = new Set(runs.map((r) => `${r.schedule_id} ${r.planned_at}`));
      assert.equal(starts.size, 60, 'no planned start fired twice');
      for (const id of ids)
        assert.equal(runs.filter((r) => r.schedule_id === id).length, 2, `schedule ${id} fired once a tick`);
    } finally {
      if (otherStore !== server.store) await otherStore.close();
    }
  });

  test('a run whose worker falls silent is handed over once, then ends canceled', async () => {
    const { data, server } = get();
    const registry = new WorkerRegistry({
      store: server.store,
      liveness: { heartbeatMs: 50, deadAfterMs: 200 },
    });
    const reaper = new RunReaper({
      store: server.store,
      executor: server.services.executor,
      registry,
      queueTimeoutSeconds: 3600,
    });
    const t = await data('POST', tests(), { name: 'Orphaned' });
    const [run] = (await data('POST', `${tests()}/${t.id}/runs`, {})).runs;
    const runs = server.services.executor;
    await registry.announce({ id: 'ghost-1', kind: 'worker', regions: null, concurrency: 1 });
    assert.ok(await runs.claimRun(run.test_run_id, 'ghost-1'));
    assert.deepEqual(await reaper.reap(), { handedOver: 0, canceled: 0 }, 'a live worker keeps its run');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await reaper.reap(), { handedOver: 1, canceled: 0 });
    let row = await server.store.db
      .selectFrom('test_runs')
      .selectAll()
      .where('id', '=', run.test_run_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.result, 'queued');
    assert.equal(row.worker_id, null);
    assert.ok(await runs.claimRun(run.test_run_id, 'ghost-2'), 'the second delivery is taken');
    assert.deepEqual(await reaper.reap(), { handedOver: 0, canceled: 1 });
    row = await server.store.db
      .selectFrom('test_runs')
      .selectAll()
      .where('id', '=', run.test_run_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.result, 'canceled');
    assert.equal(row.executions, 2);
    assert.match(row.error ?? '', /ghost-2 stopped responding.*handed over once already/);
    // The result is final: a late report from the first worker is refused.
    assert.equal(await runs.claimRun(run.test_run_id, 'ghost-3'), null);
    await registry.withdraw('ghost-1');
  });

  test('a run for a region no live worker serves ends canceled after the queue timeout', async () => {
    const { data, server } = get();
    const registry = new WorkerRegistry({ store: server.store });
    const reaper = new RunReaper({
      store: server.store,
      executor: server.services.executor,
      registry,
      queueTimeoutSeconds: 30,
    });
    const t = await data('POST', tests(), { name: 'Far away' });
    const [far] = (await data('POST', `${tests()}/${t.id}/runs`, { region: 'mars-north' })).runs;
    const [near] = (await data('POST', `${tests()}/${t.id}/runs`, { region: 'eu-west' })).runs;
    await registry.announce({ id: 'eu-worker', kind: 'worker', regions: ['eu-west'], concurrency: 4 });
    assert.deepEqual(await reaper.reap(), { handedOver: 0, canceled: 0 }, 'not before the timeout');
    // Earlier tests left runs of region "local" queued: they go too.
    assert.ok((await reaper.reap(nowFloat() + 31)).canceled >= 1);
    const result = async (id: string) =>
      server.store.db
        .selectFrom('test_runs')
        .select(['result', 'error'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const canceled = await result(far.test_run_id);
    assert.equal(canceled.result, 'canceled');
    assert.match(canceled.error ?? '', /no worker serves region mars-north/);
    assert.equal((await result(near.test_run_id)).result, 'queued', 'a served region waits for its worker');
    await registry.withdraw('eu-worker');
  });

  test('GET /regions lists the regions of live workers', async () => {
    const { data, server, tokenWith, call } = get();
    const registry = new WorkerRegistry({ store: server.store });
    await registry.announce({ id: 'w-us', kind: 'worker', regions: ['us-east', 'eu-west'], concurrency: 5 });
    await registry.announce({ id: 'w-eu', kind: 'worker', regions: ['eu-west'], concurrency: 3 });
    await registry.announce({
      id: 'agent:x',
      kind: 'agent',
      regions: ['agent-x'],
      concurrency: 1,
      agentId: 'x',
    });
    await server.store.db
      .insertInto('workers')
      .values({
        id: 'w-gone',
        kind: 'worker',
        regions: '["ap-south"]',
        version: '0',
        hostname: 'h',
        pid: 1,
        concurrency: 1,
        agent_id: null,
        started_at: 0,
        last_seen_at: 0,
      })
      .execute();
    const { regions } = await data('GET', '/regions');
    const byRegion = Object.fromEntries(regions.map((r: { region: string }) => [r.region, r]));
    // The original service's fields beside Vigil's live figures.
    assert.equal(byRegion['eu-west'].region_code, 'eu-west');
    assert.equal(byRegion['eu-west'].service_provider, 'self-hosted');
    assert.equal(typeof byRegion['eu-west'].location, 'string');
    assert.equal(typeof byRegion['eu-west'].hostname, 'string');
    assert.equal(byRegion['eu-west'].workers, 2);
    assert.equal(byRegion['eu-west'].concurrency, 8);
    assert.equal(byRegion['us-east'].workers, 1);
    assert.equal(byRegion['ap-south'], undefined, 'a silent worker is not listed');
    assert.equal(byRegion['agent-x'], undefined, 'agents are listed per team');
    const readOnly = await tokenWith(['api:read']);
    assert.equal((await call({ method: 'GET', url: '/regions', as: readOnly })).statusCode, 200);
    assert.equal((await call({ method: 'GET', url: '/regions', as: null })).statusCode, 401);
    for (const id of ['w-us', 'w-eu', 'agent:x', 'w-gone']) await registry.withdraw(id);
  });
});
