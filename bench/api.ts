/**
 * API benchmark: Vigil (`vigil serve`, as `npm start` runs it) against the floor (bench/floor-server.ts,
 * a bare node:http server with hand-written SQL over the same data). See bench/README.md.
 *
 * Settings (env): BENCH_DURATION (seconds per case, default 10), BENCH_WARMUP (seconds of warm-up
 * per case, default 2), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (measured runs per case and
 * server, default 1), BENCH_CASES (get_test,list_tests,create_test by default), BENCH_POST_MAX_RATE
 * (the highest POST rate the bucket pool is sized for, default 10000 req/s), BENCH_VIGIL_NODE_ARGS
 * and BENCH_FLOOR_NODE_ARGS (extra node flags for the servers, e.g. --cpu-prof).
 *
 * Human-readable results go to stdout, progress to stderr, and the last stdout line is the results
 * as JSON. Exit status: 0 when every request succeeded (whether or not the targets are met), 1 on
 * any error, including non-2xx responses under load.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { npmStart, startCommand } from './shared/npm-start.js';
import { numberSetting } from './shared/settings.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MB = 1024 * 1024;

const DURATION = numberSetting('BENCH_DURATION', 10, 1);
const WARMUP = numberSetting('BENCH_WARMUP', 2, 0);
const CONNECTIONS = Math.round(numberSetting('BENCH_CONNECTIONS', 50, 1));
const POST_MAX_RATE = numberSetting('BENCH_POST_MAX_RATE', 10_000, 1);
/** Measured runs per case and server, alternating Vigil and the floor; medians are reported. */
const ROUNDS = Math.round(numberSetting('BENCH_ROUNDS', 1, 1));
/** Extra node flags for the servers, e.g. `--cpu-prof --cpu-prof-dir=prof` to profile under load. */
const VIGIL_NODE_ARGS = (process.env.BENCH_VIGIL_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const FLOOR_NODE_ARGS = (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const CASE_IDS = ['get_test', 'list_tests', 'create_test'] as const;
type CaseId = (typeof CASE_IDS)[number];
/** Comma-separated case ids to run; all by default, `none` to measure only start-up and idle RSS. */
const ONLY_CASES = (process.env.BENCH_CASES ?? '').split(',').filter(Boolean);

/** Test-specific environments a bucket may hold (spec 8); every new test adds one. */
const TESTS_PER_BUCKET = 100;
/** The targets of each case, Vigil's req/s ÷ the floor's. */
const TARGET_RATIOS: Record<CaseId, number> = { get_test: 0.75, list_tests: 0.75, create_test: 0.65 };
const TARGET_IDLE_RSS_MB = 100;
/**
 * Seconds without requests after the data creation before the idle RSS is read. V8 gives back the
 * memory of a burst of work only once the process has been quiet for a while (its memory reducer
 * runs some seconds after the last allocations), and a server at rest is past that point.
 */
const IDLE_SETTLE_S = numberSetting('BENCH_IDLE_SETTLE', 60, 1);

/** The environment of the servers and the bootstrap: this one, always on the SQLite store. */
function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...settings };
  delete env.DATABASE_URL;
  return env;
}

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------------------------------------
// Child processes and clean-up

interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  output: string[];
  exited: Promise<number | null>;
}

const children = new Set<Child>();
let tempDir: string | undefined;

function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`${name} did not start`);
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = { name, process: proc, pid: proc.pid, output, exited };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 5_000);
  await child.exited;
  clearTimeout(timer);
}

async function cleanup(): Promise<void> {
  await Promise.all([...children].map(stopChild));
  if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}

// Last resort when the process ends another way: nothing is left running or on disk.
process.on('exit', () => {
  for (const child of children) child.process.kill('SIGKILL');
  if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHealth(child: Child, baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) {
      throw new Error(
        `${child.name} exited with ${child.process.exitCode}:\n${child.output.slice(-30).join('\n')}`,
      );
    }
    try {
      const response = await fetch(`${baseUrl}/health`);
      // Vigil's answer names its Node and SQLite driver, the figures' context.
      if (response.ok) return void process.stderr.write(`${child.name} /health: ${await response.text()}\n`);
    } catch {
      // not listening yet
    }
    await delay(50);
  }
  throw new Error(`${child.name} did not answer ${baseUrl}/health within 60 s`);
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system, all threads) a process has used, in ms, from /proc/<pid>/stat. */
function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Resident set size of a process in bytes, from /proc/<pid>/status. */
function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Samples a process's RSS every 100 ms until stopped; answers the highest value seen. */
function watchRss(pid: number): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // the process is gone; the run will report that
    }
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssOf(pid));
      } catch {
        // as above
      }
      return peak;
    },
  };
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

function checkBuild(): void {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first');
  }
  if (newestMtime(path.join(ROOT, 'src')) > newestMtime(path.join(ROOT, 'dist'))) {
    log('warning: src/ has changes newer than dist/; run `npm run build` to benchmark them');
  }
}

// ---------------------------------------------------------------------------------------------
// Talking to the servers

interface Bootstrap {
  access_token: string;
  bucket_key: string;
  account_id: string;
}

/**
 * Bootstraps straight into `dataDir`. `publicUrl` is where the server on that store will answer:
 * bootstrap checks that no other server there refuses its token (a development server on the
 * default port would otherwise).
 */
function bootstrap(dataDir: string, publicUrl: string): Promise<Bootstrap> {
  const args = [
    'bin/vigil.js',
    'bootstrap',
    '--email',
    'bench@example.com',
    '--name',
    'Bench User',
    '--password',
    'bench-password-1',
    '--json',
  ];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, env: childEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PUBLIC_URL: publicUrl }) },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`bootstrap failed: ${error.message}\n${stderr}`));
        const line = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(line) as Bootstrap);
        } catch {
          reject(new Error(`bootstrap printed no JSON line:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

interface Envelope<T> {
  data: T;
  meta: { status: string };
  error: unknown;
}

class Client {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async call<T>(method: string, url: string, body: unknown, expected: number): Promise<Envelope<T>> {
    const { status, text } = await this.raw(method, url, body);
    if (status !== expected) {
      throw new Error(`${method} ${this.baseUrl}${url} answered ${status}, expected ${expected}: ${text}`);
    }
    return JSON.parse(text) as Envelope<T>;
  }

  async raw(method: string, url: string, body?: unknown): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${url}`, {
      method,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, text: await response.text() };
  }
}

/** Runs `fn` over items with at most `limit` calls in flight. */
async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// ---------------------------------------------------------------------------------------------
// Data

const status200 = { source: 'response_status', comparison: 'equal_number', value: 200 };
const json = { Accept: 'application/json', 'Content-Type': 'application/json' };

/** The steps added to the measured test: requests with headers, assertions and variables, a pause, a condition. */
const MEASURED_STEPS = [
  {
    step_type: 'request',
    method: 'POST',
    url: 'https://api.example.com/users',
    headers: json,
    body: '{"name":"{{name}}","email":"{{email}}"}',
    assertions: [status200, { source: 'response_json', property: 'data.id', comparison: 'not_empty' }],
    variables: [{ name: 'user_id', source: 'response_json', property: 'data.id' }],
    note: 'Sign up',
  },
  {
    step_type: 'request',
    method: 'POST',
    url: 'https://api.example.com/sessions',
    headers: json,
    body: '{"email":"{{email}}","password":"{{password}}"}',
    assertions: [status200, { source: 'response_time', comparison: 'is_less_than', value: 1000 }],
    variables: [{ name: 'token', source: 'response_json', property: 'data.token' }],
  },
  {
    step_type: 'request',
    method: 'GET',
    url: 'https://api.example.com/users/{{user_id}}',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{token}}' },
    assertions: [
      status200,
      { source: 'response_json', property: 'data.email', comparison: 'equal', value: '{{email}}' },
      { source: 'response_headers', property: 'Content-Type', comparison: 'contains', value: 'json' },
    ],
    variables: [{ name: 'plan', source: 'response_json', property: 'data.plan' }],
  },
  { step_type: 'pause', duration: 2 },
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
        headers: { ...json, Authorization: 'Bearer {{token}}' },
        body: '{"sku":"PRO-1","quantity":1}',
        assertions: [{ source: 'response_status', comparison: 'equal_number', value: 201 }],
        variables: [{ name: 'order_id', source: 'response_json', property: 'data.id' }],
      },
      {
        step_type: 'request',
        method: 'GET',
        url: 'https://api.example.com/orders/{{order_id}}',
        headers: { Accept: 'application/json', Authorization: 'Bearer {{token}}' },
        assertions: [
          status200,
          { source: 'response_json', property: 'data.status', comparison: 'equal', value: 'paid' },
        ],
      },
    ],
  },
  {
    step_type: 'request',
    method: 'DELETE',
    url: 'https://api.example.com/users/{{user_id}}',
    headers: { Authorization: 'Bearer {{token}}' },
    assertions: [{ source: 'response_status', comparison: 'equal_number', value: 204 }],
    scripts: ['log(response.status)'],
  },
];

interface CreatedTest {
  id: string;
}

interface Dataset {
  bucketKey: string;
  testId: string;
  testCount: number;
}

async function createData(client: Client, bucketKey: string): Promise<Dataset> {
  const tests = `/buckets/${bucketKey}/tests`;
  const measured = await client.call<CreatedTest>(
    'POST',
    tests,
    { name: 'Checkout flow', description: 'Signs a user up, orders a plan and cleans up' },
    201,
  );
  const testId = measured.data.id;
  for (const step of MEASURED_STEPS) await client.call('POST', `${tests}/${testId}/steps`, step, 201);
  await client.call(
    'POST',
    `${tests}/${testId}/environments`,
    { name: 'Staging', initial_variables: { a: 'b', base_url: 'https://staging.example.com' } },
    201,
  );
  await client.call('POST', `${tests}/${testId}/schedules`, { interval: '5m', note: 'Smoke' }, 201);

  // The bucket holds as many tests as its 100 test environments allow (the measured test has two).
  const fillers = TESTS_PER_BUCKET - 2;
  await inParallel(range(fillers), 8, (i) =>
    client.call(
      'POST',
      tests,
      { name: `Endpoint check ${i + 1}`, description: `Checks endpoint ${i + 1}` },
      201,
    ),
  );
  // A second bucket with another hundred tests, so the tables are not just the measured bucket.
  const other = await client.call<{ key: string }>('POST', '/buckets', { name: 'Partner APIs' }, 201);
  await inParallel(range(TESTS_PER_BUCKET), 8, (i) =>
    client.call(
      'POST',
      `/buckets/${other.data.key}/tests`,
      { name: `Partner check ${i + 1}`, description: null },
      201,
    ),
  );

  return { bucketKey, testId, testCount: 1 + fillers + TESTS_PER_BUCKET };
}

/** Empty buckets for the POST case, enough for BENCH_POST_MAX_RATE tests a second at TESTS_PER_BUCKET each. */
async function createBucketPool(client: Client): Promise<string[]> {
  const size = Math.ceil((POST_MAX_RATE * (DURATION * ROUNDS + WARMUP)) / TESTS_PER_BUCKET) + 1;
  const pool: string[] = [];
  await inParallel(range(size), 8, async (i) => {
    const bucket = await client.call<{ key: string }>('POST', '/buckets', { name: `Load ${i + 1}` }, 201);
    pool.push(bucket.data.key);
  });
  return pool;
}

class PoolExhausted extends Error {
  constructor() {
    super('the POST bucket pool is used up; raise BENCH_POST_MAX_RATE');
  }
}

/** Hands out pool buckets so that none receives more tests than its environment limit allows. */
function bucketAllocator(pool: readonly string[]): () => string {
  let slot = 0;
  return () => {
    const bucket = pool[Math.floor(slot++ / TESTS_PER_BUCKET)];
    if (!bucket) throw new PoolExhausted();
    return bucket;
  };
}

// ---------------------------------------------------------------------------------------------
// Equality of Vigil and the floor

/** Paths (JSON pointers) where two parsed JSON values differ, at most `limit` of them. */
function differences(a: unknown, b: unknown, at = '', out: string[] = [], limit = 10): string[] {
  if (out.length >= limit || isDeepStrictEqual(a, b)) return out;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      differences(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${at}/${key}`,
        out,
        limit,
      );
    }
    return out;
  }
  out.push(`${at || '/'}: vigil ${JSON.stringify(a)} ≠ floor ${JSON.stringify(b)}`);
  return out;
}

const UUID_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * Replaces what differs between two creations of the same test: each distinct id becomes `<id N>`
 * (numbered in sorted-key order, so references between fields are still compared), the trigger id
 * and `created_at` timestamps become placeholders.
 */
function maskCreated(document: unknown): unknown {
  const ids = new Map<string, string>();
  const mask = (value: unknown, key: string): unknown => {
    if (typeof value === 'string') {
      if (key === 'trigger_url') return value.replace(/\/radar\/[^/]+\/trigger$/, '/radar/<trigger>/trigger');
      return value.replace(UUID_TEXT, (id) => {
        if (!ids.has(id)) ids.set(id, `<id ${ids.size + 1}>`);
        return ids.get(id)!;
      });
    }
    if (typeof value === 'number' && key === 'created_at') return '<timestamp>';
    if (Array.isArray(value)) return value.map((item) => mask(item, ''));
    if (value && typeof value === 'object') {
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return Object.fromEntries(entries.map(([k, v]) => [k, mask(v, k)]));
    }
    return value;
  };
  return mask(document, '');
}

async function verifySameJson(
  vigil: Client,
  floor: Client,
  data: Dataset,
  nextBucket: { vigil: () => string; floor: () => string },
): Promise<string[]> {
  const checks: string[] = [];
  const compare = (what: string, a: unknown, b: unknown) => {
    const diff = differences(a, b);
    if (diff.length > 0) {
      throw new Error(`Vigil and the floor answer ${what} differently:\n  ${diff.join('\n  ')}`);
    }
    checks.push(what);
  };

  const detailPath = `/buckets/${data.bucketKey}/tests/${data.testId}`;
  const [a, b] = await Promise.all([vigil.raw('GET', detailPath), floor.raw('GET', detailPath)]);
  if (a.status !== 200 || b.status !== 200) {
    throw new Error(`GET ${detailPath}: Vigil ${a.status}, floor ${b.status}\n${a.text}\n${b.text}`);
  }
  compare('GET …/tests/<id>', JSON.parse(a.text), JSON.parse(b.text));
  const detail = JSON.parse(a.text) as Envelope<{ steps: unknown[]; environments: unknown[] }>;
  log(
    `  detail: ${detail.data.steps.length} top-level steps, ${detail.data.environments.length} environments, ` +
      `${Buffer.byteLength(a.text)} bytes (${a.text === b.text ? 'byte-identical' : 'same JSON, different bytes'})`,
  );

  const listPath = `/buckets/${data.bucketKey}/tests`;
  const [listA, listB] = await Promise.all([
    vigil.call<unknown[]>('GET', listPath, undefined, 200),
    floor.call<unknown[]>('GET', listPath, undefined, 200),
  ]);
  compare('GET …/tests', listA, listB);

  const body = { name: 'Equality check', description: 'Created by both servers' };
  const [createdA, createdB] = await Promise.all([
    vigil.call('POST', `/buckets/${nextBucket.vigil()}/tests`, body, 201),
    floor.call('POST', `/buckets/${nextBucket.floor()}/tests`, body, 201),
  ]);
  compare('POST …/tests (ids and timestamps masked)', maskCreated(createdA), maskCreated(createdB));
  return checks;
}

// ---------------------------------------------------------------------------------------------
// Load

interface Target {
  name: 'vigil' | 'floor';
  child: Child;
  client: Client;
  nextBucket: () => string;
}

interface Case {
  id: CaseId;
  label: string;
  request(target: Target): autocannon.Request;
}

interface RunFigures {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Server CPU time per completed request: steadier than req/s when other work shares the machine. */
  cpu_ms_per_req: number;
  peak_rss_mb: number;
}

const problems: string[] = [];

async function load(target: Target, benchCase: Case, seconds: number, phase: string): Promise<RunFigures> {
  const rss = watchRss(target.child.pid);
  const cpuBefore = cpuMsOf(target.child.pid);
  let poolExhausted = false;
  const request = benchCase.request(target);
  const setup = request.setupRequest;
  if (typeof setup === 'function') {
    request.setupRequest = (req, context) => {
      try {
        return setup(req, context);
      } catch (error) {
        if (!(error instanceof PoolExhausted)) throw error;
        poolExhausted = true;
        return { ...req, path: '/buckets/exhausted0000/tests' };
      }
    };
  }
  const result = await autocannon({
    url: target.client.baseUrl,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    requests: [request],
  });
  const peak = rss.stop();
  if (target.child.process.exitCode !== null) {
    throw new Error(`${target.name} exited during ${benchCase.label}:\n${target.child.output.join('\n')}`);
  }
  const cpuMs = cpuMsOf(target.child.pid) - cpuBefore;
  const figures: RunFigures = {
    rps: result.requests.average,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpu_ms_per_req: result.requests.total > 0 ? cpuMs / result.requests.total : 0,
    peak_rss_mb: peak / MB,
  };
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || poolExhausted) {
    const codes = Object.entries(result.statusCodeStats ?? {})
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, stats]) => `${stats.count ?? 0}× ${code}`)
      .join(', ');
    problems.push(
      `${target.name} ${benchCase.label} (${phase}): ${result.non2xx} non-2xx${codes ? ` (${codes})` : ''}, ` +
        `${result.errors} connection errors, ${result.timeouts} timeouts` +
        (poolExhausted ? '; the POST bucket pool ran out, raise BENCH_POST_MAX_RATE' : ''),
    );
  }
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pad = (text: string, width: number, left = false) => (left ? text.padEnd(width) : text.padStart(width));

interface CaseResult {
  label: string;
  vigil: RunFigures;
  floor: RunFigures;
  /** Vigil req/s over floor req/s (the median over rounds). */
  ratio: number;
  /** Floor CPU per request over Vigil CPU per request: the same comparison, measured in CPU time. */
  cpu_ratio: number;
  rounds: Record<'vigil' | 'floor', RunFigures[]>;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One figure set from several rounds: the median of each figure, the sum of requests and errors. */
function medianRun(runs: readonly RunFigures[]): RunFigures {
  const sum = (pick: (r: RunFigures) => number) => runs.reduce((n, r) => n + pick(r), 0);
  return {
    rps: median(runs.map((r) => r.rps)),
    p50_ms: median(runs.map((r) => r.p50_ms)),
    p99_ms: median(runs.map((r) => r.p99_ms)),
    requests: sum((r) => r.requests),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    cpu_ms_per_req: median(runs.map((r) => r.cpu_ms_per_req)),
    peak_rss_mb: Math.max(...runs.map((r) => r.peak_rss_mb)),
  };
}

function table(results: Record<string, CaseResult>): string {
  const columns: [string, number, (r: CaseResult) => string][] = [
    [`endpoint (${CONNECTIONS} connections)`, -30, (r) => r.label],
    ['Vigil req/s', 12, (r) => fmt(r.vigil.rps)],
    ['p99 ms', 8, (r) => fmt(r.vigil.p99_ms)],
    ['CPU ms/req', 11, (r) => fmt(r.vigil.cpu_ms_per_req, 2)],
    ['floor req/s', 12, (r) => fmt(r.floor.rps)],
    ['p99 ms', 8, (r) => fmt(r.floor.p99_ms)],
    ['CPU ms/req', 11, (r) => fmt(r.floor.cpu_ms_per_req, 2)],
    ['Vigil/floor', 12, (r) => `${fmt(r.ratio * 100, 1)}%`],
    ['by CPU', 8, (r) => `${fmt(r.cpu_ratio * 100, 1)}%`],
  ];
  const row = (cells: string[]) =>
    cells.map((cell, i) => pad(cell, Math.abs(columns[i]![1]), columns[i]![1] < 0)).join('');
  const header = row(columns.map(([title]) => title));
  const lines = Object.values(results).map((r) => row(columns.map(([, , value]) => value(r))));
  return [header, '-'.repeat(header.length), ...lines].join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const unknownCases = ONLY_CASES.filter(
    (id) => id !== 'none' && !(CASE_IDS as readonly string[]).includes(id),
  );
  if (unknownCases.length > 0) {
    throw new Error(
      `BENCH_CASES names unknown cases ${unknownCases.join(', ')}; known: ${CASE_IDS.join(', ')}`,
    );
  }
  checkBuild();
  tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-'));
  const dataDir = path.join(tempDir, 'vigil');
  fs.mkdirSync(path.join(tempDir, 'floor'));

  const [vigilPort, floorPort] = [await freePort(), await freePort()];
  const vigilUrl = `http://127.0.0.1:${vigilPort}`;
  const publicUrl = `http://localhost:${vigilPort}`;
  log('bootstrapping an account…');
  const account = await bootstrap(dataDir, publicUrl);

  const start = npmStart(ROOT);
  log(`starting Vigil as npm start does (${startCommand(start)}) on ${vigilUrl}…`);
  const vigilChild = startChild(
    'Vigil',
    [...VIGIL_NODE_ARGS, ...start.args],
    childEnv({
      ...start.env,
      DATA_DIR: dataDir,
      PORT: String(vigilPort),
      TRAFFIC_PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_URL: publicUrl,
      LOG_LEVEL: 'warn',
    }),
  );
  const startedAt = Date.now();
  await waitForHealth(vigilChild, vigilUrl);
  const startupMs = Date.now() - startedAt;
  const startupRss = rssOf(vigilChild.pid);

  const vigilClient = new Client(vigilUrl, account.access_token);
  log('creating data through the API…');
  const data = await createData(vigilClient, account.bucket_key);
  log(`  ${data.testCount} tests in 2 buckets; measured test ${data.testId}`);
  await delay(1_000);
  const afterDataRss = rssOf(vigilChild.pid);
  log(`  ${fmt(afterDataRss / MB, 1)} MB of RSS 1 s after; at rest for ${IDLE_SETTLE_S} s…`);
  await delay((IDLE_SETTLE_S - 1) * 1_000);
  const idleRss = rssOf(vigilChild.pid);
  const pool = await createBucketPool(vigilClient);
  log(`  ${pool.length} empty buckets for the POST case`);

  const floorUrl = `http://127.0.0.1:${floorPort}`;
  log(`starting the floor (bench/floor-server.ts) on ${floorUrl}…`);
  const floorChild = startChild(
    'floor',
    [...FLOOR_NODE_ARGS, '--import', 'tsx', 'bench/floor-server.ts'],
    childEnv({
      FLOOR_DB: path.join(dataDir, 'vigil.db'),
      FLOOR_COPY: path.join(tempDir, 'floor', 'floor.db'),
      PORT: String(floorPort),
      HOST: '127.0.0.1',
      PUBLIC_URL: publicUrl,
    }),
  );
  await waitForHealth(floorChild, floorUrl);
  await delay(500);
  const floorIdleRss = rssOf(floorChild.pid);

  const targets: Target[] = [
    {
      name: 'vigil',
      child: vigilChild,
      client: vigilClient,
      nextBucket: bucketAllocator(pool),
    },
    {
      name: 'floor',
      child: floorChild,
      client: new Client(floorUrl, account.access_token),
      nextBucket: bucketAllocator(pool),
    },
  ];
  const [vigil, floor] = targets as [Target, Target];

  log('checking that Vigil and the floor answer the same JSON…');
  const checks = await verifySameJson(vigil.client, floor.client, data, {
    vigil: vigil.nextBucket,
    floor: floor.nextBucket,
  });
  log(`  equal: ${checks.join('; ')}`);

  const auth = { authorization: `Bearer ${account.access_token}` };
  const cases: Case[] = [
    {
      id: 'get_test',
      label: 'GET /buckets/:key/tests/:id',
      request: () => ({
        method: 'GET',
        path: `/buckets/${data.bucketKey}/tests/${data.testId}`,
        headers: auth,
      }),
    },
    {
      id: 'list_tests',
      label: 'GET /buckets/:key/tests',
      request: () => ({ method: 'GET', path: `/buckets/${data.bucketKey}/tests`, headers: auth }),
    },
    {
      id: 'create_test',
      label: 'POST /buckets/:key/tests',
      request: (target) => ({
        method: 'POST',
        path: '/buckets/placeholder/tests',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Created under load', description: 'One of many' }),
        setupRequest: (req) => ({ ...req, path: `/buckets/${target.nextBucket()}/tests` }),
      }),
    },
  ];

  const results: Record<string, CaseResult> = {};
  let vigilPeakRss = Math.max(afterDataRss, idleRss);
  let floorPeakRss = floorIdleRss;
  for (const benchCase of cases.filter((c) => ONLY_CASES.length === 0 || ONLY_CASES.includes(c.id))) {
    const runs: Record<Target['name'], RunFigures[]> = { vigil: [], floor: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        if (round === 1 && WARMUP > 0) {
          log(`${benchCase.label} · ${target.name}: warm-up ${WARMUP} s…`);
          await load(target, benchCase, WARMUP, 'warm-up');
        }
        const of = ROUNDS > 1 ? ` (round ${round}/${ROUNDS})` : '';
        log(`${benchCase.label} · ${target.name}: ${DURATION} s at ${CONNECTIONS} connections${of}…`);
        const run = await load(target, benchCase, DURATION, `measured${of}`);
        log(
          `  ${fmt(run.rps)} req/s, p99 ${fmt(run.p99_ms)} ms, ${fmt(run.cpu_ms_per_req, 2)} CPU ms/req, ` +
            `peak RSS ${fmt(run.peak_rss_mb, 1)} MB`,
        );
        runs[target.name].push(run);
        if (target.name === 'vigil') vigilPeakRss = Math.max(vigilPeakRss, run.peak_rss_mb * MB);
        else floorPeakRss = Math.max(floorPeakRss, run.peak_rss_mb * MB);
      }
    }
    const vigilRuns = medianRun(runs.vigil);
    const floorRuns = medianRun(runs.floor);
    results[benchCase.id] = {
      label: benchCase.label,
      vigil: vigilRuns,
      floor: floorRuns,
      // Per round, so each ratio compares two runs made one after the other.
      ratio: median(runs.vigil.map((v, i) => v.rps / runs.floor[i]!.rps)),
      cpu_ratio: median(runs.vigil.map((v, i) => runs.floor[i]!.cpu_ms_per_req / v.cpu_ms_per_req)),
      rounds: runs,
    };
  }

  const targetsMet: { name: string; target: number; actual: number; pass: boolean }[] = [];
  for (const id of CASE_IDS) {
    const result = results[id];
    if (!result) continue;
    const target = TARGET_RATIOS[id];
    targetsMet.push({
      name: `${result.label}: Vigil ≥ ${target * 100}% of floor req/s`,
      target,
      actual: result.ratio,
      pass: result.ratio >= target,
    });
  }
  targetsMet.push({
    name: `Vigil idle RSS ≤ ${TARGET_IDLE_RSS_MB} MB (after ${IDLE_SETTLE_S} s at rest)`,
    target: TARGET_IDLE_RSS_MB,
    actual: idleRss / MB,
    pass: idleRss / MB <= TARGET_IDLE_RSS_MB,
  });

  const out: string[] = [
    '',
    `Vigil API benchmark: ${DURATION} s per case after ${WARMUP} s warm-up, ${CONNECTIONS} connections, ` +
      (ROUNDS > 1 ? `median of ${ROUNDS} alternating rounds, ` : '') +
      `Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'})`,
    `Data: ${data.testCount} tests in 2 buckets; the measured test has ${MEASURED_STEPS.length + 1} top-level steps ` +
      '(one condition with 2 embedded), 2 environments, 1 schedule',
    '',
    table(results),
    '',
    `Vigil RSS: ${fmt(startupRss / MB, 1)} MB after start-up (${fmt(startupMs)} ms), ` +
      `${fmt(afterDataRss / MB, 1)} MB 1 s after data creation, ${fmt(idleRss / MB, 1)} MB idle ` +
      `(${IDLE_SETTLE_S} s at rest), ${fmt(vigilPeakRss / MB, 1)} MB peak under load`,
    `Floor RSS: ${fmt(floorIdleRss / MB, 1)} MB idle, ${fmt(floorPeakRss / MB, 1)} MB peak under load`,
    '',
    ...targetsMet.map(
      (t) =>
        `${t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ` +
        (t.target < 1 ? `${fmt(t.actual * 100, 1)}%` : `${fmt(t.actual, 1)} MB`),
    ),
  ];
  if (problems.length > 0) out.push('', 'ERRORS during load:', ...problems.map((p) => `  ${p}`));
  process.stdout.write(`${out.join('\n')}\n`);

  const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
  const rounded = (f: RunFigures): RunFigures => ({
    ...f,
    rps: round(f.rps),
    cpu_ms_per_req: round(f.cpu_ms_per_req, 3),
    peak_rss_mb: round(f.peak_rss_mb),
  });
  const summary = {
    benchmark: 'api',
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    connections: CONNECTIONS,
    duration_s: DURATION,
    warmup_s: WARMUP,
    rounds: ROUNDS,
    data: { tests: data.testCount, measured_test_steps: MEASURED_STEPS.length + 1 },
    cases: Object.fromEntries(
      Object.entries(results).map(([id, r]) => [
        id,
        {
          label: r.label,
          vigil: rounded(r.vigil),
          floor: rounded(r.floor),
          ratio: round(r.ratio, 3),
          cpu_ratio: round(r.cpu_ratio, 3),
          ...(ROUNDS > 1 && {
            rps_by_round: {
              vigil: r.rounds.vigil.map((x) => round(x.rps)),
              floor: r.rounds.floor.map((x) => round(x.rps)),
            },
          }),
        },
      ]),
    ),
    rss_mb: {
      vigil_startup: round(startupRss / MB),
      vigil_after_data: round(afterDataRss / MB),
      vigil_idle: round(idleRss / MB),
      idle_settle_s: IDLE_SETTLE_S,
      vigil_peak: round(vigilPeakRss / MB),
      floor_idle: round(floorIdleRss / MB),
      floor_peak: round(floorPeakRss / MB),
    },
    vigil_startup_ms: startupMs,
    targets: targetsMet.map((t) => ({ ...t, actual: round(t.actual, 3) })),
    errors: problems,
    ok: problems.length === 0,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return problems.length === 0 ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  log(`\nbench:api failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  for (const child of children) {
    if (child.output.length > 0)
      log(`--- last output of ${child.name} ---\n${child.output.slice(-20).join('\n')}`);
  }
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
