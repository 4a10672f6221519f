import { Kysely, Migrator, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { createPostgresDialect } from './dialects/postgres.js';
import { createSqliteDialect } from './dialects/sqlite.js';
import { migrationProvider } from './migrations/index.js';

export type DialectName = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Anything queries can run on: the store itself or an open transaction. */
export type Executor = Db | Trx;

export interface StoreOptions {
  /** `postgres://…` for PostgreSQL; otherwise the SQLite store under dataDir. */
  databaseUrl?: string | undefined;
  dataDir: string;
  sqliteSynchronous?: 'NORMAL' | 'FULL';
}

export class Store {
  private constructor(
    readonly db: Db,
    readonly dialect: DialectName,
  ) {}

  static open(options: StoreOptions): Store {
    if (options.databaseUrl) {
      const dialect = createPostgresDialect(options.databaseUrl);
      return new Store(new Kysely<Database>({ dialect }), 'postgres');
    }
    const dialect = createSqliteDialect({
      dataDir: options.dataDir,
      synchronous: options.sqliteSynchronous,
    });
    return new Store(new Kysely<Database>({ dialect }), 'sqlite');
  }

  /** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  /** Runs fn in one transaction: everything it writes lands together or not at all. */
  transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /** Answers true when storage responds to a trivial query. */
  async ping(): Promise<boolean> {
    try {
      await this.db.selectFrom('accounts').select('id').limit(1).execute();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
