import { sql } from 'kysely';
import { Store } from '../../src/store/store.js';

/** A store of a benchmark: SQLite under `dataDir`, or a fresh PostgreSQL database that `drop` removes. */
export interface BenchStore {
  store: Store;
  /** The PostgreSQL database's URL (undefined on SQLite). */
  databaseUrl?: string;
  drop: () => Promise<void>;
}

/**
 * Opens a benchmark's store for `dialect`: SQLite in `dataDir`, or on PostgreSQL a database named
 * `<prefix>_<pid>` created beside the one at `adminUrl`. Answers null when PostgreSQL does not
 * answer there.
 */
export async function openBenchStore(
  dialect: string,
  dataDir: string,
  adminUrl: string,
  prefix: string,
): Promise<BenchStore | null> {
  if (dialect !== 'postgres') return { store: Store.open({ dataDir }), drop: async () => {} };
  const admin = Store.open({ databaseUrl: adminUrl, dataDir });
  const reachable = await sql`select 1`.execute(admin.db).then(
    () => true,
    () => false,
  );
  if (!reachable) {
    await admin.close();
    return null;
  }
  const name = `${prefix}_${process.pid}`;
  await sql.raw(`create database ${name}`).execute(admin.db);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    store: Store.open({ databaseUrl: url.toString(), dataDir }),
    databaseUrl: url.toString(),
    drop: async () => {
      await sql.raw(`drop database if exists ${name} with (force)`).execute(admin.db);
      await admin.close();
    },
  };
}
