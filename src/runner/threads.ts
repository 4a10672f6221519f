/**
 * Starting a worker thread from a module of this package, the same way whether the process runs the
 * built code (dist/, `.js`) or the TypeScript sources through tsx (tests, benchmarks): loader hooks
 * of the parent do not reach worker threads, so from the sources the thread first registers tsx.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker running the module `name` (without extension) next to `base` (the caller's
 * `import.meta.url`).
 */
export function startModuleWorker(
  base: string,
  name: string,
  options: Omit<WorkerOptions, 'eval'> = {},
): Worker {
  const fromSource = base.endsWith('.ts');
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, base);
  if (!fromSource) return new Worker(url, options);
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** A job waiting for or running on a pool's thread: how its promise ends, and what may cancel it. */
export interface PoolJob<T> {
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

/** Calls `abort` if the job's signal aborts before the job is settled. */
export function watchAbort<T>(job: PoolJob<T>, abort: () => void): void {
  if (job.signal === undefined) return;
  job.onAbort = abort;
  job.signal.addEventListener('abort', abort, { once: true });
}

/** Ends the job's promise with an outcome or a reason, and stops watching its signal. */
export function settleJob<T>(job: PoolJob<T>, result: { outcome: T } | { reason: unknown }): void {
  if (job.onAbort !== null) job.signal?.removeEventListener('abort', job.onAbort);
  job.onAbort = null;
  if ('outcome' in result) job.resolve(result.outcome);
  else job.reject(result.reason);
}
