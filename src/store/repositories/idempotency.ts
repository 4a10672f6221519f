import type { IdempotencyKeyRow } from '../database.js';
import type { Executor } from '../store.js';

export const idempotencyRepo = {
  /** Reserves a key for a request being answered; false when the key is taken already. */
  async reserve(
    db: Executor,
    row: Pick<IdempotencyKeyRow, 'scope' | 'key' | 'fingerprint' | 'created_at'>,
  ): Promise<boolean> {
    const result = await db
      .insertInto('idempotency_keys')
      .values({ ...row, status: null, content_type: null, body: null })
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  },

  async get(db: Executor, scope: string, key: string): Promise<IdempotencyKeyRow | undefined> {
    return db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
  },

  async complete(
    db: Executor,
    scope: string,
    key: string,
    answer: { status: number; content_type: string | null; body: string },
  ): Promise<void> {
    await db
      .updateTable('idempotency_keys')
      .set(answer)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  },

  /** Removes a key: its request failed on the server's side, or it expired, or was abandoned. */
  async remove(db: Executor, scope: string, key: string, createdAt?: number): Promise<void> {
    let query = db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key);
    if (createdAt !== undefined) query = query.where('created_at', '=', createdAt);
    await query.execute();
  },

  async removeOlderThan(db: Executor, before: number): Promise<number> {
    const result = await db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
