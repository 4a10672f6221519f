import { EventEmitter } from 'node:events';
import { newId, nowFloat } from '../domain/ids.js';
import type { JobRow } from '../store/database.js';
import { jobsRepo } from '../store/repositories/jobs.js';
import type { Executor, Store } from '../store/store.js';
import {
  type ClaimedJob,
  type JobName,
  type JobOptions,
  type JobPayloads,
  retryDelaySeconds,
} from './jobs.js';
import { AGENT_REGION_PREFIX, type JobQueue, type QueueStats } from './queue.js';

function claimed(row: JobRow): ClaimedJob {
  return {
    id: row.id,
    name: row.name as JobName,
    payload: JSON.parse(row.payload) as JobPayloads[JobName],
    region: row.region,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
  };
}

/**
 * The durable queue of the embedded mode: a `jobs` table in the service's own store (SQLite, or
 * PostgreSQL where it takes rows with `FOR UPDATE SKIP LOCKED`). Jobs survive restarts; leases let
 * a job outlive the worker that held it.
 */
export class LocalJobQueue implements JobQueue {
  private readonly events = new EventEmitter();

  constructor(private readonly store: Store) {
    this.events.setMaxListeners(0);
  }

  async enqueue<N extends JobName>(
    db: Executor,
    name: N,
    payload: JobPayloads[N],
    options: JobOptions = {},
  ): Promise<string> {
    const id = newId();
    const now = nowFloat();
    await jobsRepo.insert(db, {
      id,
      name,
      payload: JSON.stringify(payload),
      region: options.region ?? null,
      state: 'ready',
      run_after: options.runAfter ?? now,
      attempts: 0,
      max_attempts: (options.retry?.limit ?? 0) + 1,
      retry_delay: options.retry?.delaySeconds ?? 0,
      retry_backoff: options.retry?.backoff ? 1 : 0,
      locked_by: null,
      locked_until: null,
      last_error: null,
      created_at: now,
    });
    return id;
  }

  async claim(
    workerId: string,
    names: readonly JobName[],
    regions: readonly string[] | null,
    leaseMs: number,
  ): Promise<ClaimedJob | null> {
    if (names.length === 0) return null;
    const now = nowFloat();
    const row = await jobsRepo.claimNext(this.store.db, {
      workerId,
      names,
      // Without regions: every region of workers, not the private queues of remote agents.
      region: regions !== null ? { regions } : { exceptPrefix: AGENT_REGION_PREFIX },
      now,
      lockedUntil: now + leaseMs / 1000,
      skipLocked: this.store.dialect === 'postgres',
    });
    return row ? claimed(row) : null;
  }

  async claimMany(
    workerId: string,
    names: readonly JobName[],
    regions: readonly string[] | null,
    leaseMs: number,
    max: number,
  ): Promise<ClaimedJob[]> {
    const jobs: ClaimedJob[] = [];
    while (jobs.length < max) {
      const job = await this.claim(workerId, names, regions, leaseMs);
      if (!job) break;
      jobs.push(job);
    }
    return jobs;
  }

  async renew(jobId: string, workerId: string, leaseMs: number): Promise<boolean> {
    return jobsRepo.renew(this.store.db, jobId, workerId, nowFloat() + leaseMs / 1000);
  }

  async complete(jobId: string, workerId: string): Promise<void> {
    await jobsRepo.deleteHeld(this.store.db, jobId, workerId);
  }

  async fail(jobId: string, workerId: string, error: string): Promise<'retrying' | 'dropped'> {
    return this.store.transaction(async (trx) => {
      const row = await jobsRepo.heldBy(trx, jobId, workerId);
      if (!row) return 'dropped';
      if (row.attempts >= row.max_attempts) {
        await jobsRepo.delete(trx, jobId);
        return 'dropped';
      }
      const delay = retryDelaySeconds(
        { limit: row.max_attempts - 1, delaySeconds: row.retry_delay, backoff: row.retry_backoff === 1 },
        row.attempts,
      );
      await jobsRepo.release(trx, jobId, error, nowFloat() + delay);
      return 'retrying';
    });
  }

  async reclaimExpired(): Promise<ClaimedJob[]> {
    const now = nowFloat();
    return this.store.transaction(async (trx) => {
      const rows = await jobsRepo.expiredLeases(trx, now, 100, {
        skipLocked: this.store.dialect === 'postgres',
      });
      const given_up: ClaimedJob[] = [];
      for (const row of rows) {
        if (row.attempts >= row.max_attempts) {
          await jobsRepo.delete(trx, row.id);
          given_up.push(claimed(row));
        } else {
          await jobsRepo.release(
            trx,
            row.id,
            `the worker ${row.locked_by ?? ''} stopped before finishing`,
            row.run_after,
          );
        }
      }
      return given_up;
    });
  }

  async stats(): Promise<QueueStats[]> {
    const now = nowFloat();
    const rows = await jobsRepo.waitingByName(this.store.db, now);
    return rows.map((row) => ({
      job: row.name as JobName,
      waiting: row.waiting,
      oldestWaitingSeconds: Math.max(0, now - row.oldest),
    }));
  }

  notify(): void {
    this.events.emit('ready');
  }

  onNotify(listener: () => void): () => void {
    this.events.on('ready', listener);
    return () => this.events.off('ready', listener);
  }
}
