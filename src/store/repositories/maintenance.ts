import type { MaintenanceWindowRow } from '../database.js';
import type { Executor } from '../store.js';

export const maintenanceRepo = {
  /** The bucket's windows, oldest first. */
  forBucket(db: Executor, bucketKey: string): Promise<MaintenanceWindowRow[]> {
    return db
      .selectFrom('maintenance_windows')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /** The windows that can cover a test: the bucket's own and the test's. */
  forTest(db: Executor, bucketKey: string, testId: string): Promise<MaintenanceWindowRow[]> {
    return db
      .selectFrom('maintenance_windows')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .where((eb) => eb.or([eb('test_id', 'is', null), eb('test_id', '=', testId)]))
      .execute();
  },

  get(db: Executor, bucketKey: string, id: string): Promise<MaintenanceWindowRow | undefined> {
    return db
      .selectFrom('maintenance_windows')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async insert(db: Executor, row: MaintenanceWindowRow): Promise<void> {
    await db.insertInto('maintenance_windows').values(row).execute();
  },

  async update(db: Executor, row: MaintenanceWindowRow): Promise<void> {
    const { id, ...rest } = row;
    await db.updateTable('maintenance_windows').set(rest).where('id', '=', id).execute();
  },

  async delete(db: Executor, bucketKey: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('maintenance_windows')
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};
