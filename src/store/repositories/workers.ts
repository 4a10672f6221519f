import type { WorkerRow, WorkerTable } from '../database.js';
import type { Executor } from '../store.js';

export const workersRepo = {
  /** Inserts the process, or refreshes its announcement. */
  async upsert(db: Executor, row: WorkerTable): Promise<void> {
    await db
      .insertInto('workers')
      .values(row)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          regions: row.regions,
          version: row.version,
          hostname: row.hostname,
          pid: row.pid,
          concurrency: row.concurrency,
          last_seen_at: row.last_seen_at,
        }),
      )
      .execute();
  },

  async touch(db: Executor, id: string, at: number): Promise<boolean> {
    const result = await db
      .updateTable('workers')
      .set({ last_seen_at: at })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async remove(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('workers').where('id', '=', id).execute();
  },

  /** Processes seen at or after `since`. */
  async seenSince(db: Executor, since: number): Promise<WorkerRow[]> {
    return db.selectFrom('workers').selectAll().where('last_seen_at', '>=', since).execute();
  },

  /** Forgets processes not seen since `before` (their runs have been dealt with by then). */
  async forgetBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('workers').where('last_seen_at', '<', before).execute();
  },
};
