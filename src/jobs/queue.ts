import type { Executor } from '../store/store.js';
import type { ClaimedJob, JobName, JobOptions, JobPayloads } from './jobs.js';

/** Queue regions of this prefix belong to one remote agent each; "every region" leaves them out. */
export const AGENT_REGION_PREFIX = 'agent-';

/** Per job name: how many jobs are due and not yet taken, and how long the oldest has waited. */
export interface QueueStats {
  job: JobName;
  waiting: number;
  /** Seconds since the oldest waiting job became due; 0 when none waits. */
  oldestWaitingSeconds: number;
}

/**
 * The job queue port. `enqueue` takes the caller's transaction, so a job exists exactly when the
 * rows it refers to do. A claimed job is leased to one worker; a worker that stops renewing its
 * lease loses the job to another worker (one attempt used).
 */
export interface JobQueue {
  enqueue<N extends JobName>(
    db: Executor,
    name: N,
    payload: JobPayloads[N],
    options?: JobOptions,
  ): Promise<string>;
  /**
   * Takes the next due job of these names for a worker serving `regions` and region-less jobs
   * (null = every region but the agents' own).
   */
  claim(
    workerId: string,
    names: readonly JobName[],
    regions: readonly string[] | null,
    leaseMs: number,
  ): Promise<ClaimedJob | null>;
  /** Takes up to `max` due jobs at once (a worker with free capacity); [] when none is due. */
  claimMany(
    workerId: string,
    names: readonly JobName[],
    regions: readonly string[] | null,
    leaseMs: number,
    max: number,
  ): Promise<ClaimedJob[]>;
  /** Extends the lease; false when the job is no longer this worker's. */
  renew(jobId: string, workerId: string, leaseMs: number): Promise<boolean>;
  /** The job is done: it leaves the queue. */
  complete(jobId: string, workerId: string): Promise<void>;
  /** The attempt failed: the job is retried by its retry policy while attempts remain, else dropped. */
  fail(jobId: string, workerId: string, error: string): Promise<'retrying' | 'dropped'>;
  /**
   * Jobs whose lease ran out while their worker was gone: each is made ready again, or, with no
   * attempt left, removed and returned so that its owner can record the outcome.
   */
  reclaimExpired(): Promise<ClaimedJob[]>;
  /** The waiting jobs by name, for metrics: one grouped read, kept cheap enough for every scrape. */
  stats(): Promise<QueueStats[]>;
  /** Tells this process's workers that jobs may be ready (call after the enqueuing transaction commits). */
  notify(): void;
  onNotify(listener: () => void): () => void;
}
