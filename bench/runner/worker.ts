/**
 * One contender of the runner benchmark, in a process of its own so that its memory and CPU are
 * its own: `node --import tsx bench/runner/worker.ts <contender>`, started by bench/runner.ts over
 * IPC, which it answers with one WorkerMessage before exiting.
 *
 * It loads the contender, verifies it (a run against the upstream must pass and one against the
 * upstream's `/bad` routes must fail), warms it up, then measures runs back to back and runs
 * `BENCH_CONCURRENCY` at a time, `BENCH_DURATION` seconds each. A phase ends when every run started
 * before its deadline has finished; its rate is runs over that whole time.
 *
 * Settings (env): UPSTREAM_URL, BENCH_DURATION, BENCH_WARMUP, BENCH_CONCURRENCY.
 */
import { performance } from 'node:perf_hooks';
import type { Contender, LoadContender } from './contender.js';
import {
  CONTENDERS,
  type ContenderName,
  type ContenderReport,
  type PhaseFigures,
  type WorkerMessage,
} from './protocol.js';

const MB = 1024 * 1024;

const MODULES: Record<ContenderName, string> = {
  floor: './floor.js',
  stepci: './stepci.js',
  newman: './newman.js',
  vigil: './vigil.js',
  'vigil-noscript': './vigil-noscript.js',
};

function setting(name: string): number {
  const value = Number(process.env[name]);
  if (!Number.isFinite(value)) throw new Error(`${name} is not set`);
  return value;
}

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('worker.ts runs only as a child of bench/runner.ts'));
    process.send(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

class Harness {
  totalRuns = 0;
  firstError: string | null = null;

  constructor(
    private readonly contender: Contender,
    private readonly baseUrl: string,
  ) {}

  /** One run; a throw counts as a failed run, and the first message is kept. */
  async attempt(baseUrl = this.baseUrl): Promise<boolean> {
    this.totalRuns++;
    try {
      return await this.contender.run(baseUrl);
    } catch (error) {
      this.firstError ??= error instanceof Error ? error.message : String(error);
      return false;
    }
  }

  async phase(concurrency: number, seconds: number): Promise<PhaseFigures> {
    const latencies: number[] = [];
    let errors = 0;
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const deadline = start + seconds * 1000;
    let end = start;
    const loop = async () => {
      while (performance.now() < deadline) {
        const began = performance.now();
        const passed = await this.attempt();
        const finished = performance.now();
        latencies.push(finished - began);
        if (!passed) errors++;
        end = Math.max(end, finished);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
    const cpu = process.cpuUsage(cpuBefore);
    latencies.sort((a, b) => a - b);
    const elapsed = (end - start) / 1000;
    return {
      concurrency,
      runs: latencies.length,
      errors,
      seconds: elapsed,
      runs_per_s: elapsed > 0 ? latencies.length / elapsed : 0,
      p50_ms: percentile(latencies, 0.5),
      p99_ms: percentile(latencies, 0.99),
      cpu_ms_per_run: latencies.length > 0 ? (cpu.user + cpu.system) / 1000 / latencies.length : 0,
    };
  }
}

async function main(): Promise<void> {
  const name = process.argv[2] as ContenderName;
  if (!CONTENDERS.includes(name)) throw new Error(`unknown contender "${process.argv[2]}"`);
  const baseUrl = process.env.UPSTREAM_URL;
  if (!baseUrl) throw new Error('UPSTREAM_URL is not set');
  const duration = setting('BENCH_DURATION');
  const warmup = setting('BENCH_WARMUP');
  const concurrency = setting('BENCH_CONCURRENCY');
  const log = (line: string) => process.stderr.write(`  ${name}: ${line}\n`);

  const loadStarted = performance.now();
  const { load } = (await import(MODULES[name])) as { load: LoadContender };
  const loaded = await load();
  if ('unavailable' in loaded) return send({ type: 'unavailable', name, reason: loaded.unavailable });
  const loadMs = performance.now() - loadStarted;
  const rssLoaded = process.memoryUsage.rss();

  const harness = new Harness(loaded, baseUrl);
  const verification = {
    pass_run_passed: await harness.attempt(),
    fail_run_failed: !(await harness.attempt(`${baseUrl}/bad`)),
  };
  const verified = verification.pass_run_passed && verification.fail_run_failed;
  log(
    `verification: a run against the upstream ${verification.pass_run_passed ? 'passed' : 'FAILED'}, ` +
      `one against /bad ${verification.fail_run_failed ? 'failed' : 'PASSED'}` +
      (verified ? '' : '; not measured'),
  );
  let sequential: PhaseFigures | null = null;
  let concurrent: PhaseFigures | null = null;
  if (verified) {
    if (warmup > 0) {
      log(`warm-up ${warmup} s`);
      await harness.phase(1, warmup);
    }
    log(`${duration} s, one run at a time`);
    sequential = await harness.phase(1, duration);
    log(`${sequential.runs_per_s.toFixed(1)} runs/s, ${sequential.errors} errors`);
    log(`${duration} s, ${concurrency} runs at a time`);
    concurrent = await harness.phase(concurrency, duration);
    log(`${concurrent.runs_per_s.toFixed(1)} runs/s, ${concurrent.errors} errors`);
  }

  const report: ContenderReport = {
    name,
    load_ms: loadMs,
    rss_loaded_mb: rssLoaded / MB,
    // maxRSS is in kilobytes: the kernel's high-water mark of this process.
    peak_rss_mb: (process.resourceUsage().maxRSS * 1024) / MB,
    verification,
    sequential,
    concurrent,
    total_runs: harness.totalRuns,
    first_error: harness.firstError,
  };
  await send({ type: 'report', report });
}

try {
  await main();
  process.exit(0);
} catch (error) {
  process.stderr.write(
    `worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
}
