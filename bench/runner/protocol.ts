/**
 * What the runner benchmark's processes say to each other over IPC: the orchestrator
 * (bench/runner.ts), the upstream (upstream.ts) and one worker per contender (worker.ts).
 */

/** The contenders, in the order they run and appear in the table. */
export const CONTENDERS = ['floor', 'stepci', 'newman', 'vigil', 'vigil-noscript'] as const;
export type ContenderName = (typeof CONTENDERS)[number];

export interface UpstreamStats {
  /** TCP connections accepted. */
  connections: number;
  /** HTTP requests received. */
  requests: number;
  /** Responses with a status outside 2xx. */
  non2xx: number;
}

export type UpstreamMessage =
  { type: 'listening'; port: number } | { type: 'get_stats' } | { type: 'stats'; stats: UpstreamStats };

/** Figures of one measured phase: runs back to back, or many at once. */
export interface PhaseFigures {
  /** Runs in flight at any time. */
  concurrency: number;
  /** Runs completed, passed or not. */
  runs: number;
  /** Runs that did not pass. */
  errors: number;
  /** From the first start to the last completion. */
  seconds: number;
  runs_per_s: number;
  p50_ms: number;
  p99_ms: number;
  /** CPU time of the worker process (user + system) per run. */
  cpu_ms_per_run: number;
}

export interface ContenderReport {
  name: ContenderName;
  /** Time to import the contender and prepare its test. */
  load_ms: number;
  /** RSS right after loading, before the first run. MB = 2²⁰ bytes. */
  rss_loaded_mb: number;
  /** The highest RSS of the worker process over its life (the kernel's high-water mark). */
  peak_rss_mb: number;
  /** The checks of the harness itself: a run against the upstream passes, one against `/bad` fails. */
  verification: { pass_run_passed: boolean; fail_run_failed: boolean };
  /** Null when the verification failed: the figures of a broken contender mean nothing. */
  sequential: PhaseFigures | null;
  concurrent: PhaseFigures | null;
  /** Every run the worker made, verification and warm-up included (for per-run upstream counts). */
  total_runs: number;
  /** Message of the first run that threw, if any did. */
  first_error: string | null;
}

export type WorkerMessage =
  { type: 'report'; report: ContenderReport } | { type: 'unavailable'; name: ContenderName; reason: string };
