/**
 * Scale of history: how the reads of a test's runs answer when the test has a long history.
 *
 * For each dialect, a fresh store gets one bucket with BENCH_TESTS tests; the first of them gets
 * BENCH_RUNS finished runs (default 1,000,000) spread evenly over the last BENCH_DAYS days (default
 * 365), about one in twenty failing, written straight through the store in multi-row inserts, as the
 * ingest benchmark fills messages. The other tests get a few runs each. Then each read is asked
 * BENCH_REQUESTS times (after a few unmeasured ones) through the real server (`createServer`, with
 * Fastify's `inject`, so no socket is in the way) and its server time is measured:
 *
 * - `GET …/tests/<id>/results` (the newest 50),
 * - `GET …/tests/<id>/results/latest`,
 * - `GET …/tests/<id>/metrics?timeframe=month`,
 * - `GET …/test-summaries`, the tests list with each test's `last_run` and recent runs.
 *
 * Every answer is checked against the filled data before anything is timed. Prints the CPU model
 * with the figures; the target is p99 under 20 ms for each read on each dialect.
 *
 * Env: BENCH_RUNS, BENCH_DAYS, BENCH_TESTS, BENCH_REQUESTS, BENCH_DIALECTS (sqlite,postgres),
 * BENCH_PG_URL (default postgres://root@127.0.0.1:5432/postgres).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/config.js';
import { createServer, createServices, type Server } from '../src/main.js';
import type { Actor } from '../src/services/principal.js';
import type { TestRunRow } from '../src/store/database.js';
import type { Store } from '../src/store/store.js';
import { rollupWindow } from '../src/domain/metrics.js';
import { rebuildMetricRollups } from '../src/store/repositories/metric-rollups.js';
import { runRow } from '../test/helpers/seed.js';
import { openBenchStore } from './shared/stores.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 1_000_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const TESTS = Number(process.env.BENCH_TESTS ?? 20);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',').filter(Boolean);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const CPU = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
const TARGET_MS = 20;
/** Rows per INSERT: well under SQLite's 32,766 parameters at about 37 columns a row. */
const STATEMENT_ROWS = 400;
const TRANSACTION_ROWS = 20_000;
const WARMUP = 10;

interface Fixture {
  store: Store;
  server: Server;
  token: string;
  bucketKey: string;
  testId: string;
  newestFinished: TestRunRow;
  newestQueued: TestRunRow[];
  /** This month's figures computed from the stored runs themselves, to check the answers against. */
  month: { first: number; runs: number; successRatio: number; percentiles: number[] };
  close: () => Promise<void>;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** A run of the history: every 20th fails; response times vary over the day. */
function historyRun(testId: string, bucketKey: string, index: number, at: number): TestRunRow {
  const row = runRow(testId, bucketKey, index % 20 === 7 ? 'fail' : 'pass', at, 80 + ((index * 37) % 400));
  row.region = index % 2 === 0 ? 'us1' : 'eu1';
  row.source = 'schedule';
  return row;
}

async function fill(store: Store, testId: string, bucketKey: string, now: number): Promise<void> {
  const from = now - DAYS * 86_400;
  const step = (now - 60 - from) / RUNS;
  const started = Date.now();
  for (let done = 0; done < RUNS;) {
    const end = Math.min(RUNS, done + TRANSACTION_ROWS);
    await store.transaction(async (trx) => {
      for (let i = done; i < end; i += STATEMENT_ROWS) {
        const rows: TestRunRow[] = [];
        for (let j = i; j < Math.min(end, i + STATEMENT_ROWS); j++)
          rows.push(historyRun(testId, bucketKey, j, from + j * step));
        await trx.insertInto('test_runs').values(rows).execute();
      }
    });
    done = end;
    if (done % 200_000 === 0 || done === RUNS)
      log(`  ${done.toLocaleString('en-US')} runs (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  // What the recorder adds as each run finishes: the metric rollups, built here from the runs.
  const rolling = Date.now();
  await rebuildMetricRollups(store.db, testId);
  log(`  rollups built (${((Date.now() - rolling) / 1000).toFixed(0)} s)`);
  if (store.dialect === 'postgres') await sql`analyze test_runs, test_metric_rollups`.execute(store.db);
  else await sql`analyze`.execute(store.db);
}

/** The month's run count, success ratio and nearest-rank p50/p95/p99, from the runs themselves. */
async function monthFromRuns(store: Store, testId: string): Promise<Fixture['month']> {
  const { first } = rollupWindow('month', Date.now() / 1000);
  const runs = await store.db
    .selectFrom('test_runs')
    .select(['result', 'response_time_ms'])
    .where('test_id', '=', testId)
    .where('finished_at', '>=', first)
    .where('result', 'in', ['pass', 'fail'])
    .execute();
  const times = runs.map((r) => r.response_time_ms!).sort((a, b) => a - b);
  const at = (p: number) => times[Math.ceil((p / 100) * times.length) - 1]!;
  const passes = runs.filter((r) => r.result === 'pass').length;
  return {
    first,
    runs: runs.length,
    successRatio: Math.round((passes / runs.length) * 10_000) / 10_000,
    percentiles: [at(50), at(95), at(99)],
  };
}

async function fixture(dialect: string): Promise<Fixture | null> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-history-'));
  const opened = await openBenchStore(dialect, dataDir, PG_URL, 'vigil_history');
  if (opened === null) return null;
  const { store } = opened;
  await store.migrate();
  const config = {
    ...loadConfig({
      PUBLIC_URL: 'http://localhost:1',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      SHUTDOWN_GRACE: '0',
    }),
    databaseUrl: opened.databaseUrl,
  };
  const server = await createServer(config, {
    store,
    scheduler: false,
    dashboardDir: path.join(dataDir, 'none'),
  });
  const services = createServices(store);
  const account = await services.accounts.bootstrap({
    email: 'history@example.com',
    name: 'History',
    password: 'correct horse battery',
  });
  const actor: Actor = {
    accountId: account.account_id,
    tokenId: '',
    name: 'History',
    email: 'history@example.com',
    scopes: new Set(),
    source: 'api',
  };
  const ids: string[] = [];
  for (let i = 0; i < TESTS; i++) {
    const [created] = await services.tests.create(
      actor,
      account.bucket_key,
      [
        {
          name: `Test ${i + 1}`,
          steps: [{ step_type: 'request', method: 'GET', url: 'https://example.test/' }],
        } as never,
      ],
      { isArray: false },
    );
    ids.push(created!.test.id);
  }
  const testId = ids[0]!;
  const now = Date.now() / 1000;
  log(`${dialect}: filling ${RUNS.toLocaleString('en-US')} runs of one test over ${DAYS} days…`);
  await fill(store, testId, account.bucket_key, now);
  for (const other of ids.slice(1))
    await store.db
      .insertInto('test_runs')
      .values(
        Array.from({ length: 30 }, (_, i) => historyRun(other, account.bucket_key, i, now - 3_600 * (i + 1))),
      )
      .execute();

  const newestFinished = await store.db
    .selectFrom('test_runs')
    .selectAll()
    .where('test_id', '=', testId)
    .where('result', 'in', ['pass', 'fail'])
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  const newestQueued = await store.db
    .selectFrom('test_runs')
    .selectAll()
    .where('test_id', '=', testId)
    .orderBy('queued_at', 'desc')
    .orderBy('id', 'desc')
    .limit(50)
    .execute();
  return {
    store,
    server,
    token: account.access_token,
    bucketKey: account.bucket_key,
    testId,
    newestFinished,
    newestQueued,
    month: await monthFromRuns(store, testId),
    close: async () => {
      await server.stop();
      await opened.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface Read {
  name: string;
  url: (f: Fixture) => string;
  check: (f: Fixture, data: any) => void;
}

const READS: Read[] = [
  {
    name: 'GET …/results (newest 50)',
    url: (f) => `/buckets/${f.bucketKey}/tests/${f.testId}/results?count=50`,
    check: (f, data) => {
      assert.equal(data.length, 50);
      assert.deepEqual(
        data.map((r: { test_run_id: string }) => r.test_run_id),
        f.newestQueued.map((r) => r.id),
      );
    },
  },
  {
    name: 'GET …/results/latest',
    url: (f) => `/buckets/${f.bucketKey}/tests/${f.testId}/results/latest`,
    check: (f, data) => assert.equal(data.test_run_id, f.newestFinished.id),
  },
  {
    name: 'GET …/metrics?timeframe=month',
    url: (f) => `/buckets/${f.bucketKey}/tests/${f.testId}/metrics?timeframe=month`,
    check: (f, data) => {
      assert.equal(data.response_times.length, 30);
      assert.equal(
        rollupWindow('month', Date.now() / 1000).first,
        f.month.first,
        'the day turned during the run',
      );
      // Counts and ratios exact; percentiles from the histogram, within 2 % of the runs' own.
      assert.equal(data.this_time_period.total_test_runs, f.month.runs);
      assert.equal(data.this_time_period.success_ratio, f.month.successRatio);
      const answered = [50, 95, 99].map(
        (p) => data.this_time_period[`response_time_${p}th_percentile`] as number,
      );
      answered.forEach((value, i) => {
        const truth = f.month.percentiles[i]!;
        assert.ok(
          Math.abs(value - truth) <= 0.02 * (truth + 1),
          `p${[50, 95, 99][i]}: ${value} for ${truth}`,
        );
      });
    },
  },
  {
    name: 'GET …/test-summaries (last_run)',
    url: (f) => `/buckets/${f.bucketKey}/test-summaries`,
    check: (f, data) => {
      assert.equal(data.length, TESTS);
      const first = data.find((s: { id: string }) => s.id === f.testId);
      assert.equal(first.last_run.test_run_id, f.newestFinished.id);
      assert.equal(first.recent_runs.length, 20);
    },
  },
];

async function ask(f: Fixture, url: string): Promise<{ ms: number; data: unknown }> {
  const started = performance.now();
  const response = await f.server.app.inject({
    method: 'GET',
    url,
    headers: { authorization: `Bearer ${f.token}` },
  });
  const ms = performance.now() - started;
  if (response.statusCode !== 200)
    throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  return { ms, data: response.json().data };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

const table: { dialect: string; read: string; p50: number; p99: number; max: number }[] = [];
log(`history benchmark — ${CPU}, ${os.cpus().length} CPUs, Node ${process.version}`);
for (const dialect of DIALECTS) {
  const f = await fixture(dialect);
  if (f === null) {
    log(`${dialect}: not reachable, skipped`);
    continue;
  }
  try {
    for (const read of READS) {
      const url = read.url(f);
      read.check(f, (await ask(f, url)).data);
      for (let i = 0; i < WARMUP; i++) await ask(f, url);
      const times: number[] = [];
      for (let i = 0; i < REQUESTS; i++) times.push((await ask(f, url)).ms);
      times.sort((a, b) => a - b);
      const row = {
        dialect,
        read: read.name,
        p50: quantile(times, 0.5),
        p99: quantile(times, 0.99),
        max: times.at(-1)!,
      };
      table.push(row);
      log(
        `  ${read.name}: p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms, max ${row.max.toFixed(2)} ms`,
      );
    }
  } finally {
    await f.close();
  }
}

console.log(
  `\nHistory benchmark: ${RUNS.toLocaleString('en-US')} runs of one test over ${DAYS} days, ${TESTS} tests, ` +
    `${REQUESTS} requests per read; Node ${process.version}, ${os.cpus().length} CPUs (${CPU})\n`,
);
console.log('| Dialect | Read | p50 ms | p99 ms | max ms | p99 < 20 ms |');
console.log('| --- | --- | --: | --: | --: | --- |');
for (const row of table)
  console.log(
    `| ${row.dialect} | ${row.read} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.max.toFixed(2)} | ${row.p99 < TARGET_MS ? 'PASS' : 'FAIL'} |`,
  );
console.log(
  JSON.stringify({
    benchmark: 'history',
    cpu: CPU,
    node: process.version,
    runs: RUNS,
    days: DAYS,
    reads: table,
  }),
);
process.exitCode = table.length > 0 && table.every((row) => row.p99 < TARGET_MS) ? 0 : 1;
