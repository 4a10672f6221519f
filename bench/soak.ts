/**
 * Soak: `vigil serve` (as `npm start` runs it, on SQLite) under a steady mixed load for a long time,
 * its RSS sampled every 10 s. See bench/README.md.
 *
 * Settings (env): SOAK_MINUTES (default 60), SOAK_RATE (ticks per second, default 10; each tick
 * ingests one batch of 5 messages and makes one read), SOAK_TRIGGERS (trigger URL calls per second,
 * default 1), SOAK_SCHEDULES (1-minute schedules, default 10, fired every 10 s: the schedule time
 * scale is 6), SOAK_NODE_ARGS (extra node flags for the server, e.g. --heapsnapshot-signal=SIGUSR2).
 *
 * Writes bench/soak-results.json (every sample and the summary) and bench/soak-rss.svg (the plot),
 * prints the summary; exit status 1 when any request failed.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { npmStart } from './shared/npm-start.js';
import { numberSetting } from './shared/settings.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MINUTES = numberSetting('SOAK_MINUTES', 60, 0.5);
const RATE = numberSetting('SOAK_RATE', 10, 1);
const TRIGGERS_PER_SECOND = numberSetting('SOAK_TRIGGERS', 1, 0);
const SCHEDULES = Math.round(numberSetting('SOAK_SCHEDULES', 10, 0));
const SAMPLE_MS = 10_000;
/** Trigger URLs are limited to 10 calls per 10 s each: the calls go round this many tests. */
const TRIGGER_TESTS = 10;
/** The flatness window of the figures: the last 40 minutes, or the last two thirds of a shorter run. */
const FLAT_WINDOW_MS = Math.min(40 * 60_000, (MINUTES * 60_000 * 2) / 3);

interface Sample {
  /** Seconds since the load started. */
  t: number;
  rssMb: number;
  requests: number;
  errors: number;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** An SVG line plot of RSS over time, in the manner of uPlot: axes, grid, one series. */
function plot(samples: Sample[], title: string): string {
  const width = 800;
  const height = 320;
  const pad = { left: 56, right: 16, top: 32, bottom: 40 };
  const maxT = Math.max(60, ...samples.map((s) => s.t));
  const maxY = Math.ceil((Math.max(...samples.map((s) => s.rssMb)) * 1.15) / 20) * 20;
  const x = (t: number) => pad.left + (t / maxT) * (width - pad.left - pad.right);
  const y = (mb: number) => height - pad.bottom - (mb / maxY) * (height - pad.top - pad.bottom);
  const grid: string[] = [];
  for (let mb = 0; mb <= maxY; mb += maxY / 5) {
    grid.push(
      `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(mb)}" y2="${y(mb)}" stroke="#e5e5e5"/>`,
      `<text x="${pad.left - 6}" y="${y(mb) + 4}" text-anchor="end">${Math.round(mb)}</text>`,
    );
  }
  const stepMin = maxT > 1_200 ? 10 : maxT > 300 ? 2 : 1;
  for (let m = 0; m * 60 <= maxT; m += stepMin) {
    grid.push(
      `<line x1="${x(m * 60)}" x2="${x(m * 60)}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#f0f0f0"/>`,
      `<text x="${x(m * 60)}" y="${height - pad.bottom + 16}" text-anchor="middle">${m}</text>`,
    );
  }
  const points = samples.map((s) => `${x(s.t).toFixed(1)},${y(s.rssMb).toFixed(1)}`).join(' ');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="#fff"/>
<text x="${pad.left}" y="18" font-size="13">${title}</text>
${grid.join('\n')}
<text x="${width / 2}" y="${height - 6}" text-anchor="middle">minutes</text>
<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})" text-anchor="middle">RSS MB</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${points}"/>
</svg>
`;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-soak-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'test',
    SCHEDULE_TIME_SCALE: '6',
    // The runs go to a local upstream.
    EGRESS_POLICY: 'allow-all',
  };
  delete env.DATABASE_URL;
  let server: ChildProcess | null = null;
  const upstream = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"ok":true,"items":[1,2,3]}');
  });
  let done = false;
  const cleanup = () => {
    done = true;
    server?.kill('SIGKILL');
    upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;
    const port = await freePort();
    // PUBLIC_URL is where this server will answer: bootstrap checks that no other server there
    // refuses its token (a development server on the default port would).
    const boot = execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'bin/vigil.js'),
        'bootstrap',
        '--email',
        'soak@example.com',
        '--name',
        'Soak',
        '--password',
        'a long passphrase',
        '--json',
      ],
      { env: { ...env, PUBLIC_URL: `http://127.0.0.1:${port}` }, encoding: 'utf8' },
    );
    const { access_token: token, bucket_key: bucket } = JSON.parse(boot) as {
      access_token: string;
      bucket_key: string;
    };
    const start = npmStart(ROOT);
    const extra = (process.env.SOAK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    server = spawn(process.execPath, [...start.flags, ...extra, path.join(ROOT, 'bin/vigil.js'), 'serve'], {
      env: { ...env, ...start.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    let exited: string | null = null;
    server.once('exit', (code, signal) => {
      if (done) return;
      exited = `vigil serve exited (code ${code}, signal ${signal})`;
      process.stderr.write(`soak: ${exited}\n`);
    });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (
        await fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (i > 300) throw new Error('vigil serve did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const api = async (method: string, url: string, body?: unknown) => {
      const response = await fetch(`${base}${url}`, {
        method,
        headers,
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const json = (await response.json()) as { data: any };
      if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    const step = {
      step_type: 'request',
      method: 'GET',
      url: `${target}/items`,
      assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
      variables: [{ name: 'first', source: 'response_json', property: 'items[0]' }],
    };
    const tests: { id: string; trigger: string }[] = [];
    for (let i = 0; i < Math.max(TRIGGER_TESTS, SCHEDULES); i++) {
      const t = await api('POST', `/buckets/${bucket}/tests`, { name: `Soak ${i}`, steps: [step] });
      tests.push({ id: t.id, trigger: new URL(t.trigger_url).pathname });
      if (i < SCHEDULES)
        await api('POST', `/buckets/${bucket}/tests/${t.id}/schedules`, {
          environment_id: t.default_environment_id,
          interval: '1m',
        });
    }

    let requests = 0;
    let errors = 0;
    const failures = new Map<string, number>();
    const healthMs: number[] = [];
    const count = async (kind: string, call: () => Promise<Response>) => {
      const started = performance.now();
      try {
        const response = await call();
        await response.arrayBuffer();
        requests++;
        if (kind === 'health') healthMs.push(performance.now() - started);
        if (!response.ok) {
          errors++;
          failures.set(`${kind} ${response.status}`, (failures.get(`${kind} ${response.status}`) ?? 0) + 1);
        }
      } catch (error) {
        errors++;
        const key = `${kind} ${(error as Error).message}`;
        failures.set(key, (failures.get(key) ?? 0) + 1);
      }
    };
    const reads = [
      () => fetch(`${base}/buckets/${bucket}/messages?count=50`, { headers }),
      () => fetch(`${base}/buckets/${bucket}/tests`, { headers }),
      () => fetch(`${base}/buckets/${bucket}/tests/${tests[0]!.id}/results`, { headers }),
      () => fetch(`${base}/health`),
    ];
    const readKinds = ['messages', 'tests', 'results', 'health'];

    const startedAt = Date.now();
    const endAt = startedAt + MINUTES * 60_000;
    const samples: Sample[] = [];
    const sample = () =>
      !exited &&
      samples.push({
        t: Math.round((Date.now() - startedAt) / 1000),
        rssMb: Number(rssMb(server!.pid!).toFixed(1)),
        requests,
        errors,
      });
    sample();
    const sampler = setInterval(sample, SAMPLE_MS);
    let tick = 0;
    let triggerCredit = 0;
    let triggers = 0;
    const inFlight = new Set<Promise<void>>();
    const track = (p: Promise<void>) => {
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    };
    await new Promise<void>((resolve) => {
      const loop = setInterval(() => {
        if (Date.now() >= endAt || exited) {
          clearInterval(loop);
          resolve();
          return;
        }
        tick++;
        const batch = Array.from({ length: 5 }, (_, i) => ({
          request: {
            method: 'POST',
            url: `https://shop.example/orders/${tick}-${i}`,
            headers: { 'content-type': ['application/json'] },
            body: JSON.stringify({ order: tick, line: i, note: 'x'.repeat(600) }),
          },
          response: { status: tick % 17 === 0 ? 500 : 201, body: '{"ok":true}' },
        }));
        track(
          count('ingest', () =>
            fetch(`${base}/buckets/${bucket}/messages`, {
              method: 'POST',
              headers,
              body: JSON.stringify(batch),
            }),
          ),
        );
        const r = tick % reads.length;
        track(count(readKinds[r]!, reads[r]!));
        triggerCredit += TRIGGERS_PER_SECOND / RATE;
        while (triggerCredit >= 1) {
          triggerCredit -= 1;
          // Round the tests, so each stays under its trigger URL's limit.
          const t = tests[triggers++ % TRIGGER_TESTS]!;
          track(count('trigger', () => fetch(`${base}${t.trigger}`, { method: 'POST' })));
        }
        if (tick % (RATE * 60) === 0) {
          const last = samples.at(-1)!;
          process.stderr.write(
            `soak: ${Math.round(last.t / 60)} min, RSS ${last.rssMb} MB, ${requests} requests, ${errors} errors\n`,
          );
        }
      }, 1000 / RATE);
    });
    clearInterval(sampler);
    await Promise.allSettled([...inFlight]);
    if (exited) throw new Error(exited);
    sample();

    const runs = await api('GET', `/buckets/${bucket}/tests/${tests[0]!.id}/results?count=50`);
    const flat = samples.filter((s) => s.t * 1000 >= MINUTES * 60_000 - FLAT_WINDOW_MS);
    const flatMin = Math.min(...flat.map((s) => s.rssMb));
    const flatMax = Math.max(...flat.map((s) => s.rssMb));
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const summary = {
      minutes: MINUTES,
      cpu,
      cores: os.cpus().length,
      node: process.version,
      rate: {
        ingestBatchesPerSecond: RATE,
        messagesPerSecond: RATE * 5,
        readsPerSecond: RATE,
        triggersPerSecond: TRIGGERS_PER_SECOND,
        schedules: SCHEDULES,
        scheduledRunsPerSecond: SCHEDULES / 10,
      },
      requests,
      errors,
      failures: Object.fromEntries(failures),
      healthP50Ms: Number(percentile(healthMs, 50).toFixed(2)),
      healthP99Ms: Number(percentile(healthMs, 99).toFixed(2)),
      rssStartMb: samples[0]!.rssMb,
      rssEndMb: samples.at(-1)!.rssMb,
      rssMaxMb: Math.max(...samples.map((s) => s.rssMb)),
      flatWindowMinutes: FLAT_WINDOW_MS / 60_000,
      flatWindowSpreadPercent: Number((((flatMax - flatMin) / flatMin) * 100).toFixed(1)),
      runsOfFirstTestSeen: runs.length,
    };
    fs.writeFileSync(
      path.join(ROOT, 'bench/soak-results.json'),
      `${JSON.stringify({ summary, samples }, null, 2)}\n`,
    );
    fs.writeFileSync(
      path.join(ROOT, 'bench/soak-rss.svg'),
      plot(samples, `vigil serve RSS under mixed load, ${MINUTES} min (${cpu}, ${os.cpus().length} cores)`),
    );
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    process.exitCode = errors > 0 ? 1 : 0;
  } finally {
    cleanup();
  }
}

await main();
