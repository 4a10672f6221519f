/**
 * Scale-out benchmark on PostgreSQL (pg-boss carrying the jobs), with the real processes:
 *
 * 1. Throughput: BENCH_RUNS runs of a one-request test against a local upstream are queued, then 1
 *    and then 2 `vigil worker` processes (each with BENCH_CONCURRENCY) take them; runs per minute
 *    from the first start to the last finish as the store recorded them. The ratio of the two is the
 *    scale factor.
 * 2. Scheduler lag: BENCH_SCHEDULES schedules of 1 minute (real time) on 50 tests, one
 *    `vigil serve --no-worker` firing them and one worker running them, for BENCH_LAG_SECONDS; lag
 *    is each run's actual start minus its planned start.
 *
 * BENCH_UPSTREAM_DELAY_MS makes the upstream answer after a delay, as a real API does.
 *
 * Each phase uses a fresh database on the server of TEST_DATABASE_URL
 * (postgres://root@127.0.0.1:5432/postgres by default), dropped afterwards. Vigil runs from dist/:
 * `npm run build` first. Progress goes to stderr, the table to stdout, and the last stdout line is
 * the results as JSON. Exit status 0 when every run passed, 1 otherwise.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { nowFloat } from '../src/domain/ids.js';
import { createRuntime, createServices } from '../src/main.js';
import { Store } from '../src/store/store.js';
import { freshPostgresDatabase } from '../test/helpers/dialects.js';
import {
  checkBuild,
  cleanup,
  cpuMsOf,
  delay,
  freePort,
  log,
  ROOT,
  runChild,
  startChild,
  stopChild,
  waitForHealth,
} from './ingest/processes.js';
import { numberSetting } from './shared/settings.js';

const RUNS = Math.round(numberSetting('BENCH_RUNS', 6_000, 100));
const CONCURRENCY = Math.round(numberSetting('BENCH_CONCURRENCY', 20, 1));
const SCHEDULES = Math.round(numberSetting('BENCH_SCHEDULES', 500, 1));
const LAG_SECONDS = numberSetting('BENCH_LAG_SECONDS', 150, 30);
const PHASES = (process.env.BENCH_PHASES || 'throughput,lag').split(',').filter(Boolean);
const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
/** Runs are spread over this many one-request tests, as a team's monitors are. */
const TESTS = Math.round(numberSetting('BENCH_TESTS', 20, 1));
/** How long the upstream takes to answer, in ms: 0 for a bare floor, ~100–300 for a real API. */
const UPSTREAM_DELAY_MS = numberSetting('BENCH_UPSTREAM_DELAY_MS', 0, 0);

const TARGET_RUNS_PER_MINUTE = 3_000;
const TARGET_SCALE = 1.6;
const TARGET_LAG_P99_S = 1;

const VIGIL = path.join(ROOT, 'bin/vigil.js');

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A bare upstream in this process: every request answers 200 with a small JSON body, after UPSTREAM_DELAY_MS. */
async function startUpstream(): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((_request, response) => {
    requests++;
    const answer = () => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
      response.end('{"ok":true}');
    };
    if (UPSTREAM_DELAY_MS > 0) setTimeout(answer, UPSTREAM_DELAY_MS);
    else answer();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Setup {
  databaseUrl: string;
  store: Store;
  services: ReturnType<typeof createServices>;
  close(): Promise<void>;
  tests: { id: string; environmentId: string }[];
}

/** A fresh database with an account and `count` one-request tests against `upstream`. */
async function setUp(upstream: string, count: number): Promise<Setup> {
  const database = await freshPostgresDatabase();
  // PUBLIC_URL names a port nothing answers on: bootstrap checks that no server there refuses its
  // token (a development server on the default port would).
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    PUBLIC_URL: `http://127.0.0.1:${await freePort()}`,
  };
  const [line] = (
    await runChild(
      'bootstrap',
      [
        VIGIL,
        'bootstrap',
        '--email',
        'bench@example.com',
        '--name',
        'Bench',
        '--password',
        'bench passphrase',
        '--json',
      ],
      env,
    )
  ).slice(-1);
  const { bucket_key: bucket } = JSON.parse(line!) as { bucket_key: string };
  const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'warn' });
  const store = Store.open({ databaseUrl: database.url, dataDir: ROOT });
  const runtime = await createRuntime(store, config);
  const services = createServices(store, config, runtime);
  const account = await store.db
    .selectFrom('accounts')
    .select(['id', 'name', 'email'])
    .executeTakeFirstOrThrow();
  const actor = {
    accountId: account.id,
    tokenId: 'bench',
    name: account.name,
    email: account.email,
    scopes: new Set(['api:read', 'test:write'] as const),
    source: 'api' as const,
  };
  const tests: Setup['tests'] = [];
  for (let i = 0; i < count; i++) {
    const [test] = await services.tests.create(
      actor,
      bucket,
      [
        {
          name: `One request ${i}`,
          steps: [
            {
              step_type: 'request',
              method: 'GET',
              url: `${upstream}/ping/${i}`,
              assertions: [{ source: 'response_status', comparison: 'equal_number', value: '200' }],
            },
          ],
        } as never,
      ],
      { isArray: false },
    );
    tests.push({ id: test!.test.id, environmentId: test!.test.default_environment_id });
  }
  return {
    databaseUrl: database.url,
    store,
    services,
    tests,
    async close() {
      await runtime.close();
      await store.close();
      await database.drop();
    },
  };
}

function workerEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    WORKER_CONCURRENCY: String(CONCURRENCY),
  };
}

async function waitAnnounced(store: Store, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const rows = await store.db.selectFrom('workers').select('id').where('kind', '=', 'worker').execute();
    if (rows.length >= count) return;
    if (Date.now() > deadline)
      throw new Error(`only ${rows.length} of ${count} workers announced themselves`);
    await delay(100);
  }
}

interface Throughput {
  workers: number;
  runs: number;
  seconds: number;
  runs_per_minute: number;
  failed: number;
  /** CPU time per run of the worker processes and of PostgreSQL (all its processes), in ms. */
  worker_cpu_ms_per_run: number;
  postgres_cpu_ms_per_run: number;
  /** Share of the machine's cores busy with workers and PostgreSQL while the runs went. */
  machine_busy: number;
}

/** CPU time (ms) of every process named `postgres`, from /proc. */
function postgresCpuMs(): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      total += cpuMsOf(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Queues RUNS runs, starts `workers` workers, and times them from first start to last finish. */
async function throughput(upstream: string, workers: number): Promise<Throughput> {
  const setup = await setUp(upstream, TESTS);
  try {
    log(`queueing ${RUNS} runs over ${TESTS} tests`);
    for (let i = 0; i < RUNS; i += 100) {
      await setup.store.transaction(async (trx) => {
        for (let j = i; j < Math.min(RUNS, i + 100); j++) {
          const test = setup.tests[j % TESTS]!;
          await setup.services.launcher.queueScheduled(
            trx,
            { id: 'bench', test_id: test.id, environment_id: test.environmentId },
            nowFloat(),
          );
        }
      });
    }
    log(`starting ${workers} worker(s), ${CONCURRENCY} runs at once each`);
    const children = Array.from({ length: workers }, (_, i) =>
      startChild(`worker ${i + 1}`, [...WORKER_NODE_ARGS, VIGIL, 'worker'], workerEnv(setup.databaseUrl)),
    );
    await waitAnnounced(setup.store, workers);
    const cpuBefore = children.map((c) => cpuMsOf(c.pid));
    const postgresBefore = postgresCpuMs();
    setup.services.launcher.wakeWorkers();
    const deadline = Date.now() + 30 * 60_000;
    for (;;) {
      const { n } = await setup.store.db
        .selectFrom('test_runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('result', 'in', ['queued', 'working'])
        .executeTakeFirstOrThrow();
      if (Number(n) === 0) break;
      if (Date.now() > deadline) throw new Error(`${n} runs unfinished after 30 minutes`);
      await delay(250);
    }
    const workerCpu = children.reduce((sum, c, i) => sum + cpuMsOf(c.pid) - cpuBefore[i]!, 0);
    const postgresCpu = postgresCpuMs() - postgresBefore;
    await Promise.all(children.map(stopChild));
    const span = await setup.store.db
      .selectFrom('test_runs')
      .select((eb) => [
        eb.fn.min('started_at').as('first'),
        eb.fn.max('finished_at').as('last'),
        eb.fn.countAll<number>().as('runs'),
        eb.fn.sum<number>(eb.case().when('result', '!=', 'pass').then(1).else(0).end()).as('failed'),
      ])
      .executeTakeFirstOrThrow();
    const seconds = Number(span.last) - Number(span.first);
    return {
      workers,
      runs: Number(span.runs),
      seconds,
      runs_per_minute: (Number(span.runs) / seconds) * 60,
      failed: Number(span.failed),
      worker_cpu_ms_per_run: workerCpu / Number(span.runs),
      postgres_cpu_ms_per_run: postgresCpu / Number(span.runs),
      machine_busy: (workerCpu + postgresCpu) / (seconds * 1000 * os.availableParallelism()),
    };
  } finally {
    await setup.close();
  }
}

interface Lag {
  schedules: number;
  runs: number;
  p50_s: number;
  p99_s: number;
  max_s: number;
  fire_p99_s: number;
  failed: number;
}

/** SCHEDULES one-minute schedules, one serve (scheduler) and one worker, for LAG_SECONDS. */
async function lag(upstream: string): Promise<Lag> {
  const testCount = Math.min(50, SCHEDULES);
  const setup = await setUp(upstream, testCount);
  try {
    const now = nowFloat();
    const rows = Array.from({ length: SCHEDULES }, (_, i) => {
      const test = setup.tests[i % testCount]!;
      return {
        id: crypto.randomUUID(),
        test_id: test.id,
        environment_id: test.environmentId,
        interval: '1m',
        note: 'bench',
        created_at: Math.floor(now),
        next_run_at: null,
      };
    });
    for (let i = 0; i < rows.length; i += 100)
      await setup.store.db
        .insertInto('schedules')
        .values(rows.slice(i, i + 100))
        .execute();
    const port = await freePort();
    const serve = startChild('serve', [VIGIL, 'serve', '--no-worker'], {
      ...workerEnv(setup.databaseUrl),
      PORT: String(port),
      TRAFFIC_PORT: '0',
    });
    const worker = startChild('worker', [VIGIL, 'worker'], workerEnv(setup.databaseUrl));
    await waitForHealth(serve, `http://127.0.0.1:${port}`);
    await waitAnnounced(setup.store, 1);
    const from = nowFloat();
    log(`${SCHEDULES} schedules of 1 minute: watching for ${LAG_SECONDS} s`);
    await delay(LAG_SECONDS * 1000);
    const to = nowFloat();
    await stopChild(serve);
    // Let the runs planned in the window finish.
    await delay(5_000);
    await stopChild(worker);
    const runs = await setup.store.db
      .selectFrom('test_runs')
      .select(['planned_at', 'queued_at', 'started_at', 'result'])
      .where('planned_at', '>=', from)
      .where('planned_at', '<', to)
      .execute();
    const lags = runs
      .filter((r) => r.started_at !== null)
      .map((r) => r.started_at! - r.planned_at!)
      .sort((a, b) => a - b);
    const fires = runs.map((r) => r.queued_at - r.planned_at!).sort((a, b) => a - b);
    return {
      schedules: SCHEDULES,
      runs: runs.length,
      p50_s: percentile(lags, 50),
      p99_s: percentile(lags, 99),
      max_s: lags.at(-1) ?? NaN,
      fire_p99_s: percentile(fires, 99),
      failed: runs.filter((r) => r.result !== 'pass').length,
    };
  } finally {
    await setup.close();
  }
}

async function main(): Promise<number> {
  checkBuild();
  const upstream = await startUpstream();
  const results: { throughput: Throughput[]; lag: Lag | null; scale: number | null } = {
    throughput: [],
    lag: null,
    scale: null,
  };
  try {
    if (PHASES.includes('throughput')) {
      for (const workers of [1, 2]) {
        const result = await throughput(upstream.url, workers);
        log(`${workers} worker(s): ${result.runs_per_minute.toFixed(0)} runs/min`);
        results.throughput.push(result);
      }
      const [one, two] = results.throughput;
      results.scale = two!.runs_per_minute / one!.runs_per_minute;
    }
    if (PHASES.includes('lag')) results.lag = await lag(upstream.url);
  } finally {
    await upstream.close();
    await cleanup();
  }
  const out: string[] = [];
  if (results.throughput.length > 0) {
    out.push(
      `${os.availableParallelism()} cores, ${CONCURRENCY} runs at once per worker, upstream answers in ${UPSTREAM_DELAY_MS} ms`,
      '',
      '| workers | runs | seconds | runs/min | failed | worker CPU ms/run | PostgreSQL CPU ms/run | cores busy |',
      '|--:|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const t of results.throughput)
      out.push(
        `| ${t.workers} | ${t.runs} | ${t.seconds.toFixed(1)} | ${t.runs_per_minute.toFixed(0)} | ${t.failed} | ${t.worker_cpu_ms_per_run.toFixed(2)} | ${t.postgres_cpu_ms_per_run.toFixed(2)} | ${(t.machine_busy * 100).toFixed(0)} % |`,
      );
    const one = results.throughput[0]!;
    out.push(
      '',
      `${one.runs_per_minute >= TARGET_RUNS_PER_MINUTE ? 'PASS' : 'FAIL'} one worker ${one.runs_per_minute.toFixed(0)} runs/min (target ≥ ${TARGET_RUNS_PER_MINUTE})`,
      `${results.scale! >= TARGET_SCALE ? 'PASS' : 'FAIL'} two workers ${results.scale!.toFixed(2)}× one (target ≥ ${TARGET_SCALE}×)`,
    );
  }
  if (results.lag) {
    const l = results.lag;
    out.push(
      '',
      `scheduler lag over ${l.runs} runs of ${l.schedules} schedules: p50 ${(l.p50_s * 1000).toFixed(0)} ms, p99 ${(l.p99_s * 1000).toFixed(0)} ms, max ${(l.max_s * 1000).toFixed(0)} ms (fired p99 ${(l.fire_p99_s * 1000).toFixed(0)} ms)`,
      `${l.p99_s <= TARGET_LAG_P99_S ? 'PASS' : 'FAIL'} lag p99 ≤ ${TARGET_LAG_P99_S} s`,
    );
  }
  process.stdout.write(
    `${out.join('\n')}\n${JSON.stringify({ ...results, concurrency: CONCURRENCY, upstream_delay_ms: UPSTREAM_DELAY_MS })}\n`,
  );
  const failed = results.throughput.some((t) => t.failed > 0) || (results.lag?.failed ?? 0) > 0;
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    await cleanup();
    process.exit(1);
  },
);
