import { sql } from 'kysely';
import type { JobRow } from '../database.js';
import type { Executor } from '../store.js';

/** Which jobs a claim may take by region. */
export type RegionFilter =
  /** Region-less jobs and jobs of these regions (none: region-less jobs only). */
  | { regions: readonly string[] }
  /** Every job but those whose region starts with this prefix (the private queues of remote agents). */
  | { exceptPrefix: string };

/** Rows of the embedded job queue (the `jobs` table). */
export const jobsRepo = {
  /** Per job name, the ready jobs due by `now` and the earliest due time among them (metrics). */
  async waitingByName(
    db: Executor,
    now: number,
  ): Promise<{ name: string; waiting: number; oldest: number }[]> {
    const rows = await db
      .selectFrom('jobs')
      .select((eb) => [
        'name',
        eb.fn.countAll<number | string>().as('waiting'),
        eb.fn.min('run_after').as('oldest'),
      ])
      .where('state', '=', 'ready')
      .where('run_after', '<=', now)
      .groupBy('name')
      .execute();
    return rows.map((row) => ({ name: row.name, waiting: Number(row.waiting), oldest: Number(row.oldest) }));
  },

  async insert(db: Executor, row: JobRow): Promise<void> {
    await db.insertInto('jobs').values(row).execute();
  },

  /**
   * Leases the ready job of these names due longest, of the regions the filter allows, to the
   * worker until `lockedUntil`, counting an attempt; undefined when there is none. With `skipLocked`
   * (PostgreSQL) a row another transaction holds is passed over.
   */
  async claimNext(
    db: Executor,
    options: {
      workerId: string;
      names: readonly string[];
      region: RegionFilter;
      now: number;
      lockedUntil: number;
      skipLocked: boolean;
    },
  ): Promise<JobRow | undefined> {
    let next = db
      .selectFrom('jobs')
      .select('id')
      .where('state', '=', 'ready')
      .where('name', 'in', [...options.names])
      .where('run_after', '<=', options.now)
      .orderBy('run_after')
      .limit(1);
    const filter = options.region;
    if ('regions' in filter) {
      next =
        filter.regions.length === 0
          ? next.where('region', 'is', null)
          : next.where((eb) => eb.or([eb('region', 'is', null), eb('region', 'in', [...filter.regions])]));
    } else {
      next = next.where((eb) =>
        eb.or([eb('region', 'is', null), eb('region', 'not like', `${filter.exceptPrefix}%`)]),
      );
    }
    if (options.skipLocked) next = next.forUpdate().skipLocked();
    return db
      .updateTable('jobs')
      .set({
        state: 'active',
        locked_by: options.workerId,
        locked_until: options.lockedUntil,
        attempts: sql<number>`attempts + 1`,
      })
      .where('id', '=', (eb) => eb.selectFrom(next.as('next')).select('next.id'))
      .where('state', '=', 'ready')
      .returningAll()
      .executeTakeFirst();
  },

  /** Extends the worker's lease of an active job; false when the worker no longer holds it. */
  async renew(db: Executor, jobId: string, workerId: string, lockedUntil: number): Promise<boolean> {
    const result = await db
      .updateTable('jobs')
      .set({ locked_until: lockedUntil })
      .where('id', '=', jobId)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'active')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** The job, when this worker holds it. */
  heldBy(db: Executor, jobId: string, workerId: string): Promise<JobRow | undefined> {
    return db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', jobId)
      .where('locked_by', '=', workerId)
      .executeTakeFirst();
  },

  /** Deletes the job, only when this worker holds it. */
  async deleteHeld(db: Executor, jobId: string, workerId: string): Promise<void> {
    await db.deleteFrom('jobs').where('id', '=', jobId).where('locked_by', '=', workerId).execute();
  },

  async delete(db: Executor, jobId: string): Promise<void> {
    await db.deleteFrom('jobs').where('id', '=', jobId).execute();
  },

  /** Puts a leased job back in the queue, due at `runAfter`, noting why. */
  async release(db: Executor, jobId: string, error: string, runAfter: number): Promise<void> {
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
  },

  /**
   * Active jobs whose lease ran out before `now`, at most `limit`. With `skipLocked` (PostgreSQL, in
   * a transaction) the rows are locked until it ends and rows another transaction holds are left out.
   */
  expiredLeases(
    db: Executor,
    now: number,
    limit: number,
    options: { skipLocked: boolean },
  ): Promise<JobRow[]> {
    let query = db
      .selectFrom('jobs')
      .selectAll()
      .where('state', '=', 'active')
      .where('locked_until', '<', now)
      .limit(limit);
    if (options.skipLocked) query = query.forUpdate().skipLocked();
    return query.execute();
  },
};
