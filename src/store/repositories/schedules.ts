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
};
