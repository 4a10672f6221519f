import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  apiClient,
  bootstrapAccount,
  startAnnouncedWorker,
  startServe,
  type startVigil,
} from '../helpers/cli.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';

const SCALE = 30; // 1m schedules every 2 s
const INTERVAL = 60 / SCALE;
const SCHEDULES = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scale-out on PostgreSQL with real processes: two `vigil serve --no-worker` (both scheduling) and
 * two `vigil worker`, pg-boss carrying the jobs. 100 schedules on a test-only short interval fire
 * exactly once per planned start and every run ends; a worker killed with SIGKILL mid-run loses
 * nothing: its run is handed over and still ends.
 */
const postgres = (await dialects()).find((d) => d.fixture.name === 'postgres')!;
describe('scale-out: two serve and two worker processes on PostgreSQL', { skip: postgres.skip }, () => {
  let upstream: http.Server;
  let base = '';
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: pg.Client;
  let env: Record<string, string>;
  const serves: Awaited<ReturnType<typeof startServe>>[] = [];
  const workers: ReturnType<typeof startVigil>[] = [];
  let token = '';
  let bucket = '';
  let api = '';

  const call = apiClient(
    () => api,
    () => token,
  );

  const startWorker = async () => {
    const worker = await startAnnouncedWorker(['--concurrency', '8'], env, db);
    workers.push(worker);
    return worker;
  };

  before(async () => {
    upstream = http.createServer((request, response) => {
      const delay = request.url?.startsWith('/slow') ? 4_000 : 0;
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"ok":true}');
      }, delay);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    database = await freshPostgresDatabase();
    env = {
      DATABASE_URL: database.url,
      NODE_ENV: 'test',
      SCHEDULE_TIME_SCALE: String(SCALE),
      WORKER_DEAD_AFTER: '3',
      QUEUE_TIMEOUT: '60',
      LOG_LEVEL: 'warn',
    };
    ({ token, bucket } = bootstrapAccount(env, 'scale@example.com'));
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    for (let i = 0; i < 2; i++) serves.push(await startServe(env, ['--no-worker']));
    api = serves[0]!.url;
    await startWorker();
    await startWorker();
  });

  after(async () => {
    await Promise.all([...serves, ...workers].map((p) => p.stop()));
    await db?.end();
    await database?.drop();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  test('each of 100 schedules fires exactly once per planned start and no run is lost', async () => {
    const tests = `/buckets/${bucket}/tests`;
    const scheduleIds: string[] = [];
    for (let t = 0; t < 10; t++) {
      const created = await call('POST', tests, {
        name: `Scheduled ${t}`,
        steps: [
          {
            step_type: 'request',
            method: 'GET',
            url: `${base}/ping/${t}`,
            assertions: [{ source: 'response_status', comparison: 'equal_number', value: '200' }],
          },
        ],
      });
      for (let s = 0; s < 10; s++)
        scheduleIds.push((await call('POST', `${tests}/${created.id}/schedules`, { interval: '1m' })).id);
    }
    assert.equal(scheduleIds.length, SCHEDULES);
    // Let the schedules be planned, then watch several ticks go by.
    await sleep(1_000);
    const from = Date.now() / 1000;
    await sleep(4 * INTERVAL * 1000 + 500);
    // On a busy machine the schedulers may run late: the window stays open (up to a minute more)
    // until every schedule has started in it.
    const openUntil = Date.now() + 60_000;
    while (Date.now() < openUntil) {
      const { rows: started } = await db.query(
        "select count(distinct schedule_id)::int as n from test_runs where source = 'scheduled' and planned_at >= $1",
        [from],
      );
      if (started[0].n >= SCHEDULES) break;
      await sleep(250);
    }
    const to = Date.now() / 1000;
    // Stop scheduling, then let the workers drain.
    await db.query('delete from schedules');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await db.query(
        "select count(*)::int as n from test_runs where source = 'scheduled' and result in ('queued', 'working')",
      );
      if (rows[0].n === 0) break;
      assert.ok(Date.now() < deadline, `${rows[0].n} scheduled runs still unfinished after 60 s`);
      await sleep(250);
    }
    const { rows } = await db.query(
      "select schedule_id, planned_at, result, error from test_runs where source = 'scheduled' order by schedule_id, planned_at",
    );
    const bySchedule = new Map<string, { planned_at: number; result: string; error: string | null }[]>();
    for (const row of rows) {
      const list = bySchedule.get(row.schedule_id) ?? [];
      list.push(row);
      bySchedule.set(row.schedule_id, list);
    }
    assert.equal(bySchedule.size, SCHEDULES, 'every schedule fired');
    for (const [id, runs] of bySchedule) {
      const planned = runs.map((r) => r.planned_at);
      assert.equal(new Set(planned).size, planned.length, `schedule ${id}: a planned start fired twice`);
      // Starts stay on the schedule's slots. A scheduler running late by more than an interval (a
      // busy machine) skips the slots it missed rather than firing them in a burst, so a gap may be
      // several intervals, never a fraction of one.
      for (let i = 1; i < planned.length; i++) {
        const gap = (planned[i]! - planned[i - 1]!) / INTERVAL;
        assert.ok(
          gap >= 1 - 0.01 / INTERVAL && Math.abs(gap - Math.round(gap)) < 0.01 / INTERVAL,
          `schedule ${id}: starts ${planned[i - 1]} and ${planned[i]} are not on its slots`,
        );
      }
      const inWindow = planned.filter((p) => p >= from && p < to).length;
      // At most one start per slot of the window.
      const slots = Math.floor((to - from) / INTERVAL) + 1;
      assert.ok(inWindow >= 1 && inWindow <= slots, `schedule ${id}: ${inWindow} runs in ${to - from} s`);
      for (const run of runs) assert.equal(run.result, 'pass', `schedule ${id}: ${run.result} ${run.error}`);
    }
  });

  test('a worker killed with SIGKILL mid-run: the run is handed over and still ends', async () => {
    const created = await call('POST', `/buckets/${bucket}/tests`, {
      name: 'Slow',
      steps: [{ step_type: 'request', method: 'GET', url: `${base}/slow` }],
    });
    const started = await call('POST', `/buckets/${bucket}/tests/${created.id}/runs`, {});
    const runId = started.runs[0].test_run_id as string;
    let workerId = '';
    const deadline = Date.now() + 20_000;
    while (!workerId) {
      const { rows } = await db.query('select result, worker_id from test_runs where id = $1', [runId]);
      if (rows[0]?.result === 'working') workerId = rows[0].worker_id;
      assert.ok(Date.now() < deadline, 'the run never started');
      await sleep(50);
    }
    const victim = workers.find((w) => workerId.includes(`:${w.child.pid}:`));
    assert.ok(victim, `worker ${workerId} is one of ours`);
    victim.child.kill('SIGKILL');
    await startWorker(); // capacity comes back, as a supervisor would restart it
    const end = Date.now() + 60_000;
    let row: { result: string; executions: number; worker_id: string; error: string | null } | undefined;
    for (;;) {
      const result = await db.query<NonNullable<typeof row>>(
        'select result, executions, worker_id, error from test_runs where id = $1',
        [runId],
      );
      row = result.rows[0];
      if (row && !['queued', 'working'].includes(row.result)) break;
      assert.ok(Date.now() < end, `the run is stuck in ${row?.result}`);
      await sleep(200);
    }
    assert.equal(row!.result, 'pass', row!.error ?? '');
    assert.equal(row!.executions, 2, 'handed over once');
    assert.notEqual(row!.worker_id, workerId);
  });
});
