/**
 * Ingest benchmark: `POST /buckets/<key>/messages` with batches of 50 messages of about 1 KB on
 * Vigil (as `npm start` runs it) against a floor (bench/ingest/floor-server.ts: parse and insert,
 * nothing else), at SQLite's synchronous NORMAL and FULL, and on PostgreSQL; then list, window and
 * detail reads in a bucket of BENCH_FILL messages. See bench/README.md, "Ingest".
 *
 * Settings (env): BENCH_DURATION (seconds per measured run, default 10), BENCH_WARMUP (seconds,
 * default 2), BENCH_CONNECTIONS (ingest connections, default 10), BENCH_READ_CONNECTIONS (default 1),
 * BENCH_FILL (messages in the read bucket, default 1000000), BENCH_PHASES (`ingest,reads`),
 * BENCH_READS (`list,window,detail`), BENCH_VIGIL_NODE_ARGS (extra node flags for Vigil, e.g.
 * --cpu-prof), BENCH_INGEST_STORES (`NORMAL,FULL,postgres`: which ingest runs to make). The
 * PostgreSQL run creates and drops a database on the server of TEST_DATABASE_URL, as the tests do
 * (postgres://root@127.0.0.1:5432/postgres by default).
 *
 * Human-readable results go to stdout, progress to stderr, and the last stdout line is the results
 * as JSON. Exit status: 0 when every request succeeded and every acknowledged message was stored
 * (whether or not the targets are met), 1 otherwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SQLITE_SYNCHRONOUS, type SqliteSynchronous as Synchronous } from '../src/config/config.js';
import { ADMIN_URL, freshPostgresDatabase } from '../test/helpers/dialects.js';
import { openFloorDb } from './sqlite.js';
import type { LoadResult, LoadSpec } from './ingest/load.js';
import { benchBatch } from './ingest/messages.js';
import {
  type Child,
  checkBuild,
  cleanup,
  cpuMsOf,
  freePort,
  isRunning,
  log,
  MB,
  ROOT,
  runChild,
  startChild,
  stopChild,
  tempDir,
  waitForHealth,
} from './ingest/processes.js';
import { npmStart, startCommand } from './shared/npm-start.js';
import { numberSetting } from './shared/settings.js';

const DURATION = numberSetting('BENCH_DURATION', 10, 1);
const WARMUP = numberSetting('BENCH_WARMUP', 2, 0);
const CONNECTIONS = Math.round(numberSetting('BENCH_CONNECTIONS', 10, 1));
const READ_CONNECTIONS = Math.round(numberSetting('BENCH_READ_CONNECTIONS', 1, 1));
const FILL = Math.round(numberSetting('BENCH_FILL', 1_000_000, 1_000));
const PHASES = (process.env.BENCH_PHASES || 'ingest,reads').split(',').filter(Boolean);
const READS = (process.env.BENCH_READS || 'list,window,detail').split(',').filter(Boolean);
const VIGIL_NODE_ARGS = (process.env.BENCH_VIGIL_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
/** How `npm start` starts Vigil; every Vigil of the benchmark starts so. */
const START = npmStart(ROOT);
/** Which ingest runs to make: SQLite at each durability setting, PostgreSQL. */
const INGEST_STORES = (process.env.BENCH_INGEST_STORES || 'NORMAL,FULL,postgres').split(',').filter(Boolean);

const BATCH = 50;
/** Message ids the detail reads pick from at random, spread evenly over the filled bucket. */
const DETAIL_SAMPLE = 10_000;
/** The filled bucket spans this many seconds, ending now. */
const FILL_SPAN = 7 * 86_400;
const WINDOW = 3_600;

const TARGET_RATIO = 0.8;
/** Vigil on PostgreSQL against the SQLite floor at NORMAL. */
const TARGET_POSTGRES_RATIO = 0.5;
const TARGET_LIST_P99_MS = 50;
const TARGET_DETAIL_P99_MS = 5;
const TARGET_RSS_MB = 300;

// ---------------------------------------------------------------------------------------------
// Servers

interface Server {
  label: string;
  kind: 'vigil' | 'floor';
  child: Child;
  url: string;
  headers: Record<string, string>;
  bucket: string;
}

interface Account {
  access_token: string;
  bucket_key: string;
}

function vigilEnv(dataDir: string, settings: Record<string, string>, databaseUrl?: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...settings };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  return env;
}

/**
 * Bootstraps straight into the store. PUBLIC_URL names a port nothing answers on: bootstrap checks
 * that no server there refuses its token (a development server on the default port would).
 */
async function bootstrap(dataDir: string, databaseUrl?: string): Promise<Account> {
  const args = ['bin/vigil.js', 'bootstrap', '--email', 'bench@example.com', '--name', 'Bench'];
  const lines = await runChild(
    'bootstrap',
    [...args, '--password', 'bench-password-1', '--json'],
    vigilEnv(dataDir, { PUBLIC_URL: `http://127.0.0.1:${await freePort()}` }, databaseUrl),
  );
  return JSON.parse(lines.at(-1) ?? '') as Account;
}

/** Starts Vigil as `npm start` does, on a store bootstrapped with `account` (by default a new one). */
async function startVigil(options: {
  label: string;
  dataDir: string;
  synchronous: Synchronous;
  databaseUrl?: string;
  account?: Account;
}): Promise<Server> {
  const account = options.account ?? (await bootstrap(options.dataDir, options.databaseUrl));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startChild(
    options.label,
    [...VIGIL_NODE_ARGS, ...START.args],
    vigilEnv(
      options.dataDir,
      {
        ...START.env,
        PORT: String(port),
        TRAFFIC_PORT: '0',
        HOST: '127.0.0.1',
        PUBLIC_URL: url,
        SQLITE_SYNCHRONOUS: options.synchronous,
      },
      options.databaseUrl,
    ),
  );
  await waitForHealth(child, url);
  return {
    label: options.label,
    kind: 'vigil',
    child,
    url,
    headers: { authorization: `Bearer ${account.access_token}` },
    bucket: account.bucket_key,
  };
}

async function startFloor(label: string, file: string, synchronous: Synchronous): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startChild('floor', ['--import', 'tsx', 'bench/ingest/floor-server.ts'], {
    ...process.env,
    FLOOR_DB: file,
    FLOOR_SYNCHRONOUS: synchronous,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  await waitForHealth(child, url);
  return { label, kind: 'floor', child, url, headers: {}, bucket: 'floor0000000' };
}

// ---------------------------------------------------------------------------------------------
// Load

const problems: string[] = [];
let specCount = 0;
let workDir = '';

/** Runs bench/ingest/load.ts in a process of its own and answers its figures. */
async function load(spec: Omit<LoadSpec, 'url'>, server: Server, phase: string): Promise<LoadResult> {
  const file = path.join(workDir, `load-${++specCount}.json`);
  fs.writeFileSync(file, JSON.stringify({ ...spec, url: server.url }));
  const lines = await runChild('load', ['--import', 'tsx', 'bench/ingest/load.ts', file], process.env);
  const result = JSON.parse(lines.at(-1) ?? '') as LoadResult;
  if (!isRunning(server.child)) {
    throw new Error(`${server.label} exited during ${phase}:\n${server.child.output.slice(-30).join('\n')}`);
  }
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    const codes = Object.entries(result.status_codes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${n}× ${code}`)
      .join(', ');
    problems.push(
      `${server.label} ${phase}: ${result.non2xx} non-2xx${codes ? ` (${codes})` : ''}, ` +
        `${result.errors} connection errors, ${result.timeouts} timeouts`,
    );
  }
  return result;
}

interface IngestFigures {
  label: string;
  synchronous: string;
  messages_per_s: number;
  batches_per_s: number;
  p50_ms: number;
  p99_ms: number;
  cpu_ms_per_batch: number;
  /** Messages in the store at the end, against the acknowledged ones (see storedCheck). */
  stored: number;
  acknowledged: number;
  peak_rss_mb: number;
}

async function postOnce(server: Server): Promise<void> {
  const response = await fetch(`${server.url}/buckets/${server.bucket}/messages`, {
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json' },
    body: JSON.stringify(benchBatch(0, BATCH, Date.now() / 1000)),
  });
  const text = await response.text();
  const meta =
    response.status === 201 ? (JSON.parse(text) as { meta: { success_count: number } }).meta : null;
  if (meta?.success_count !== BATCH) {
    throw new Error(
      `${server.label}: a batch of ${BATCH} answered ${response.status}: ${text.slice(0, 500)}`,
    );
  }
}

async function measureIngest(server: Server, synchronous: string): Promise<IngestFigures> {
  await postOnce(server);
  const spec: Omit<LoadSpec, 'url'> = {
    mode: 'autocannon',
    connections: CONNECTIONS,
    duration: DURATION,
    method: 'POST',
    path: `/buckets/${server.bucket}/messages`,
    headers: { ...server.headers, 'content-type': 'application/json' },
    batch: BATCH,
  };
  let acknowledged = BATCH;
  if (WARMUP > 0) {
    log(`${server.label}: warm-up ${WARMUP} s…`);
    acknowledged += (await load({ ...spec, duration: WARMUP }, server, 'warm-up')).ok * BATCH;
  }
  log(`${server.label}: ${DURATION} s at ${CONNECTIONS} connections…`);
  const cpuBefore = cpuMsOf(server.child.pid);
  const run = await load(spec, server, 'measured run');
  const cpuMs = cpuMsOf(server.child.pid) - cpuBefore;
  acknowledged += run.ok * BATCH;
  const figures: IngestFigures = {
    label: server.label,
    synchronous,
    messages_per_s: (run.ok * BATCH) / run.duration_s,
    batches_per_s: run.ok / run.duration_s,
    p50_ms: run.p50_ms,
    p99_ms: run.p99_ms,
    cpu_ms_per_batch: run.ok > 0 ? cpuMs / run.ok : 0,
    stored: 0,
    acknowledged,
    peak_rss_mb: 0,
  };
  log(
    `  ${fmt(figures.messages_per_s)} messages/s, p99 ${fmt(run.p99_ms)} ms per batch, ` +
      `${fmt(figures.cpu_ms_per_batch, 2)} CPU ms/batch`,
  );
  return figures;
}

/** Every acknowledged message must be stored; requests cut off when a run ends may add some more. */
function storedCheck(figures: IngestFigures): void {
  const slack = 2 * CONNECTIONS * BATCH;
  if (figures.stored < figures.acknowledged || figures.stored > figures.acknowledged + slack) {
    problems.push(
      `${figures.label} ${figures.synchronous}: ${figures.stored} messages stored, ` +
        `${figures.acknowledged} acknowledged`,
    );
  }
}

async function vigilStored(server: Server): Promise<number> {
  const response = await fetch(`${server.url}/buckets/${server.bucket}/usage`, { headers: server.headers });
  if (!response.ok) throw new Error(`${server.label}: usage answered ${response.status}`);
  return ((await response.json()) as { data: { messages_stored: number } }).data.messages_stored;
}

async function finish(server: Server, figures: IngestFigures, count: () => Promise<number> | number) {
  if (server.kind === 'vigil') figures.stored = await count();
  await stopChild(server.child);
  if (server.kind === 'floor') figures.stored = await count();
  figures.peak_rss_mb = server.child.peakRss() / MB;
  storedCheck(figures);
}

async function ingestSqlite(synchronous: Synchronous): Promise<IngestFigures[]> {
  const vigil = await startVigil({
    label: 'Vigil (SQLite)',
    dataDir: path.join(workDir, `vigil-${synchronous}`),
    synchronous,
  });
  const vigilFigures = await measureIngest(vigil, synchronous);
  await finish(vigil, vigilFigures, () => vigilStored(vigil));

  const file = path.join(workDir, `floor-${synchronous}.db`);
  const floor = await startFloor('floor (SQLite)', file, synchronous);
  const floorFigures = await measureIngest(floor, synchronous);
  await finish(floor, floorFigures, () => {
    const db = openFloorDb(file, { readonly: true });
    try {
      return db.prepare<[], { n: number }>('SELECT count(*) AS n FROM messages').get()!.n;
    } finally {
      db.close();
    }
  });
  return [vigilFigures, floorFigures];
}

async function ingestPostgres(): Promise<IngestFigures | string> {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  try {
    database = await freshPostgresDatabase();
  } catch (error) {
    const where = ADMIN_URL.replace(/\/\/[^@/]*@/, '//');
    return `skipped: no database could be created at ${where} (${(error as Error).message})`;
  }
  try {
    const vigil = await startVigil({
      label: 'Vigil (PostgreSQL)',
      dataDir: path.join(workDir, 'vigil-pg'),
      synchronous: 'NORMAL',
      databaseUrl: database.url,
    });
    const figures = await measureIngest(vigil, 'synchronous_commit=on');
    await finish(vigil, figures, () => vigilStored(vigil));
    return figures;
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Reads in a full bucket

interface ReadFigures {
  label: string;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Size of one answer's body. */
  bytes: number;
}

interface ReadsResult {
  fill: { messages: number; seconds: number; database_mb: number };
  cases: Partial<Record<'list' | 'window' | 'detail', ReadFigures>>;
  peak_rss_mb: number;
}

async function measureReads(): Promise<ReadsResult> {
  const dataDir = path.join(workDir, 'vigil-reads');
  const account = await bootstrap(dataDir);
  const now = Math.floor(Date.now() / 1000);
  const from = now - FILL_SPAN;
  const sampleFile = path.join(workDir, 'sample.json');
  log(`filling bucket ${account.bucket_key} with ${fmt(FILL)} messages through the store…`);
  const fillLines = await runChild('fill', ['--import', 'tsx', 'bench/ingest/fill.ts'], {
    ...process.env,
    FILL_DATA_DIR: dataDir,
    FILL_BUCKET: account.bucket_key,
    FILL_COUNT: String(FILL),
    FILL_FROM: String(from),
    FILL_TO: String(now),
    FILL_SAMPLE: String(DETAIL_SAMPLE),
    FILL_SAMPLE_FILE: sampleFile,
  });
  const fill = JSON.parse(fillLines.at(-1) ?? '') as { count: number; seconds: number };
  const databaseBytes = fs
    .readdirSync(dataDir)
    .filter((name) => name.startsWith('vigil.db'))
    .reduce((n, name) => n + fs.statSync(path.join(dataDir, name)).size, 0);
  log(`  ${fmt(fill.count)} in ${fmt(fill.seconds, 1)} s; database ${fmt(databaseBytes / MB)} MB`);

  const server = await startVigil({
    label: 'Vigil (SQLite, filled)',
    dataDir,
    synchronous: 'NORMAL',
    account,
  });
  const { url } = server;

  const base = `/buckets/${account.bucket_key}/messages`;
  const middle = from + FILL_SPAN / 2;
  const sample = JSON.parse(fs.readFileSync(sampleFile, 'utf8')) as string[];
  const cases = {
    list: { label: 'GET …/messages?count=1000', path: `${base}?count=1000`, expect: 1000 },
    window: {
      label: `GET …/messages?count=1000&since&before (1 h in the middle)`,
      path: `${base}?count=1000&since=${middle - WINDOW / 2}&before=${middle + WINDOW / 2}`,
      expect: Math.min(1000, Math.floor((FILL * WINDOW) / FILL_SPAN) - 1),
    },
    detail: {
      label: `GET …/messages/<uuid> (random of ${fmt(sample.length)})`,
      path: `${base}/${sample[0]}`,
    },
  };

  const results: ReadsResult['cases'] = {};
  for (const [id, c] of Object.entries(cases) as [keyof typeof cases, (typeof cases)[keyof typeof cases]][]) {
    if (!READS.includes(id)) continue;
    const response = await fetch(`${url}${c.path}`, { headers: server.headers });
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`${c.label} answered ${response.status}: ${text.slice(0, 300)}`);
    const data = (JSON.parse(text) as { data: unknown }).data;
    if ('expect' in c && (!Array.isArray(data) || data.length < c.expect)) {
      throw new Error(
        `${c.label} answered ${Array.isArray(data) ? data.length : 'no'} items, expected ${c.expect}`,
      );
    }
    const spec: Omit<LoadSpec, 'url'> = {
      mode: 'loop',
      connections: READ_CONNECTIONS,
      duration: DURATION,
      method: 'GET',
      headers: server.headers,
      path: c.path,
      ...(id === 'detail' && { paths: sample.map((uuid) => `${base}/${uuid}`) }),
    };
    if (WARMUP > 0) {
      log(`${c.label}: warm-up ${WARMUP} s…`);
      await load({ ...spec, duration: WARMUP }, server, `${c.label} warm-up`);
    }
    log(`${c.label}: ${DURATION} s at ${READ_CONNECTIONS} connection(s)…`);
    const run = await load(spec, server, c.label);
    results[id] = {
      label: c.label,
      rps: run.rps,
      p50_ms: run.p50_ms,
      p99_ms: run.p99_ms,
      max_ms: run.max_ms,
      bytes: Buffer.byteLength(text),
    };
    log(`  ${fmt(run.rps)} req/s, p50 ${fmt(run.p50_ms, 2)} ms, p99 ${fmt(run.p99_ms, 2)} ms`);
  }
  await stopChild(server.child);
  return {
    fill: { messages: fill.count, seconds: fill.seconds, database_mb: databaseBytes / MB },
    cases: results,
    peak_rss_mb: server.child.peakRss() / MB,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function table(columns: [string, number, (row: never) => string][], rows: unknown[]): string {
  const pad = (text: string, width: number) => (width < 0 ? text.padEnd(-width) : text.padStart(width));
  const line = (cells: string[]) => cells.map((cell, i) => pad(cell, columns[i]![1])).join('');
  const header = line(columns.map(([title]) => title));
  const body = rows.map((row) => line(columns.map(([, , value]) => (value as (r: unknown) => string)(row))));
  return [header, '-'.repeat(header.length), ...body].join('\n');
}

interface Target {
  name: string;
  actual: string;
  pass: boolean;
}

async function main(): Promise<number> {
  checkBuild();
  workDir = tempDir('vigil-bench-ingest-');
  const body = JSON.stringify(benchBatch(0, BATCH, Date.now() / 1000));
  log(
    `${startCommand(START)} (npm start); batches of ${BATCH} messages, ` +
      `${fmt(Buffer.byteLength(body) / 1024, 1)} KB per request`,
  );

  const ingest: IngestFigures[] = [];
  let postgres: IngestFigures | string = 'not run (BENCH_PHASES)';
  if (PHASES.includes('ingest')) {
    for (const synchronous of SQLITE_SYNCHRONOUS) {
      if (INGEST_STORES.includes(synchronous)) ingest.push(...(await ingestSqlite(synchronous)));
    }
    postgres = INGEST_STORES.includes('postgres') ? await ingestPostgres() : 'not run (BENCH_INGEST_STORES)';
    if (typeof postgres === 'string') log(`Vigil (PostgreSQL): ${postgres}`);
  }
  const reads = PHASES.includes('reads') ? await measureReads() : undefined;

  const targets: Target[] = [];
  const ratios: Record<string, { ratio: number; cpu_ratio: number }> = {};
  for (const synchronous of SQLITE_SYNCHRONOUS) {
    const vigil = ingest.find((f) => f.label.startsWith('Vigil') && f.synchronous === synchronous);
    const floor = ingest.find((f) => f.label.startsWith('floor') && f.synchronous === synchronous);
    if (!vigil || !floor) continue;
    const ratio = vigil.messages_per_s / floor.messages_per_s;
    ratios[synchronous] = { ratio, cpu_ratio: floor.cpu_ms_per_batch / vigil.cpu_ms_per_batch };
    targets.push({
      name: `Vigil SQLite ${synchronous} ≥ ${TARGET_RATIO * 100}% of the floor's messages/s`,
      actual: `${fmt(ratio * 100, 1)}% (${fmt(vigil.messages_per_s)} vs ${fmt(floor.messages_per_s)})`,
      pass: ratio >= TARGET_RATIO,
    });
  }
  const normalFloor = ingest.find((f) => f.label.startsWith('floor') && f.synchronous === 'NORMAL');
  if (typeof postgres !== 'string' && normalFloor) {
    const ratio = postgres.messages_per_s / normalFloor.messages_per_s;
    targets.push({
      name: `Vigil PostgreSQL ≥ ${TARGET_POSTGRES_RATIO * 100}% of the SQLite floor's messages/s (NORMAL)`,
      actual: `${fmt(ratio * 100, 1)}% (${fmt(postgres.messages_per_s)} vs ${fmt(normalFloor.messages_per_s)})`,
      pass: ratio >= TARGET_POSTGRES_RATIO,
    });
  }
  for (const figures of [reads?.cases.list, reads?.cases.window]) {
    if (!figures || !reads) continue;
    targets.push({
      name: `${figures.label} at ${fmt(reads.fill.messages)} messages: p99 ≤ ${TARGET_LIST_P99_MS} ms`,
      actual: `${fmt(figures.p99_ms, 2)} ms`,
      pass: figures.p99_ms <= TARGET_LIST_P99_MS,
    });
  }
  if (reads?.cases.detail) {
    targets.push({
      name: `detail at ${fmt(reads.fill.messages)} messages: p99 ≤ ${TARGET_DETAIL_P99_MS} ms`,
      actual: `${fmt(reads.cases.detail.p99_ms, 2)} ms`,
      pass: reads.cases.detail.p99_ms <= TARGET_DETAIL_P99_MS,
    });
  }
  const vigilRss = [
    ...ingest.filter((f) => f.label.startsWith('Vigil')).map((f) => f.peak_rss_mb),
    ...(typeof postgres === 'string' ? [] : [postgres.peak_rss_mb]),
    ...(reads ? [reads.peak_rss_mb] : []),
  ];
  const maxRss = Math.max(0, ...vigilRss);
  targets.push({
    name: `Vigil RSS < ${TARGET_RSS_MB} MB throughout (sampled every 200 ms)`,
    actual: `max ${fmt(maxRss, 1)} MB`,
    pass: maxRss < TARGET_RSS_MB,
  });

  const load = os.loadavg().map((n) => n.toFixed(2));
  const out: string[] = [
    '',
    `Vigil ingest benchmark: ${DURATION} s per run after ${WARMUP} s warm-up, Node ${process.version}, ` +
      `${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), load average at the end ${load.join(' ')}`,
  ];
  if (PHASES.includes('ingest')) {
    const rows = [...ingest, ...(typeof postgres === 'string' ? [] : [postgres])];
    out.push(
      '',
      `POST /buckets/:key/messages, ${BATCH} messages (${fmt(Buffer.byteLength(body) / 1024, 1)} KB) per request, ` +
        `${CONNECTIONS} connections`,
      '',
      table(
        [
          ['server', -20, (r: IngestFigures) => r.label],
          ['synchronous', -22, (r: IngestFigures) => r.synchronous],
          ['messages/s', 12, (r: IngestFigures) => fmt(r.messages_per_s)],
          ['p50 ms', 9, (r: IngestFigures) => fmt(r.p50_ms)],
          ['p99 ms', 9, (r: IngestFigures) => fmt(r.p99_ms)],
          ['CPU ms/batch', 14, (r: IngestFigures) => fmt(r.cpu_ms_per_batch, 2)],
          ['peak RSS MB', 13, (r: IngestFigures) => fmt(r.peak_rss_mb, 1)],
          ['stored', 11, (r: IngestFigures) => fmt(r.stored)],
        ],
        rows,
      ),
    );
    if (typeof postgres === 'string') out.push(`Vigil (PostgreSQL): ${postgres}`);
    for (const [synchronous, r] of Object.entries(ratios)) {
      out.push(
        `Vigil/floor ${synchronous}: ${fmt(r.ratio * 100, 1)}% of messages/s, ${fmt(r.cpu_ratio * 100, 1)}% by CPU`,
      );
    }
  }
  if (reads) {
    out.push(
      '',
      `Reads in one bucket of ${fmt(reads.fill.messages)} messages (filled through the store in ` +
        `${fmt(reads.fill.seconds)} s, database ${fmt(reads.fill.database_mb)} MB), ` +
        `${READ_CONNECTIONS} connection(s), random ids for the detail`,
      '',
      table(
        [
          ['request', -58, (r: ReadFigures) => r.label],
          ['req/s', 9, (r: ReadFigures) => fmt(r.rps)],
          ['p50 ms', 9, (r: ReadFigures) => fmt(r.p50_ms, 2)],
          ['p99 ms', 9, (r: ReadFigures) => fmt(r.p99_ms, 2)],
          ['max ms', 9, (r: ReadFigures) => fmt(r.max_ms, 1)],
          ['KB', 8, (r: ReadFigures) => fmt(r.bytes / 1024, 1)],
        ],
        Object.values(reads.cases),
      ),
      `Vigil peak RSS during the reads: ${fmt(reads.peak_rss_mb, 1)} MB`,
    );
  }
  out.push('', ...targets.map((t) => `${t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ${t.actual}`));
  if (problems.length > 0) out.push('', 'ERRORS:', ...problems.map((p) => `  ${p}`));
  process.stdout.write(`${out.join('\n')}\n`);

  const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
  const summary = {
    benchmark: 'ingest',
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    load_average: os.loadavg().map((n) => round(n, 2)),
    duration_s: DURATION,
    warmup_s: WARMUP,
    connections: CONNECTIONS,
    read_connections: READ_CONNECTIONS,
    batch: BATCH,
    request_bytes: Buffer.byteLength(body),
    ingest: ingest.map((f) => ({
      ...f,
      messages_per_s: round(f.messages_per_s),
      batches_per_s: round(f.batches_per_s),
      cpu_ms_per_batch: round(f.cpu_ms_per_batch, 3),
      peak_rss_mb: round(f.peak_rss_mb),
    })),
    postgres,
    ratios,
    reads,
    targets,
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
  log(`\nbench:ingest failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
