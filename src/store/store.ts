import { Kysely, Migrator, type Transaction } from 'kysely';
import { StorageFull } from '../domain/errors.js';
import type { Database } from './database.js';
import { createPostgresDialect } from './dialects/postgres.js';
import { createSqliteDialect, generationOf, runNowOf } from './dialects/sqlite.js';
import type { SqliteDriverName } from './dialects/sqlite-drivers.js';
import { migrationProvider } from './migrations/index.js';
import { allowRunNow } from './prepared.js';
import { CommitGroup } from './commit-group.js';
import { StoreRoom } from './space.js';

export type DialectName = 'sqlite' | 'postgres';
/** The client library under the store: a SQLite binding, or node-postgres. */
export type StoreDriver = SqliteDriverName | 'pg';
export { SQLITE_DRIVERS, type SqliteDriverName } from './dialects/sqlite-drivers.js';
export { sqliteErrorCode } from './errors.js';
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Anything queries can run on: the store itself or an open transaction. */
export type Executor = Db | Trx;

export interface StoreOptions {
  /** `postgres://…` for PostgreSQL; otherwise the SQLite store under dataDir. */
  databaseUrl?: string | undefined;
  /** PostgreSQL keeps its hottest statements prepared per connection (default true; see keepPrepared). */
  databasePreparedStatements?: boolean | undefined;
  dataDir: string;
  sqliteSynchronous?: 'NORMAL' | 'FULL';
  /** Bytes of disk the SQLite store keeps free: below it writes that add data are refused. */
  minFreeDisk?: number;
  /** The SQLite binding; by default node:sqlite where this Node has it, better-sqlite3 otherwise. */
  sqliteDriver?: SqliteDriverName | undefined;
}

export class Store {
  private room: StoreRoom | null = null;
  private generationNow: ((tables: readonly string[]) => string | undefined) | undefined;

  private constructor(
    readonly db: Db,
    readonly dialect: DialectName,
    readonly driver: StoreDriver,
    /** Opened read-only: the disk was full when the service started. */
    readonly readOnly = false,
  ) {}

  static open(options: StoreOptions): Store {
    if (options.databaseUrl) {
      const dialect = createPostgresDialect(options.databaseUrl, {
        preparedStatements: options.databasePreparedStatements,
      });
      return new Store(new Kysely<Database>({ dialect }), 'postgres', 'pg');
    }
    const { dialect, readOnly, driver } = createSqliteDialect({
      dataDir: options.dataDir,
      synchronous: options.sqliteSynchronous,
      minFreeDisk: options.minFreeDisk,
      driver: options.sqliteDriver,
    });
    const db = new Kysely<Database>({ dialect });
    const runNow = runNowOf(dialect);
    if (runNow) allowRunNow(db, runNow);
    const store = new Store(db, 'sqlite', driver, readOnly);
    store.generationNow = generationOf(dialect);
    if (options.dataDir !== ':memory:' && options.minFreeDisk !== undefined)
      store.room = new StoreRoom({ dir: options.dataDir, minFree: options.minFreeDisk, db: store.db });
    return store;
  }

  /**
   * A value that changes whenever rows of any of `tables` change, read without waiting; undefined
   * when it cannot be had cheaply now (PostgreSQL, where other processes write and no counter covers
   * them; SQLite while a query or transaction holds its connection). An answer built from reads of
   * those tables made after taking the value may be given again for as long as it stays the same.
   */
  generation(tables: readonly string[]): string | undefined {
    return this.generationNow?.(tables);
  }

  /**
   * Why a write that adds data cannot succeed now, or null when it can: the store was opened
   * read-only, or (SQLite) its disk has less room left than MIN_FREE_DISK. Deletes are not refused:
   * the room under MIN_FREE_DISK is kept for them.
   */
  async writeBlocker(): Promise<string | null> {
    if (this.readOnly)
      return 'the store is read-only: its disk was full when the service started; free disk space and restart the service';
    return this.room ? this.room.blocker() : null;
  }

  /** Throws StorageFull (507) when a write that adds data cannot succeed now (see writeBlocker). */
  async assertRoom(): Promise<void> {
    const blocker = await this.writeBlocker();
    if (blocker) throw new StorageFull(`Storage is full: ${blocker}`);
  }

  /** After deletes: the next room check reads the disk again instead of trusting the last reading. */
  roomFreed(): void {
    this.room?.forget();
  }

  /** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    if (this.readOnly) {
      // Nothing can be written: the schema must already be current.
      const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined);
      if (pending.length > 0)
        throw new Error(
          `the disk is full and the store needs migrations (${pending.map((m) => m.name).join(', ')}); free disk space first`,
        );
      return [];
    }
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  /** Runs fn in one transaction: everything it writes lands together or not at all. */
  transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  private readonly commits = new CommitGroup((fn) => this.transaction(fn));

  /**
   * Runs fn as `transaction` does, for small writes that come often and concurrently (captured
   * messages). On SQLite, whose one connection writes one transaction at a time anyway, calls
   * arriving while one is being written share the next transaction and its commit, each in a
   * savepoint of its own (CommitGroup). On PostgreSQL each call has a transaction of its own: its
   * pool writes them side by side, and the savepoints would cost a round trip each. Everything fn
   * writes lands together or not at all, and the promise settles after the commit.
   */
  sharedTransaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return this.dialect === 'sqlite' ? this.commits.run(fn) : this.transaction(fn);
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
