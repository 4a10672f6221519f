import { PostgresAdapter } from 'kysely';
import type { Executor } from './store.js';

/**
 * Takes a row lock for the rest of the transaction where the dialect has row locks (PostgreSQL);
 * SQLite serialises writers on its one connection, so there it is a no-op.
 */
export async function lockRow(db: Executor, table: 'buckets' | 'tests', key: string): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  if (table === 'buckets')
    await db.selectFrom('buckets').select('key').where('key', '=', key).forUpdate().execute();
  else await db.selectFrom('tests').select('id').where('id', '=', key).forUpdate().execute();
}
