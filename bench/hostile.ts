/**
 * Hostile-run benchmark: what tests written to hurt do to the service. See bench/README.md.
 *
 * 1. Step cost, in this process: Vigil's engine on a fake HTTP session (no network), a plain step
 *    (status and JSON checks) and a step with XPath checks, one run after the other.
 * 2. `vigil serve` (dist/, as `npm start` runs it, SQLite): /health latency, one request after the
 *    other, first idle, then while BENCH_HOSTILE_RUNS runs of a test whose XPath assertion is
 *    quadratic in its 18 KB XML answer are triggered at once and work.
 * 3. The same server: RSS with the sandbox threads up (after a few harmless scripts), then after
 *    BENCH_BOMB_RUNS runs of a memory-bomb script (each allocates 1 MiB at a time until the
 *    sandbox's memory limit stops it), and after BENCH_IDLE_SECONDS of idle; the MiB each bomb got
 *    shows whether the limit held.
 *
 * Settings (env): BENCH_PHASES (some of `steps,health,memory`, all by default), BENCH_HOSTILE_RUNS
 * (default 6), BENCH_BOMB_RUNS (default 10), BENCH_IDLE_SECONDS (default 10), BENCH_STEP_RUNS (runs
 * per step kind, default 2000). The last stdout line is the results as JSON.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_SETTINGS } from '../src/domain/environments.js';
import { ZERO_TIMINGS } from '../src/domain/results.js';
import { normalizeStep, type StepInput } from '../src/domain/steps.js';
import { createEngine, type RunDefinition } from '../src/runner/engine.js';
import type { HttpSession, InboundResponse } from '../src/net/client.js';
import { npmStart } from './shared/npm-start.js';
import { numberSetting } from './shared/settings.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MB = 1024 * 1024;
const HOSTILE_RUNS = Math.round(numberSetting('BENCH_HOSTILE_RUNS', 6, 1));
const BOMB_RUNS = Math.round(numberSetting('BENCH_BOMB_RUNS', 10, 1));
const IDLE_SECONDS = numberSetting('BENCH_IDLE_SECONDS', 10, 0);
const STEP_RUNS = Math.round(numberSetting('BENCH_STEP_RUNS', 2000, 10));
const PHASES = (process.env.BENCH_PHASES || 'steps,health,memory').split(',');

const XML = `<r>${'<a/>'.repeat(4_500)}</r>`;
const HOSTILE_XPATH = 'count(//a[count(//a) > 0])';
const BOMB = `for (let a = [], i = 1; ; i++) { a.push(new Uint8Array(1 << 20)); variables.set('mib', String(i)); }`;

const log = (line: string) => process.stderr.write(`${line}\n`);
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? round((Number(match[1]) * 1024) / MB) : Number.NaN;
}

// ---------------------------------------------------------------------------------------------
// 1. Step cost in this process

function fakeSession(body: string, contentType: string): () => HttpSession {
  const bytes = Buffer.from(body);
  const answer: InboundResponse = {
    status: 200,
    reason: 'OK',
    headers: { 'content-type': [contentType] },
    body: bytes,
    truncated: false,
    sizeBytes: bytes.length,
    timeMs: 1,
    timings: { ...ZERO_TIMINGS },
    remoteAddress: '127.0.0.1',
    url: 'http://bench.test/',
    redirects: 0,
  };
  return () => ({ send: async () => answer, close: async () => undefined });
}

function definitionOf(step: StepInput): RunDefinition {
  return {
    test: { id: 'bench', name: 'bench', steps: [normalizeStep(step, () => 'step-1')] },
    environment: { id: 'env', name: 'env', settings: { ...DEFAULT_SETTINGS } },
    bucket: { key: 'bench', name: 'bench', verify_ssl: true },
    region: 'local',
    agent: null,
    variables: {},
  };
}

async function stepCost(name: string, step: StepInput, body: string, contentType: string) {
  const engine = createEngine({
    scripts: { run: () => Promise.reject(new Error('no scripts here')) },
    egress: 'allow-all',
    openSession: fakeSession(body, contentType),
  });
  const definition = definitionOf(step);
  const once = async () => {
    const outcome = await engine.run(definition);
    if (outcome.result !== 'pass') throw new Error(`${name}: ${JSON.stringify(outcome.requests[0])}`);
  };
  for (let i = 0; i < Math.min(200, STEP_RUNS); i++) await once(); // warm-up, threads started
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < STEP_RUNS; i++) await once();
  const wallUs = ((performance.now() - started) * 1000) / STEP_RUNS;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / STEP_RUNS;
  log(`  ${name}: ${round(wallUs)} µs per run (wall), ${round(cpuUs)} µs CPU of this process`);
  return { wall_us: round(wallUs), cpu_us: round(cpuUs) };
}

async function measureSteps() {
  log(`step cost, ${STEP_RUNS} runs of one step each, fake HTTP session:`);
  const json = JSON.stringify({ id: 17, items: [{ id: 3 }, { id: 4 }], ok: true });
  const plain = await stepCost(
    'plain step (status + 3 JSON checks + 1 variable)',
    {
      step_type: 'request',
      method: 'GET',
      url: 'http://bench.test/x',
      assertions: [
        { source: 'response_status', comparison: 'equal_number', value: 200 },
        { source: 'response_json', property: 'id', comparison: 'equal_number', value: 17 },
        { source: 'response_json', property: 'items[0].id', comparison: 'is_a_number' },
        { source: 'response_json', property: 'ok', comparison: 'equal', value: 'true' },
      ],
      variables: [{ name: 'first', source: 'response_json', property: 'items[1].id' }],
    },
    json,
    'application/json',
  );
  const xpath = await stepCost(
    'XPath step (status + 2 XPath checks + 1 variable)',
    {
      step_type: 'request',
      method: 'GET',
      url: 'http://bench.test/x',
      assertions: [
        { source: 'response_status', comparison: 'equal_number', value: 200 },
        { source: 'response_xml', property: 'count(//item)', comparison: 'equal_number', value: 2 },
        { source: 'response_xml', property: '/order/@id', comparison: 'equal', value: '17' },
      ],
      variables: [{ name: 'first', source: 'response_xml', property: '//item[1]' }],
    },
    '<order id="17"><item>3</item><item>4</item></order>',
    'application/xml',
  );
  return { plain, xpath };
}

// ---------------------------------------------------------------------------------------------
// 2 and 3. The server

interface Server {
  url: string;
  child: ChildProcess;
  pid: number;
}

async function startServer(dataDir: string): Promise<{ server: Server; token: string; bucket: string }> {
  const port = await new Promise<number>((resolve) => {
    const probe = http.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  // PUBLIC_URL is where this server will answer: bootstrap checks that no other server there
  // refuses its token (a development server on the default port would).
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', PUBLIC_URL: url };
  delete env.DATABASE_URL;
  const boot = JSON.parse(
    execFileSync(
      process.execPath,
      [
        'bin/vigil.js',
        'bootstrap',
        '--email',
        'b@example.com',
        '--name',
        'B',
        '--password',
        'bench-password-1',
        '--json',
      ],
      { cwd: ROOT, env, encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .at(-1)!,
  ) as { access_token: string; bucket_key: string };
  const start = npmStart(ROOT);
  const child = spawn(process.execPath, start.args, {
    cwd: ROOT,
    env: { ...env, ...start.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; ; i++) {
    if (i > 600) throw new Error('vigil serve did not answer /health within 60 s');
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not yet listening
    }
    await delay(100);
  }
  return { server: { url, child, pid: child.pid! }, token: boot.access_token, bucket: boot.bucket_key };
}

/** The server and what the phases need to drive it. */
interface Session {
  server: Server;
  base: string;
  createTest(name: string, step: Record<string, unknown>): Promise<{ id: string; trigger: string }>;
  trigger(test: { trigger: string }): Promise<string>;
  runOf(testId: string, runId: string): Promise<any>;
  finish(test: { id: string }, runId: string): Promise<any>;
}

const ended = (run: { result: string }) => run.result !== 'queued' && run.result !== 'working';

async function openSession(server: Server, token: string, bucket: string, base: string): Promise<Session> {
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as { data: any };
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  const runOf = (testId: string, runId: string) =>
    api('GET', `/buckets/${bucket}/tests/${testId}/results/${runId}`);
  return {
    server,
    base,
    async createTest(name, step) {
      const created = await api('POST', `/buckets/${bucket}/tests`, { name });
      const test = await api('PUT', `/buckets/${bucket}/tests/${created.id}`, {
        steps: [{ step_type: 'request', method: 'GET', ...step }],
      });
      return {
        id: test.id as string,
        trigger: (test.trigger_url as string).replace(/^https?:\/\/[^/]+/, server.url),
      };
    },
    async trigger(test) {
      for (;;) {
        const response = await fetch(test.trigger, { method: 'POST' });
        const body = (await response.json()) as { data: { runs: { test_run_id: string }[] } };
        // Trigger URLs are rate limited (10 per 10 s): wait as told.
        if (response.status === 429) {
          await delay(Number(response.headers.get('retry-after') ?? 1) * 1000);
          continue;
        }
        if (response.status !== 201) throw new Error(`trigger answered ${response.status}`);
        return body.data.runs[0]!.test_run_id;
      }
    },
    runOf,
    async finish(test, runId) {
      let run = await runOf(test.id, runId);
      while (!ended(run)) {
        await delay(100);
        run = await runOf(test.id, runId);
      }
      return run;
    },
  };
}

/** /health one request after the other until `done()` says so; answers latencies in ms. */
async function pollHealth(server: Server, done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!done()) {
    const started = performance.now();
    const response = await fetch(`${server.url}/health`);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`/health answered ${response.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

function summary(latencies: number[]) {
  return {
    requests: latencies.length,
    p50_ms: round(percentile(latencies, 50), 2),
    p99_ms: round(percentile(latencies, 99), 2),
    max_ms: round(Math.max(...latencies), 2),
  };
}

/** 2. /health idle, then while the hostile XPath runs work. */
async function measureHealth(session: Session) {
  const { server } = session;
  const idleUntil = Date.now() + 2_000;
  const idle = summary(await pollHealth(server, () => Date.now() > idleUntil));
  log(`/health idle: ${JSON.stringify(idle)}`);
  const hostileTest = await session.createTest('Hostile XPath', {
    url: `${session.base}/feed.xml`,
    assertions: [
      { source: 'response_xml', property: HOSTILE_XPATH, comparison: 'equal_number', value: 4500 },
    ],
  });
  const hostileIds = await Promise.all(
    Array.from({ length: HOSTILE_RUNS }, () => session.trigger(hostileTest)),
  );
  const started = performance.now();
  let runs: any[] = [];
  let finished = false;
  const watcher = (async () => {
    while (!finished) {
      runs = await Promise.all(hostileIds.map((id) => session.runOf(hostileTest.id, id)));
      finished = runs.every(ended);
      if (!finished) await delay(200);
    }
  })();
  const during = summary(await pollHealth(server, () => finished));
  await watcher;
  const seconds = round((performance.now() - started) / 1000, 2);
  const errors = [...new Set(runs.map((run) => run.requests[0]?.error ?? run.error))];
  log(
    `/health during ${HOSTILE_RUNS} hostile runs (${seconds} s): ${JSON.stringify(during)}; step errors ${JSON.stringify(errors)}`,
  );
  return {
    idle,
    during_hostile: during,
    hostile_runs: HOSTILE_RUNS,
    hostile_seconds: seconds,
    step_errors: errors,
  };
}

/** 3. RSS with the sandbox up, around the memory bombs, and after idle. */
async function measureMemory(session: Session) {
  const { server } = session;
  const bombTest = await session.createTest('Memory bomb', { url: `${session.base}/ok`, scripts: [BOMB] });
  // A few harmless scripts first, so that the sandbox threads are up before the first figure.
  const harmless = await session.createTest('Harmless script', {
    url: `${session.base}/ok`,
    scripts: ["log('ok')"],
  });
  for (let i = 0; i < 4; i++) await session.finish(harmless, await session.trigger(harmless));
  await delay(1_000);
  const before = rssMb(server.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 100);
  const reached: number[] = [];
  const errors = new Set<string>();
  for (let i = 0; i < BOMB_RUNS; i++) {
    const run = await session.finish(bombTest, await session.trigger(bombTest));
    reached.push(Number(run.variables?.mib ?? Number.NaN));
    errors.add(run.requests[0]?.scripts[0]?.error ?? run.error);
  }
  clearInterval(sampler);
  const afterBombs = rssMb(server.pid);
  await delay(IDLE_SECONDS * 1000);
  const afterIdle = rssMb(server.pid);
  log(
    `RSS: ${before} MB before, peak ${peak}, ${afterBombs} after ${BOMB_RUNS} bombs, ${afterIdle} after ${IDLE_SECONDS} s idle; MiB each bomb got: ${reached.join(', ')}; errors ${JSON.stringify([...errors])}`,
  );
  return {
    bomb_runs: BOMB_RUNS,
    mib_reached: reached,
    errors: [...errors],
    rss_mb: { before, peak, after_bombs: afterBombs, after_idle: afterIdle, idle_seconds: IDLE_SECONDS },
  };
}

async function main() {
  const results: Record<string, unknown> = { cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version };
  if (PHASES.includes('steps')) results.steps = await measureSteps();
  if (PHASES.includes('health') || PHASES.includes('memory')) {
    const upstream = http.createServer((request, response) => {
      const xml = request.url === '/feed.xml';
      response.writeHead(200, { 'content-type': xml ? 'application/xml' : 'application/json' });
      response.end(xml ? XML : '{"ok":true}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-hostile-'));
    const { server, token, bucket } = await startServer(dataDir);
    try {
      const session = await openSession(server, token, bucket, base);
      if (PHASES.includes('health')) results.health = await measureHealth(session);
      if (PHASES.includes('memory')) results.memory = await measureMemory(session);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
      upstream.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  console.log(JSON.stringify(results));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
