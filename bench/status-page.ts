/**
 * Status page benchmark: the server time of `GET /status/<slug>` (HTML and JSON) for a page of 20
 * tests with a year of history each (daily rollups and the runs behind them, filled through the
 * store as finishing runs fill them), on SQLite and, with BENCH_DIALECTS=sqlite,postgres, on
 * PostgreSQL. Requests go through fastify.inject, so the figures are the server's own time without a
 * network. Checks first that the rollups agree with the runs they count. See bench/README.md,
 * "Status page".
 *
 * Settings (env): BENCH_REQUESTS (measured requests per representation, default 200),
 * BENCH_WARMUP (requests before measuring, default 20), BENCH_TESTS (default 20), BENCH_DAYS (days of
 * history, default 365), BENCH_RUNS_PER_DAY (runs per test and day, default 24), BENCH_DIALECTS
 * (`sqlite` default, or `sqlite,postgres`). The PostgreSQL run creates and drops a database on the
 * server of TEST_DATABASE_URL, as the tests do.
 *
 * Exit status: 0 when every request answered 200 and the rollups match the runs, 1 otherwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/config.js';
import { nowFloat } from '../src/domain/ids.js';
import { createServer } from '../src/main.js';
import { Store } from '../src/store/store.js';
import { freshPostgresDatabase } from '../test/helpers/dialects.js';
import { fillRunHistory } from '../test/helpers/status-history.js';
import { numberSetting } from './shared/settings.js';

const REQUESTS = Math.round(numberSetting('BENCH_REQUESTS', 200, 1));
const WARMUP = Math.round(numberSetting('BENCH_WARMUP', 20, 0));
const TESTS = Math.round(numberSetting('BENCH_TESTS', 20, 1));
const DAYS = Math.round(numberSetting('BENCH_DAYS', 365, 1));
const RUNS_PER_DAY = Math.round(numberSetting('BENCH_RUNS_PER_DAY', 24, 1));
const DIALECTS = (process.env.BENCH_DIALECTS || 'sqlite').split(',').filter(Boolean);
const TARGET_MS = 200;

const log = (line: string) => process.stderr.write(`${line}\n`);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Figures {
  dialect: string;
  runs: number;
  fill_seconds: number;
  rollups_match_runs: boolean;
  html: { p50_ms: number; p99_ms: number; bytes: number };
  json: { p50_ms: number; p99_ms: number; bytes: number };
}

async function measure(dialect: string): Promise<Figures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-status-'));
  const database = dialect === 'postgres' ? await freshPostgresDatabase() : undefined;
  const store = Store.open({ databaseUrl: database?.url, dataDir });
  try {
    await store.migrate();
    const config = loadConfig({
      DATA_DIR: dataDir,
      PUBLIC_URL: 'http://vigil.bench',
      LOG_LEVEL: 'silent',
      ...(database && { DATABASE_URL: database.url }),
    });
    const server = await createServer(config, {
      store,
      scheduler: false,
      dashboardDir: path.join(dataDir, 'none'),
    });
    try {
      const boot = await server.services.accounts.bootstrap({
        email: 'bench@example.com',
        name: 'Bench',
        password: 'correct horse battery',
      });
      const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
        const response = await server.app.inject({
          method,
          url,
          headers: {
            authorization: `Bearer ${boot.access_token}`,
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { payload: JSON.stringify(body) }),
        });
        if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.body}`);
        return response.json().data;
      };
      const tests: { id: string; environmentId: string }[] = [];
      for (let i = 0; i < TESTS; i += 1) {
        const created = await call('POST', `/buckets/${boot.bucket_key}/tests`, { name: `Check ${i + 1}` });
        tests.push({ id: created.id, environmentId: created.default_environment_id });
      }
      log(`${dialect}: filling ${TESTS} tests × ${DAYS} days × ${RUNS_PER_DAY} runs…`);
      const started = performance.now();
      const runs = await fillRunHistory(store, {
        bucketKey: boot.bucket_key,
        tests,
        days: DAYS,
        runsPerDay: RUNS_PER_DAY,
        now: nowFloat(),
        // Every test fails now and then; every fifth test is failing at the end.
        fails: (index, daysAgo, run) =>
          (daysAgo * 31 + run * 7 + index) % 97 === 0 ||
          (index % 5 === 0 && daysAgo === 0 && run === RUNS_PER_DAY - 1),
      });
      const fillSeconds = (performance.now() - started) / 1000;

      // The rollups hold exactly what the runs say, per test.
      const fromRuns = await store.db
        .selectFrom('test_runs')
        .select(['test_id', sql<number>`count(*)`.as('runs')])
        .where('result', 'in', ['pass', 'fail'])
        .groupBy('test_id')
        .execute();
      const fromRollups = await store.db
        .selectFrom('test_daily_rollups')
        .select(['test_id', sql<number>`sum(passes + fails)`.as('runs')])
        .groupBy('test_id')
        .execute();
      const counted = new Map(fromRollups.map((row) => [row.test_id, Number(row.runs)]));
      const match =
        fromRuns.length === TESTS && fromRuns.every((row) => counted.get(row.test_id) === Number(row.runs));

      await call('POST', `/buckets/${boot.bucket_key}/status-pages`, {
        slug: 'bench',
        title: 'Bench status',
        groups: [0, 1, 2, 3].map((g) => ({
          name: `Group ${g + 1}`,
          tests: tests
            .filter((_, i) => i % 4 === g)
            .map((test, i) => ({ test_id: test.id, name: `Service ${g + 1}.${i + 1}` })),
        })),
      });
      const time = async (accept: string) => {
        const samples: number[] = [];
        let bytes = 0;
        for (let i = 0; i < WARMUP + REQUESTS; i += 1) {
          const t0 = performance.now();
          const response = await server.app.inject({
            method: 'GET',
            url: '/status/bench',
            headers: { accept },
          });
          const elapsed = performance.now() - t0;
          if (response.statusCode !== 200) throw new Error(`/status/bench answered ${response.statusCode}`);
          bytes = response.rawPayload.length;
          if (i >= WARMUP) samples.push(elapsed);
        }
        samples.sort((a, b) => a - b);
        const round = (ms: number) => Math.round(ms * 100) / 100;
        return { p50_ms: round(percentile(samples, 50)), p99_ms: round(percentile(samples, 99)), bytes };
      };
      const html = await time('text/html');
      const json = await time('application/json');
      return {
        dialect,
        runs,
        fill_seconds: Math.round(fillSeconds * 10) / 10,
        rollups_match_runs: match,
        html,
        json,
      };
    } finally {
      await server.stop();
    }
  } finally {
    await store.close();
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`Status page benchmark · ${cpu} · ${os.cpus().length} CPUs · Node ${process.version}`);
console.log(
  `${TESTS} tests × ${DAYS} days × ${RUNS_PER_DAY} runs/day; ${REQUESTS} requests per representation after ${WARMUP} warm-up; target p99 < ${TARGET_MS} ms`,
);
const results: Figures[] = [];
let ok = true;
for (const dialect of DIALECTS) {
  const figures = await measure(dialect);
  results.push(figures);
  ok &&= figures.rollups_match_runs;
  console.log(
    `${dialect.padEnd(8)} runs ${figures.runs} (filled in ${figures.fill_seconds} s), rollups match runs: ${figures.rollups_match_runs ? 'yes' : 'NO'}`,
  );
  for (const kind of ['html', 'json'] as const) {
    const f = figures[kind];
    console.log(
      `${''.padEnd(8)} ${kind.padEnd(4)} p50 ${f.p50_ms} ms, p99 ${f.p99_ms} ms, ${f.bytes} bytes${f.p99_ms < TARGET_MS ? '' : ' (over target)'}`,
    );
  }
}
console.log(JSON.stringify({ cpu, node: process.version, results }));
process.exitCode = ok ? 0 : 1;
