import type { SavedViewRow } from '../database.js';
import type { Executor } from '../store.js';

/** A saved view with the name and e-mail of the account that made it. */
export interface SavedViewWithCreator extends SavedViewRow {
  creator_name: string;
  creator_email: string;
}

function viewsWithCreator(db: Executor) {
  return db
    .selectFrom('saved_views')
    .leftJoin('accounts', 'accounts.id', 'saved_views.created_by')
    .selectAll('saved_views')
    .select(['accounts.name as creator_name', 'accounts.email as creator_email']);
}

function normalise<T extends { creator_name: string | null; creator_email: string | null }>(row: T) {
  return { ...row, creator_name: row.creator_name ?? '', creator_email: row.creator_email ?? '' };
}

export const viewsRepo = {
  async list(db: Executor, bucketKey: string): Promise<SavedViewWithCreator[]> {
    const rows = await viewsWithCreator(db)
      .where('saved_views.bucket_key', '=', bucketKey)
      .orderBy('saved_views.created_at')
      .orderBy('saved_views.id')
      .execute();
    return rows.map(normalise);
  },

  async get(db: Executor, bucketKey: string, id: string): Promise<SavedViewWithCreator | undefined> {
    const row = await viewsWithCreator(db)
      .where('saved_views.bucket_key', '=', bucketKey)
      .where('saved_views.id', '=', id)
      .executeTakeFirst();
    return row && normalise(row);
  },

  /** The view of the bucket with this name key, if any (names are unique case-insensitively). */
  byNameKey(db: Executor, bucketKey: string, nameKey: string): Promise<{ id: string } | undefined> {
    return db
      .selectFrom('saved_views')
      .select('id')
      .where('bucket_key', '=', bucketKey)
      .where('name_key', '=', nameKey)
      .executeTakeFirst();
  },

  async count(db: Executor, bucketKey: string): Promise<number> {
    const row = await db
      .selectFrom('saved_views')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('bucket_key', '=', bucketKey)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  },

  async insert(db: Executor, row: SavedViewRow): Promise<void> {
    await db.insertInto('saved_views').values(row).execute();
  },

  async update(
    db: Executor,
    id: string,
    patch: Pick<SavedViewRow, 'name' | 'name_key' | 'stream' | 'filters' | 'updated_at'>,
  ): Promise<void> {
    await db.updateTable('saved_views').set(patch).where('id', '=', id).execute();
  },

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('saved_views').where('id', '=', id).execute();
  },
};
