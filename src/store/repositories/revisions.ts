import type { NewRevision, RevisionRow } from '../database.js';
import type { Executor } from '../store.js';

export const revisionsRepo = {
  async insert(db: Executor, rows: NewRevision[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('revisions').values(rows).execute();
  },

  /** Every revision of a test and of its environments, oldest first. */
  forTest(db: Executor, testId: string): Promise<RevisionRow[]> {
    return db
      .selectFrom('revisions')
      .selectAll()
      .where('test_id', '=', testId)
      .orderBy('timestamp')
      .orderBy('id')
      .execute();
  },

  get(db: Executor, id: string): Promise<RevisionRow | undefined> {
    return db.selectFrom('revisions').selectAll().where('id', '=', id).executeTakeFirst();
  },

  forItem(db: Executor, itemId: string): Promise<RevisionRow[]> {
    return db
      .selectFrom('revisions')
      .selectAll()
      .where('item_id', '=', itemId)
      .orderBy('timestamp')
      .orderBy('id')
      .execute();
  },
};
