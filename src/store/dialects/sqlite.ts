import fs from 'node:fs';
import { privateDatabaseFile } from './files.js';
import { storeFailureOf } from '../errors.js';
import { keepReserve, reserveOf } from '../space.js';
import {
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase as KyselySqliteDatabase,
  SqliteDialect,
  SqliteDriver,
  type SqliteStatement,
} from 'kysely';
import { openSqlite, type SqliteConnection, type SqliteDriverName } from './sqlite-drivers.js';

export interface SqliteOptions {
  /** Directory that holds vigil.db, or ':memory:' for a throw-away store. */
  dataDir: string;
  synchronous?: 'NORMAL' | 'FULL';
  /** MIN_FREE_DISK: sizes the reserve file kept beside the database (half of it, at most 8 MB). */
  minFreeDisk?: number | undefined;
  /** The binding to open it with; by default node:sqlite where this Node has it (sqlite-drivers.ts). */
  driver?: SqliteDriverName | undefined;
}

/** Statements kept prepared, most recently used last; the oldest goes when the cache is full. */
const STATEMENT_CACHE_SIZE = 500;
/** Statements with more parameters than this are not kept (see withStatementCache). */
const MAX_CACHED_PARAMETERS = 32;

function parameterCount(sql: string): number {
  let count = 0;
  for (let i = sql.indexOf('?'); i >= 0; i = sql.indexOf('?', i + 1)) count++;
  return count;
}

/**
 * Hands Kysely the connection with a cache of prepared statements: Kysely prepares every query it
 * runs, and preparing costs more than running most of ours. Kysely runs one query at a time on the
 * one connection and each statement to completion, so sharing a prepared statement is safe.
 */
function withStatementCache(raw: SqliteConnection): KyselySqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      // Statements with many parameters (multi-row inserts, long `in` lists) come in as many shapes
      // as there are row counts; each prepared one holds tens of kilobytes of native memory, so
      // caching them made RSS climb in steps under a varied load. They are prepared afresh instead:
      // next to the rows they write, preparing costs little.
      if (parameterCount(sql) > MAX_CACHED_PARAMETERS) return raw.prepare(sql);
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = raw.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * SQLite rolls a transaction back by itself when a write fails for want of disk space (SQLITE_FULL)
 * or on some I/O errors; the ROLLBACK that follows then fails with "no transaction is active" and
 * would replace the real error. Such a ROLLBACK has nothing left to do and is skipped.
 *
 * The driver also knows when its one connection is free, so that a read can run on it at once
 * (`readNow`) instead of queueing through Kysely's executor.
 */
class SqliteDriverKeepingCause extends SqliteDriver {
  /** Opened (Kysely opens a driver on its first query) and not destroyed. */
  #ready = false;
  /** A query or a transaction holds the one connection. */
  #held = false;

  constructor(private readonly database: KyselySqliteDatabase) {
    super({ database });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.#ready = this.#held = true;
    return connection;
  }

  override async releaseConnection(): Promise<void> {
    this.#held = false;
    await super.releaseConnection();
  }

  override async destroy(): Promise<void> {
    this.#ready = false;
    await super.destroy();
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } catch (error) {
      if (error instanceof Error && /no transaction is active/i.test(error.message)) return;
      throw error;
    }
  }

  /**
   * Runs a read now, on the calling tick, when the connection is free: the rows, as Kysely's own
   * SQLite connection answers them. Undefined when it is not free (a transaction or another query
   * holds it; the read must wait its turn, and must not see an open transaction's writes) or the
   * statement is no read. Running synchronously, the read ends before anyone else can take the
   * connection, which is what taking and giving back Kysely's lock would have ensured, without
   * the promises of a trip through the executor.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    if (!this.#ready || this.#held) return undefined;
    const statement = this.database.prepare(sql);
    return statement.reader ? statement.all(parameters) : undefined;
  }

  /**
   * A value that changes with every change committed to the database, or undefined when the
   * connection is busy (a query or transaction holds it) and it cannot be read now. It pairs the
   * rows this connection has inserted, updated or deleted since it opened (`total_changes()`: a
   * transaction's writes count from the moment they are made, before their commit) with SQLite's
   * `data_version`, which moves when any other connection, in this process or another, commits.
   * An answer read after taking the value is still current while the value is unchanged.
   */
  generation(): string | undefined {
    if (!this.#ready || this.#held) return undefined;
    const row = this.database.prepare(GENERATION_SQL).all([])[0] as { changes: number; version: number };
    return `${row.changes}.${row.version}`;
  }
}

const GENERATION_SQL = 'select total_changes() as changes, data_version as version from pragma_data_version';

class SqliteDialectKeepingCause extends SqliteDialect {
  /** The driver Kysely made from this dialect (one per Kysely instance). */
  driver: SqliteDriverKeepingCause | undefined;

  constructor(private readonly database: KyselySqliteDatabase) {
    super({ database });
  }

  override createDriver(): Driver {
    this.driver = new SqliteDriverKeepingCause(this.database);
    return this.driver;
  }
}

/** The store's generation (see the driver's `generation`), for a dialect made here. */
export function generationOf(dialect: SqliteDialect): (() => string | undefined) | undefined {
  const driver = dialect instanceof SqliteDialectKeepingCause ? dialect.driver : undefined;
  return driver && (() => driver.generation());
}

/** Reads that can run at once on a SQLite store's connection when it is free (see readNow). */
export type ReadNow = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

/** The `readNow` of the driver behind a dialect made here, once Kysely has made that driver. */
export function readNowOf(dialect: SqliteDialect): ReadNow | undefined {
  const driver = dialect instanceof SqliteDialectKeepingCause ? dialect.driver : undefined;
  return driver && ((sql, parameters) => driver.readNow(sql, parameters));
}

/**
 * The embedded store: one connection in WAL mode with foreign keys enforced, on the driver chosen
 * for this Node (sqlite-drivers.ts).
 *
 * A reserve file (`vigil.reserve`, up to 8 MB, at most half of MIN_FREE_DISK) is kept beside the
 * database. When the disk is so full that the database cannot be opened (WAL mode needs room for its
 * `-wal` and `-shm` files), the reserve is given up and the open tried again, so that the service
 * starts, serves reads and deletes, and refuses writes with 507 until room is made. Failing that, it
 * is opened read-only (`readOnly`) rather than not at all.
 */
export function createSqliteDialect(options: SqliteOptions): {
  dialect: SqliteDialect;
  readOnly: boolean;
  driver: SqliteDriverName;
} {
  const synchronous = options.synchronous ?? 'NORMAL';
  const open = (file: string) => openWritable(file, synchronous, options.driver);
  if (options.dataDir === ':memory:') return writable(open(':memory:'));
  const file = privateDatabaseFile(options.dataDir);
  const reserve = reserveOf(options.dataDir, options.minFreeDisk ?? 0);
  let raw: SqliteConnection;
  try {
    raw = open(file);
  } catch (error) {
    if (storeFailureOf(error) === 'other' || !fs.existsSync(reserve.file))
      return openReadOnly(file, error, options.driver);
    fs.rmSync(reserve.file, { force: true });
    try {
      raw = open(file);
    } catch (again) {
      return openReadOnly(file, again, options.driver);
    }
  }
  keepReserve(reserve);
  return writable(raw);
}

function writable(raw: SqliteConnection) {
  return { dialect: dialectOf(raw), readOnly: false, driver: raw.driver };
}

function dialectOf(raw: SqliteConnection): SqliteDialect {
  return new SqliteDialectKeepingCause(withStatementCache(raw));
}

/** The last resort on a full disk: reads only; `error` is thrown when even that cannot be had. */
function openReadOnly(file: string, error: unknown, driver: SqliteDriverName | undefined) {
  if (storeFailureOf(error) === 'other' || !fs.existsSync(file)) throw error;
  const raw = openSqlite(file, driver, { readOnly: true });
  raw.exec('PRAGMA busy_timeout = 5000');
  return { dialect: dialectOf(raw), readOnly: true, driver: raw.driver };
}

function openWritable(
  file: string,
  synchronous: 'NORMAL' | 'FULL',
  driver: SqliteDriverName | undefined,
): SqliteConnection {
  const raw = openSqlite(file, driver);
  try {
    raw.exec('PRAGMA journal_mode = WAL');
    raw.exec(`PRAGMA synchronous = ${synchronous}`);
    raw.exec('PRAGMA foreign_keys = ON');
    raw.exec('PRAGMA busy_timeout = 5000');
    return raw;
  } catch (error) {
    raw.close();
    throw error;
  }
}
