import type { ScheduleRow } from '../database.js';
import type { Executor } from '../store.js';

export const schedulesRepo = {
  forTest(db: Executor, testId: string): Promise<ScheduleRow[]> {
    return db
      .selectFrom('schedules')
      .selectAll()
      .where('test_id', '=', testId)
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
