import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { apiClient, startAnnouncedWorker, startServe, type startVigil, vigil } from '../helpers/cli.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The run under test pauses this long: longer than any grace period below. */
const RUN_SECONDS = 30;

/**
 * Deploys never cancel runs: a 30 s run survives two SIGTERMs in a row to its worker and then a
 * rolling restart of the two workers. Each stop hands it over cleanly (SHUTDOWN_GRACE=2); the run
 * keeps its id, completes, and records every attempt.
 */
const postgres = (await dialects()).find((d) => d.fixture.name === 'postgres')!;
describe('deploys hand long runs over instead of canceling them', { skip: postgres.skip }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: pg.Client;
  let env: Record<string, string>;
  let serve: Awaited<ReturnType<typeof startServe>>;
  const workers: ReturnType<typeof startVigil>[] = [];
  let token = '';
  let bucket = '';
  const call = apiClient(
    () => serve.url,
    () => token,
  );

  const startWorker = async () => {
    const worker = await startAnnouncedWorker(['--concurrency', '2'], env, db);
    workers.push(worker);
    return worker;
  };
  const runRow = async (id: string) =>
    (await db.query('select result, worker_id, executions, handovers from test_runs where id = $1', [id]))
      .rows[0] as { result: string; worker_id: string | null; executions: number; handovers: number };
  /** Waits until the run is working on a worker of this process id. */
  const workingOn = async (id: string, pid: number) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const row = await runRow(id);
      if (row.result === 'working' && row.worker_id?.includes(`:${pid}:`)) return;
      assert.ok(['queued', 'working'].includes(row.result), `the run ended early: ${JSON.stringify(row)}`);
      if (Date.now() > deadline) assert.fail(`the run did not start on ${pid}: ${JSON.stringify(row)}`);
      await sleep(100);
    }
  };
  const exited = (worker: ReturnType<typeof startVigil>) =>
    new Promise<number | null>((resolve) => {
      if (worker.child.exitCode !== null) resolve(worker.child.exitCode);
      else worker.child.once('exit', (code) => resolve(code));
    });

  before(async () => {
    database = await freshPostgresDatabase();
    db = new pg.Client({ connectionString: database.url });
    env = {
      DATABASE_URL: database.url,
      DATA_DIR: '/nonexistent',
      SHUTDOWN_GRACE: '2',
      WORKER_DEAD_AFTER: '4',
    };
    const boot = vigil(
      ['bootstrap', '--email', 'r@example.com', '--name', 'R', '--password', 'a long passphrase', '--json'],
      env,
    );
    assert.equal(boot.status, 0, boot.stderr);
    ({ access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout));
    await db.connect();
    serve = await startServe(env, ['--no-worker']);
  });
  after(async () => {
    for (const worker of workers) await worker.stop();
    await serve?.stop();
    await db?.end();
    await database?.drop();
  });

  test('two SIGTERMs in a row, then a rolling restart: the run completes with every attempt recorded', async () => {
    const t = await call('POST', `/buckets/${bucket}/tests`, {
      name: 'Thirty seconds',
      steps: [{ step_type: 'pause', duration: RUN_SECONDS }],
    });
    const a = await startWorker();
    const [run] = (await call('POST', `/buckets/${bucket}/tests/${t.id}/runs`, {})).runs;
    const id = run.test_run_id as string;
    await workingOn(id, a.child.pid!);

    // A deploy: worker B comes up, worker A gets SIGTERM twice in a row (an impatient supervisor).
    const b = await startWorker();
    const aExit = exited(a);
    a.child.kill('SIGTERM');
    await sleep(200);
    a.child.kill('SIGTERM');
    assert.equal(await aExit, 0, `worker A stops cleanly: ${a.output()}`);
    await workingOn(id, b.child.pid!);
    let row = await runRow(id);
    assert.equal(row.handovers, 1);

    // The rolling restart goes on: A comes back as C, then B is stopped.
    const c = await startWorker();
    const bExit = exited(b);
    b.child.kill('SIGTERM');
    assert.equal(await bExit, 0, `worker B stops cleanly: ${b.output()}`);
    await workingOn(id, c.child.pid!);
    row = await runRow(id);
    assert.equal(row.handovers, 2);

    const deadline = Date.now() + (RUN_SECONDS + 30) * 1000;
    let result: { result: string; attempts: number; previous_attempt: { result: string } | null };
    for (;;) {
      result = await call('GET', `/buckets/${bucket}/tests/${t.id}/results/${id}`);
      if (!['queued', 'working'].includes(result.result)) break;
      assert.ok(Date.now() < deadline, 'the run ends');
      await sleep(500);
    }
    assert.equal(result.result, 'pass', JSON.stringify(result));
    assert.equal(result.attempts, 3, 'two interrupted attempts and the one that completed');
    assert.equal(result.previous_attempt?.result, 'interrupted');
    const all = (await db.query('select count(*)::int as n from test_runs where test_id = $1', [t.id]))
      .rows[0];
    assert.equal(all.n, 1, 'one run id throughout');
  });
});
