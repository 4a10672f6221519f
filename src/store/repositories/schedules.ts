import type { ScheduleRow } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

const schedulesOfTest = preparedQuery<{ testId: string }, ScheduleRow>(['testId'], (db, p) =>
  db.selectFrom('schedules').selectAll().where('test_id', '=', p.testId).orderBy('created_at').orderBy('id'),
);

export const schedulesRepo = {
  forTest(db: Executor, testId: string): Promise<ScheduleRow[]> {
    return schedulesOfTest(db, { testId });
  },

  /** The schedules of several tests, each test's oldest first. */
  forTests(db: Executor, testIds: readonly string[]): Promise<ScheduleRow[]> {
    if (testIds.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('schedules')
      .selectAll()
      .where('test_id', 'in', testIds)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  get(db: Executor, testId: string, id: string): Promise<ScheduleRow | undefined> {
    return db
      .selectFrom('schedules')
      .selectAll()
      .where('test_id', '=', testId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async insert(db: Executor, rows: ScheduleRow[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('schedules').values(rows).execute();
  },

  async update(db: Executor, row: ScheduleRow): Promise<void> {
    const { id, ...rest } = row;
    await db.updateTable('schedules').set(rest).where('id', '=', id).execute();
  },

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('schedules').where('id', '=', id).execute();
  },

  /** Schedules not yet given a planned start (new ones), at most `limit`. */
  unplanned(db: Executor, limit: number): Promise<Pick<ScheduleRow, 'id' | 'interval'>[]> {
    return db
      .selectFrom('schedules')
      .select(['id', 'interval'])
      .where('next_run_at', 'is', null)
      .limit(limit)
      .execute();
  },

  /** Gives the schedule its first planned start, unless another process did first. */
  async plan(db: Executor, id: string, nextRunAt: number): Promise<void> {
    await db
      .updateTable('schedules')
      .set({ next_run_at: nextRunAt })
      .where('id', '=', id)
      .where('next_run_at', 'is', null)
      .execute();
  },

  /** The ids of the schedules due at `now`, the longest due first, at most `limit`. */
  async dueIds(db: Executor, now: number, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('schedules')
      .select('id')
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
    return rows.map((row) => row.id);
  },

  /**
   * Those of these schedules still due at `now`. With `skipLocked` (PostgreSQL, in a transaction)
   * the rows are locked until it ends and rows another transaction holds are left out.
   */
  takeDue(
    db: Executor,
    ids: readonly string[],
    now: number,
    options: { skipLocked: boolean },
  ): Promise<ScheduleRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    let query = db.selectFrom('schedules').selectAll().where('id', 'in', ids).where('next_run_at', '<=', now);
    if (options.skipLocked) query = query.forUpdate().skipLocked();
    return query.execute();
  },

  async setNextRun(db: Executor, id: string, nextRunAt: number): Promise<void> {
    await db.updateTable('schedules').set({ next_run_at: nextRunAt }).where('id', '=', id).execute();
  },

  /** The interval of a schedule, or undefined when it is gone. */
  async intervalOf(db: Executor, id: string): Promise<string | undefined> {
    const row = await db.selectFrom('schedules').select('interval').where('id', '=', id).executeTakeFirst();
    return row?.interval;
  },
};
