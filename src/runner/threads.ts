/** Pools of worker threads (sandbox, checks): the jobs they take, and how a job ends. */

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
