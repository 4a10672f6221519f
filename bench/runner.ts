/**
 * Runner benchmark: the same three-request test (log in, read the user with a script, a condition
 * around reading an item) run by a hand-written floor on undici, Step CI's runner, Newman and
 * Vigil's engine, against one local upstream. See bench/README.md, "Runner".
 *
 * The upstream (bench/runner/upstream.ts) and each contender (bench/runner/worker.ts) run in
 * processes of their own, one contender after the other, so no two share an event loop and each
 * peak RSS belongs to one contender.
 *
 * Settings (env): BENCH_DURATION (seconds per measured phase, default 5), BENCH_WARMUP (seconds of
 * warm-up per contender, default 1), BENCH_CONCURRENCY (runs in flight in the concurrent phase,
 * default 50), BENCH_CONTENDERS (comma-separated, default floor,stepci,newman,vigil,vigil-noscript),
 * BENCH_VIGIL_FLAGS (`command`, the default: Vigil's contenders run as the `vigil` command runs them;
 * `node`: with Node's defaults, as the other contenders).
 *
 * Progress goes to stderr, the markdown table to stdout, everything to bench/runner/results.json.
 * Exit status: 0 when every contender that could run verified and passed every run, 1 otherwise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CONTENDERS,
  type ContenderName,
  type ContenderReport,
  type PhaseFigures,
  type UpstreamMessage,
  type UpstreamStats,
  type WorkerMessage,
} from './runner/protocol.js';
import { startCommand, vigilCommand } from './shared/npm-start.js';
import { numberSetting } from './shared/settings.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS_FILE = path.join(ROOT, 'bench/runner/results.json');
/** Requests of one passing run. */
const REQUESTS_PER_RUN = 3;

const DURATION = numberSetting('BENCH_DURATION', 5, 0.1);
const WARMUP = numberSetting('BENCH_WARMUP', 1, 0);
const CONCURRENCY = Math.round(numberSetting('BENCH_CONCURRENCY', 50, 1));
const SELECTED = (process.env.BENCH_CONTENDERS ?? '').split(',').filter(Boolean);

const LABELS: Record<ContenderName, string> = {
  floor: 'Floor (undici, hand-written checks)',
  stepci: 'Step CI (@stepci/runner)',
  newman: 'Newman',
  vigil: 'Vigil (src/runner/engine.ts)',
  'vigil-noscript': 'Vigil, the script replaced by checks',
};

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>();

/** This environment without proxy settings: every contender must talk to the upstream directly. */
function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...settings };
  for (const key of Object.keys(env)) {
    if (/^(https?|all|no)_proxy$/i.test(key)) delete env[key];
  }
  return env;
}

function startChild(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', file, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  // Whatever a child prints is progress, never part of the results on stdout.
  child.stdout?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function stopChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}

process.on('exit', stopChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`);
    stopChildren();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

/** The first IPC message of `child` that `pick` accepts; rejects when the child exits first. */
function nextMessage<M, T>(
  child: ChildProcess,
  what: string,
  timeoutMs: number,
  pick: (message: M) => T | undefined,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: M) => {
      const value = pick(message);
      if (value === undefined) return;
      done();
      resolve(value);
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`${what}: the process exited with ${code} before answering`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${what}: no answer within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

interface Upstream {
  url: string;
  stats(): Promise<UpstreamStats>;
}

async function startUpstream(): Promise<Upstream> {
  const child = startChild('bench/runner/upstream.ts', [], childEnv({}));
  const port = await nextMessage<UpstreamMessage, number>(child, 'upstream', 30_000, (m) =>
    m.type === 'listening' ? m.port : undefined,
  );
  return {
    url: `http://127.0.0.1:${port}`,
    stats() {
      const answer = nextMessage<UpstreamMessage, UpstreamStats>(child, 'upstream stats', 10_000, (m) =>
        m.type === 'stats' ? m.stats : undefined,
      );
      child.send({ type: 'get_stats' } satisfies UpstreamMessage);
      return answer;
    },
  };
}

/**
 * Vigil's contenders run as the `vigil` command runs them (`vigil worker`, `vigil run`, `vigil
 * agent`): with the environment and V8 flags of its `#!` line. The others run as their own commands
 * do, with Node's defaults. `BENCH_VIGIL_FLAGS=node` runs Vigil's with Node's defaults too.
 */
const VIGIL_FLAGS = process.env.BENCH_VIGIL_FLAGS ?? 'command';
if (VIGIL_FLAGS !== 'command' && VIGIL_FLAGS !== 'node')
  throw new Error(`BENCH_VIGIL_FLAGS must be command or node, got "${VIGIL_FLAGS}"`);

function vigilCommandLine(): string {
  const { env, flags } = vigilCommand(ROOT);
  return startCommand({ env, args: flags });
}

function runWorker(name: ContenderName, upstreamUrl: string): Promise<WorkerMessage> {
  const command =
    VIGIL_FLAGS === 'command' && name.startsWith('vigil') ? vigilCommand(ROOT) : { env: {}, flags: [] };
  const child = startChild(
    'bench/runner/worker.ts',
    [name],
    childEnv({
      ...command.env,
      UPSTREAM_URL: upstreamUrl,
      BENCH_DURATION: String(DURATION),
      BENCH_WARMUP: String(WARMUP),
      BENCH_CONCURRENCY: String(CONCURRENCY),
    }),
    command.flags,
  );
  // Generous: the slowest contender's last runs finish well after the deadline of a phase.
  const timeoutMs = (WARMUP + 2 * DURATION) * 1000 + 300_000;
  return nextMessage<WorkerMessage, WorkerMessage>(child, name, timeoutMs, (m) => m);
}

// ---------------------------------------------------------------------------------------------
// Results

interface Measured {
  available: true;
  label: string;
  report: ContenderReport;
  /** Counted by the upstream while this contender ran, over every run it made. */
  upstream: { connections_per_run: number; requests_per_run: number; non2xx: number };
  /** (1/runs_per_s − 1/floor runs_per_s) / 3 requests, in ms; null without a floor measurement. */
  overhead_ms_per_step: { sequential: number | null; concurrent: number | null };
  /** (CPU ms/run − floor CPU ms/run) / 3 in the concurrent phase: steadier on a busy machine. */
  cpu_overhead_ms_per_step: number | null;
  /** Why this contender's figures cannot be trusted; empty when they can. */
  problems: string[];
}

interface NotAvailable {
  available: false;
  label: string;
  reason: string;
  /** True when the worker crashed, rather than reporting that the contender cannot run here. */
  failed: boolean;
}

type Outcome = Measured | NotAvailable;

function problemsOf(report: ContenderReport, upstream: Measured['upstream']): string[] {
  const problems: string[] = [];
  if (!report.verification.pass_run_passed) problems.push('a run against the upstream did not pass');
  if (!report.verification.fail_run_failed)
    problems.push('a run against /bad passed; its checks do not work');
  if (report.first_error) problems.push(`first error: ${report.first_error}`);
  if (!report.sequential || !report.concurrent) return problems;
  const errors = report.sequential.errors + report.concurrent.errors;
  if (errors > 0) problems.push(`${errors} runs did not pass`);
  if (upstream.non2xx > 0) problems.push(`the upstream answered ${upstream.non2xx} non-2xx responses`);
  if (Math.abs(upstream.requests_per_run - REQUESTS_PER_RUN) > 0.01) {
    problems.push(
      `${upstream.requests_per_run.toFixed(2)} requests per run reached the upstream, not ${REQUESTS_PER_RUN}`,
    );
  }
  if (upstream.connections_per_run < 0.99) {
    problems.push(`${upstream.connections_per_run.toFixed(2)} connections per run: runs share connections`);
  }
  return problems;
}

function overhead(figures: PhaseFigures | null, floor: PhaseFigures | null | undefined): number | null {
  if (!figures || !floor || figures.runs_per_s <= 0 || floor.runs_per_s <= 0) return null;
  return ((1 / figures.runs_per_s - 1 / floor.runs_per_s) * 1000) / REQUESTS_PER_RUN;
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const fmtRate = (n: number) => fmt(n, n < 100 ? 1 : 0);
const fmtMs = (n: number) => fmt(n, n < 10 ? 2 : n < 100 ? 1 : 0);
const fmtOverhead = (n: number | null) => (n === null ? '—' : fmt(n, 3));

function table(outcomes: readonly Outcome[]): string {
  const header = [
    'Runner',
    'runs/s seq',
    'p50 ms',
    'p99 ms',
    `runs/s ×${CONCURRENCY}`,
    'p50 ms',
    'p99 ms',
    `CPU ms/run ×${CONCURRENCY}`,
    'peak RSS MB',
    'conn/run',
    'errors',
    'overhead ms/step seq',
    `overhead ms/step ×${CONCURRENCY}`,
  ];
  const rows = outcomes.map((o) => {
    if (!o.available) {
      return [
        o.label,
        `${o.failed ? 'FAILED' : 'not available'}: ${o.reason}`,
        ...header.slice(2).map(() => '—'),
      ];
    }
    const { sequential: s, concurrent: c } = o.report;
    if (!s || !c) return [o.label, 'verification failed (see below)', ...header.slice(2).map(() => '—')];
    return [
      o.label,
      fmtRate(s.runs_per_s),
      fmtMs(s.p50_ms),
      fmtMs(s.p99_ms),
      fmtRate(c.runs_per_s),
      fmtMs(c.p50_ms),
      fmtMs(c.p99_ms),
      fmtMs(c.cpu_ms_per_run),
      fmt(o.report.peak_rss_mb, 1),
      fmt(o.upstream.connections_per_run, 2),
      o.problems.length === 0 ? '0' : `**${s.errors + c.errors}** (see below)`,
      fmtOverhead(o.overhead_ms_per_step.sequential),
      fmtOverhead(o.overhead_ms_per_step.concurrent),
    ];
  });
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const align = header.map((_, i) => (i === 0 ? ':--' : '--:'));
  return [line(header), line(align), ...rows.map(line)].join('\n');
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function roundedPhase(p: PhaseFigures): PhaseFigures {
  return {
    ...p,
    seconds: round(p.seconds),
    runs_per_s: round(p.runs_per_s, 1),
    p50_ms: round(p.p50_ms),
    p99_ms: round(p.p99_ms),
    cpu_ms_per_run: round(p.cpu_ms_per_run, 3),
  };
}

function resultsJson(outcomes: readonly Outcome[], names: readonly ContenderName[]) {
  return {
    benchmark: 'runner',
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model.trim() ?? 'unknown',
    settings: { duration_s: DURATION, warmup_s: WARMUP, concurrency: CONCURRENCY },
    vigil_runs_as: VIGIL_FLAGS === 'command' ? vigilCommandLine() : 'node',
    requests_per_run: REQUESTS_PER_RUN,
    contenders: Object.fromEntries(
      outcomes.map((o, i) => {
        if (!o.available) {
          return [names[i], { label: o.label, available: false, reason: o.reason, failed: o.failed }];
        }
        const { report } = o;
        return [
          names[i],
          {
            label: o.label,
            available: true,
            sequential: report.sequential && roundedPhase(report.sequential),
            concurrent: report.concurrent && roundedPhase(report.concurrent),
            peak_rss_mb: round(report.peak_rss_mb, 1),
            rss_loaded_mb: round(report.rss_loaded_mb, 1),
            load_ms: round(report.load_ms, 0),
            overhead_ms_per_step: {
              sequential:
                o.overhead_ms_per_step.sequential === null
                  ? null
                  : round(o.overhead_ms_per_step.sequential, 4),
              concurrent:
                o.overhead_ms_per_step.concurrent === null
                  ? null
                  : round(o.overhead_ms_per_step.concurrent, 4),
            },
            cpu_overhead_ms_per_step:
              o.cpu_overhead_ms_per_step === null ? null : round(o.cpu_overhead_ms_per_step, 4),
            verification: report.verification,
            total_runs: report.total_runs,
            upstream: {
              connections_per_run: round(o.upstream.connections_per_run, 3),
              requests_per_run: round(o.upstream.requests_per_run, 3),
              non2xx: o.upstream.non2xx,
            },
            problems: o.problems,
          },
        ];
      }),
    ),
    ok: outcomes.every((o) => (o.available ? o.problems.length === 0 : !o.failed)),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const unknown = SELECTED.filter((name) => !(CONTENDERS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `BENCH_CONTENDERS names unknown contenders ${unknown.join(', ')}; known: ${CONTENDERS.join(', ')}`,
    );
  }
  const names = CONTENDERS.filter((name) => SELECTED.length === 0 || SELECTED.includes(name));

  const upstream = await startUpstream();
  log(`upstream on ${upstream.url}`);
  log(
    `${DURATION} s per phase after ${WARMUP} s warm-up; phases: one run at a time, ${CONCURRENCY} at a time`,
  );

  const outcomes: Outcome[] = [];
  let floor: ContenderReport | undefined;
  for (const name of names) {
    log(`${LABELS[name]}…`);
    const before = await upstream.stats();
    let message: WorkerMessage;
    try {
      message = await runWorker(name, upstream.url);
    } catch (error) {
      const reason = `worker failed: ${error instanceof Error ? error.message : String(error)}`;
      log(`  ${reason}`);
      outcomes.push({ available: false, label: LABELS[name], reason, failed: true });
      continue;
    }
    if (message.type === 'unavailable') {
      log(`  not available: ${message.reason}`);
      outcomes.push({ available: false, label: LABELS[name], reason: message.reason, failed: false });
      continue;
    }
    const after = await upstream.stats();
    const { report } = message;
    const runs = Math.max(1, report.total_runs);
    const counted = {
      connections_per_run: (after.connections - before.connections) / runs,
      requests_per_run: (after.requests - before.requests) / runs,
      non2xx: after.non2xx - before.non2xx,
    };
    if (name === 'floor') floor = report;
    outcomes.push({
      available: true,
      label: LABELS[name],
      report,
      upstream: counted,
      overhead_ms_per_step: {
        sequential: name === 'floor' ? null : overhead(report.sequential, floor?.sequential),
        concurrent: name === 'floor' ? null : overhead(report.concurrent, floor?.concurrent),
      },
      cpu_overhead_ms_per_step:
        name === 'floor' || !report.concurrent || !floor?.concurrent
          ? null
          : (report.concurrent.cpu_ms_per_run - floor.concurrent.cpu_ms_per_run) / REQUESTS_PER_RUN,
      problems: problemsOf(report, counted),
    });
  }

  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const out = [
    '',
    `Runner benchmark: ${DURATION} s per phase after ${WARMUP} s warm-up, ${CONCURRENCY} runs at a time ` +
      `in the concurrent phase; Node ${process.version}, ${os.cpus().length} CPUs (${cpu})`,
    VIGIL_FLAGS === 'command'
      ? `Vigil runs as the vigil command does: ${vigilCommandLine()}; the others with Node's defaults`
      : "Every contender runs with Node's defaults",
    '',
    table(outcomes),
    '',
  ];
  const troubled = outcomes.filter((o): o is Measured => o.available && o.problems.length > 0);
  for (const o of troubled) out.push(`ERRORS ${o.label}:`, ...o.problems.map((p) => `  ${p}`));
  process.stdout.write(`${out.join('\n')}\n`);

  const results = resultsJson(outcomes, names);
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  log(`results written to ${path.relative(ROOT, RESULTS_FILE)}`);
  return results.ok ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  log(`\nbench:runner failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  stopChildren();
}
process.exit(exitCode);
