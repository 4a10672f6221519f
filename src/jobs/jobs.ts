/**
 * Every job the service queues, as one typed union: the name picks the payload. A job name added
 * here without a handler breaks the build where handlers are registered.
 */
export interface JobPayloads {
  /** Execute a queued test run. */
  'run-test': { runId: string };
}

export type JobName = keyof JobPayloads;
export const JOB_NAMES = ['run-test'] as const satisfies readonly JobName[];

export interface JobOptions {
  /** Only workers serving this region may take the job; null for any worker. */
  region?: string | null;
  /** Earliest time to run, float Unix seconds; defaults to now. */
  runAfter?: number;
  /** Attempts before the job is given up (a worker that dies mid-job costs one attempt). */
  maxAttempts?: number;
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
