import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import { newId, nowFloat } from '../domain/ids.js';
import type { JobRow } from '../store/database.js';
import type { Executor, Store } from '../store/store.js';
import {
  type ClaimedJob,
  type JobName,
  type JobOptions,
  type JobPayloads,
  retryDelaySeconds,
} from './jobs.js';
import { AGENT_REGION_PREFIX, type JobQueue } from './queue.js';

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

/** Puts a leased job back in the queue, due at `runAfter`, noting why. */
async function release(db: Executor, jobId: string, error: string, runAfter: number): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      state: 'ready',
      locked_by: null,
      locked_until: null,
      last_error: error.slice(0, 2000),
      run_after: runAfter,
    })
    .where('id', '=', jobId)
    .execute();
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
    await db
      .insertInto('jobs')
      .values({
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
      })
      .execute();
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
    const db = this.store.db;
    let next = db
      .selectFrom('jobs')
      .select('id')
      .where('state', '=', 'ready')
      .where('name', 'in', [...names])
      .where('run_after', '<=', now)
      .orderBy('run_after')
      .limit(1);
    if (regions !== null) {
      next =
        regions.length === 0
          ? next.where('region', 'is', null)
          : next.where((eb) => eb.or([eb('region', 'is', null), eb('region', 'in', [...regions])]));
    } else {
      // Every region of workers, not the private queues of remote agents.
      next = next.where((eb) =>
        eb.or([eb('region', 'is', null), eb('region', 'not like', `${AGENT_REGION_PREFIX}%`)]),
      );
    }
    if (this.store.dialect === 'postgres') next = next.forUpdate().skipLocked();
    const row = await db
      .updateTable('jobs')
      .set({
        state: 'active',
        locked_by: workerId,
        locked_until: now + leaseMs / 1000,
        attempts: sql<number>`attempts + 1`,
      })
      .where('id', '=', (eb) => eb.selectFrom(next.as('next')).select('next.id'))
      .where('state', '=', 'ready')
      .returningAll()
      .executeTakeFirst();
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
    const result = await this.store.db
      .updateTable('jobs')
      .set({ locked_until: nowFloat() + leaseMs / 1000 })
      .where('id', '=', jobId)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'active')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async complete(jobId: string, workerId: string): Promise<void> {
    await this.store.db
      .deleteFrom('jobs')
      .where('id', '=', jobId)
      .where('locked_by', '=', workerId)
      .execute();
  }

  async fail(jobId: string, workerId: string, error: string): Promise<'retrying' | 'dropped'> {
    return this.store.transaction(async (trx) => {
      const row = await trx
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', jobId)
        .where('locked_by', '=', workerId)
        .executeTakeFirst();
      if (!row) return 'dropped';
      if (row.attempts >= row.max_attempts) {
        await trx.deleteFrom('jobs').where('id', '=', jobId).execute();
        return 'dropped';
      }
      const delay = retryDelaySeconds(
        { limit: row.max_attempts - 1, delaySeconds: row.retry_delay, backoff: row.retry_backoff === 1 },
        row.attempts,
      );
      await release(trx, jobId, error, nowFloat() + delay);
      return 'retrying';
    });
  }

  async reclaimExpired(): Promise<ClaimedJob[]> {
    const now = nowFloat();
    return this.store.transaction(async (trx) => {
      let expired = trx
        .selectFrom('jobs')
        .selectAll()
        .where('state', '=', 'active')
        .where('locked_until', '<', now)
        .limit(100);
      if (this.store.dialect === 'postgres') expired = expired.forUpdate().skipLocked();
      const rows = await expired.execute();
      const given_up: ClaimedJob[] = [];
      for (const row of rows) {
        if (row.attempts >= row.max_attempts) {
          await trx.deleteFrom('jobs').where('id', '=', row.id).execute();
          given_up.push(claimed(row));
        } else {
          await release(
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

  notify(): void {
    this.events.emit('ready');
  }

  onNotify(listener: () => void): () => void {
    this.events.on('ready', listener);
    return () => this.events.off('ready', listener);
  }
}
