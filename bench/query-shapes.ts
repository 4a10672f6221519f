/**
 * The test detail read, one query shape against another, measured inside one process with nothing
 * else in the way (no HTTP, no serialisation): which shape costs least on this machine, and by how
 * much. Both shapes answer the same rows, checked before anything is timed.
 *
 * - `json`: one statement building the steps, environments, schedules and last run as JSON arrays
 *   inside the database (json_group_array on SQLite, json_agg on PostgreSQL);
 * - `plain`: the test with its creator and the membership check in one indexed read, then one plain
 *   indexed read per part (steps, environments, schedules, last finished run).
 *
 * Settings (env): BENCH_ITERATIONS (reads per shape and round, default 3000), BENCH_ROUNDS (default 7,
 * shapes alternate within each round), BENCH_RUNS (stored runs of the test, default 2000),
 * BENCH_DIALECTS (sqlite,postgres by default; postgres is skipped when none answers at DATABASE_URL or
 * postgres://root@127.0.0.1:5432/test).
 *
 * Prints, per dialect and shape, the median CPU µs per read over the rounds and the ratio to the
 * cheapest shape; the last stdout line is the results as JSON, with the CPU model.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createServices } from '../src/main.js';
import { newId } from '../src/domain/ids.js';
import type { Actor } from '../src/services/principal.js';
import type { TestRunRow } from '../src/store/database.js';
import { testsRepo } from '../src/store/repositories/tests.js';
import type { Store } from '../src/store/store.js';
import { runRow } from '../test/helpers/seed.js';
import { openBenchStore } from './shared/stores.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',').filter(Boolean);
const PG_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const CPU = os.cpus()[0]?.model.trim() ?? 'unknown CPU';

const json = { 'Content-Type': 'application/json' };
const STEPS = [
  {
    step_type: 'request',
    method: 'POST',
    url: 'https://api.example.com/login',
    headers: json,
    body: '{"user":"{{user}}"}',
    assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
    variables: [{ name: 'token', source: 'response_json', property: 'token' }],
  },
  {
    step_type: 'request',
    method: 'GET',
    url: 'https://api.example.com/me',
    headers: { Authorization: 'Bearer {{token}}' },
    assertions: [{ source: 'response_json', property: 'plan', comparison: 'equal', value: 'pro' }],
    variables: [{ name: 'user_id', source: 'response_json', property: 'id' }],
    scripts: ['assert.equal(response.status, 200);'],
  },
  { step_type: 'pause', duration: 1 },
  {
    step_type: 'condition',
    left_value: '{{plan}}',
    comparison: 'equal',
    right_value: 'pro',
    steps: [
      {
        step_type: 'request',
        method: 'POST',
        url: 'https://api.example.com/orders',
        headers: json,
        body: '{}',
      },
      { step_type: 'request', method: 'GET', url: 'https://api.example.com/orders/{{order_id}}' },
    ],
  },
  { step_type: 'request', method: 'DELETE', url: 'https://api.example.com/users/{{user_id}}' },
];

interface Fixture {
  store: Store;
  bucketKey: string;
  testId: string;
  accountId: string;
  close: () => Promise<void>;
}

async function fixture(dialect: string): Promise<Fixture | null> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-shapes-'));
  const opened = await openBenchStore(dialect, dataDir, PG_URL, 'vigil_shapes');
  if (opened === null) return null;
  const { store } = opened;
  await store.migrate();
  const services = createServices(store);
  const account = await services.accounts.bootstrap({
    email: 'shapes@example.com',
    name: 'Shapes',
    password: 'correct horse battery',
  });
  const actor: Actor = {
    accountId: account.account_id,
    tokenId: '',
    name: 'Shapes',
    email: 'shapes@example.com',
    scopes: new Set(),
    source: 'api',
  };
  const [created] = await services.tests.create(
    actor,
    account.bucket_key,
    [
      {
        name: 'Checkout flow',
        steps: STEPS,
        environments: [{ name: 'Production' }, { name: 'Staging', initial_variables: { user: 'stage' } }],
      } as never,
    ],
    { isArray: false },
  );
  const testId = created!.test.id;
  const environmentId = created!.environments[0]!.id;
  await store.db
    .insertInto('schedules')
    .values({
      id: newId(),
      test_id: testId,
      environment_id: environmentId,
      interval: '1h',
      note: '',
      created_at: 1_700_000_000,
    })
    .execute();
  const rows: TestRunRow[] = [];
  for (let i = 0; i < RUNS; i++)
    rows.push(runRow(testId, account.bucket_key, i % 7 === 0 ? 'fail' : 'pass', 1_700_000_000 + i * 60, 42));
  for (let i = 0; i < rows.length; i += 200)
    await store.db
      .insertInto('test_runs')
      .values(rows.slice(i, i + 200))
      .execute();
  return {
    store,
    bucketKey: account.bucket_key,
    testId,
    accountId: account.account_id,
    close: async () => {
      await store.close();
      await opened.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

type Shape = (f: Fixture) => Promise<unknown>;

const SHAPES: Record<string, Shape> = {
  json: (f) => testsRepo.detailForAccountJson(f.store.db, f.bucketKey, f.testId, f.accountId),
  plain: (f) => testsRepo.detailForAccountPlain(f.store.db, f.bucketKey, f.testId, f.accountId),
};

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function measure(f: Fixture, shape: Shape): Promise<number> {
  const start = cpuMicros();
  for (let i = 0; i < ITERATIONS; i++) await shape(f);
  return (cpuMicros() - start) / ITERATIONS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const results: Record<string, Record<string, number>> = {};
console.log(
  `query shapes of the test detail read — ${CPU}, ${os.cpus().length} CPUs, Node ${process.version}`,
);
console.log(`${ITERATIONS} reads per shape and round, ${ROUNDS} rounds, ${RUNS} stored runs of the test`);
for (const dialect of DIALECTS) {
  const f = await fixture(dialect);
  if (!f) {
    console.log(`${dialect}: skipped (no PostgreSQL at ${PG_URL})`);
    continue;
  }
  try {
    const [a, b] = [await SHAPES.json!(f), await SHAPES.plain!(f)];
    assert.deepEqual(b, a, `${dialect}: the two shapes answer the same rows`);
    for (const shape of Object.values(SHAPES)) await measure(f, shape); // warm-up
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(SHAPES).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? Object.keys(SHAPES) : Object.keys(SHAPES).reverse();
      for (const name of order) samples[name]!.push(await measure(f, SHAPES[name]!));
    }
    const medians = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
    const cheapest = Math.min(...Object.values(medians));
    for (const [name, value] of Object.entries(medians)) {
      console.log(
        `${dialect.padEnd(8)} ${name.padEnd(6)} ${value.toFixed(1).padStart(7)} µs CPU/read  ${(value / cheapest).toFixed(2)}×`,
      );
    }
    results[dialect] = medians;
  } finally {
    await f.close();
  }
}
console.log(
  JSON.stringify({
    cpu: CPU,
    node: process.version,
    iterations: ITERATIONS,
    rounds: ROUNDS,
    runs: RUNS,
    micros_per_read: results,
  }),
);
