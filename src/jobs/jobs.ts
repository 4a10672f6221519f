/**
 * Every job the service queues, as one typed union: the name picks the payload. A job name added
 * here without a handler breaks the build where handlers are registered.
 */
export interface JobPayloads {
  /** Execute a queued test run. `execution` counts deliveries of the run (1, or 2 after a requeue). */
  'run-test': { runId: string; execution?: number };
  /** A run finished: work out who hears about it and queue one delivery each. */
  'notify-run': { runId: string };
  /** Deliver one notification (webhook, e-mail, Slack, PagerDuty); retried with backoff. */
  'deliver-notification': { notificationId: string };
  /** Delete messages past their bucket's retention. */
  'apply-retention': Record<string, never>;
}

export type JobName = keyof JobPayloads;
export const JOB_NAMES = [
  'run-test',
  'notify-run',
  'deliver-notification',
  'apply-retention',
] as const satisfies readonly JobName[];

/** How a failed job is retried: `limit` retries after the first attempt, `delaySeconds` apart (doubling with `backoff`). */
export interface RetryPolicy {
  limit: number;
  delaySeconds: number;
  backoff: boolean;
}

export interface JobOptions {
  /** Only workers serving this region may take the job; null for any worker. */
  region?: string | null;
  /** Earliest time to run, float Unix seconds; defaults to now. */
  runAfter?: number;
  /** Defaults to no retry: a failed or abandoned job is given up. */
  retry?: RetryPolicy;
}

export interface ClaimedJob<N extends JobName = JobName> {
  id: string;
  name: N;
  payload: JobPayloads[N];
  region: string | null;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
}

/** The delay before retry number `retry` (1 for the first retry). */
export function retryDelaySeconds(policy: RetryPolicy, retry: number): number {
  return policy.backoff ? policy.delaySeconds * 2 ** Math.max(0, retry - 1) : policy.delaySeconds;
}
