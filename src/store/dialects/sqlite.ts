import fs from 'node:fs';
import { WalCheckpointer } from './checkpointer.js';
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
function withStatementCache(raw: SqliteConnection, writes: WriteCounts): KyselySqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const prepare = (sql: string): SqliteStatement => {
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
  };
  return {
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      const statement = prepare(sql);
      // Kysely runs what it prepares at once, on the same tick: counted here, a write is counted
      // before any other code can read the store. Writes that return rows (`RETURNING`) count too.
      writes.ran(sql);
      return statement;
    },
  };
}

/**
 * Statements that change no rows: reads, and transaction control (a rollback undoes rows already
 * counted). A statement with common table expressions is a read unless it names a write.
 */
const NOT_A_WRITE = /^\s*(select|values|explain|begin|commit|end|rollback|savepoint|release)\b/i;
const WITH = /^\s*with\b/i;
const WRITE_WORD = /\b(insert|update|delete|replace)\b/i;
/** The table an INSERT, UPDATE or DELETE writes, as the query builder spells them. */
const WRITTEN_TABLE =
  /^\s*(?:(?:insert|replace)(?:\s+or\s+\w+)?\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i;
/** The table a statement writes, '' when it writes none, null when that is not understood. */
function writtenTable(sql: string): string | null {
  if (NOT_A_WRITE.test(sql) || (WITH.test(sql) && !WRITE_WORD.test(sql))) return '';
  return WRITTEN_TABLE.exec(sql)?.[1] ?? null;
}

/** Foreign-key actions that change the rows of the referencing table. */
const CHANGING_ACTIONS = new Set(['CASCADE', 'SET NULL', 'SET DEFAULT']);

/**
 * The writes of this connection, counted per table, for store generations: a write to a table
 * counts for it and for every table whose rows a foreign-key action changes with it; a statement
 * whose table is not understood (schema changes, anything else) counts for every table.
 */
class WriteCounts {
  /** Writes that count for every table. */
  #everywhere = 0;
  #byTable = new Map<string, number>();
  /** Each table with the tables its foreign-key actions reach (read from the schema when needed). */
  #reach: Map<string, readonly string[]> | undefined;

  constructor(private readonly raw: SqliteConnection) {}

  /** Counts a statement about to run (any statement: its text says whether and what it writes). */
  ran(sql: string): void {
    const table = writtenTable(sql);
    if (table === '') return;
    if (table === null) {
      this.#everywhere++;
      this.#reach = undefined; // the schema may have changed
      return;
    }
    for (const reached of this.#reachOf(table))
      this.#byTable.set(reached, (this.#byTable.get(reached) ?? 0) + 1);
  }

  /** A number that grows with every write counted for any of the tables. */
  of(tables: readonly string[]): number {
    let sum = this.#everywhere;
    for (const table of tables) sum += this.#byTable.get(table) ?? 0;
    return sum;
  }

  #reachOf(table: string): readonly string[] {
    this.#reach ??= this.#readReach();
    return this.#reach.get(table) ?? [table];
  }

  /** From the schema: for each table, itself and the tables its foreign-key actions change, transitively. */
  #readReach(): Map<string, readonly string[]> {
    const changes = new Map<string, string[]>();
    const tables = this.raw
      .prepare("select name from sqlite_schema where type = 'table' and name not like 'sqlite_%'")
      .all([]) as { name: string }[];
    for (const { name } of tables) {
      const keys = this.raw.prepare('select * from pragma_foreign_key_list(?)').all([name]) as {
        table: string;
        on_update: string;
        on_delete: string;
      }[];
      for (const key of keys) {
        if (!CHANGING_ACTIONS.has(key.on_update) && !CHANGING_ACTIONS.has(key.on_delete)) continue;
        const list = changes.get(key.table) ?? [];
        if (!list.includes(name)) list.push(name);
        changes.set(key.table, list);
      }
    }
    const reach = new Map<string, readonly string[]>();
    for (const { name } of tables) {
      const seen = new Set([name]);
      for (const table of seen) for (const next of changes.get(table) ?? []) seen.add(next);
      reach.set(name, [...seen]);
    }
    return reach;
  }
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

  constructor(
    private readonly database: KyselySqliteDatabase,
    private readonly writes: WriteCounts,
    readonly checkpointer: WalCheckpointer | undefined,
  ) {
    super({ database });
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    this.checkpointer?.committed();
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
    // The checkpoint thread closes its connection first, so that the writer's is the last one and
    // SQLite copies the log back and removes it as it closes.
    await this.checkpointer?.close();
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
   * Runs a statement now on the connection a transaction holds: only for that transaction's own
   * queries (SQLite has one connection, and while a transaction is open it holds it, so code with
   * the transaction in hand runs inside it). Answers the rows (none for a write), or undefined when
   * no transaction holds the connection. What Kysely's executor would do, without an await.
   */
  runHeld(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    if (!this.#ready || !this.#held) return undefined;
    const statement = this.database.prepare(sql);
    if (statement.reader) return statement.all(parameters);
    statement.run(parameters);
    return [];
  }

  /**
   * A value that changes whenever rows of any of `tables` change, or undefined when the connection
   * is busy (a query or transaction holds it) and it cannot be read now. It pairs this connection's
   * writes to those tables (counted as each statement runs, before its commit; see WriteCounts) with
   * SQLite's `data_version`, which moves when any other connection, in this process or another,
   * commits. An answer read from those tables after taking the value is still current while the
   * value is unchanged.
   */
  generation(tables: readonly string[]): string | undefined {
    if (!this.#ready || this.#held) return undefined;
    const row = this.database.prepare(GENERATION_SQL).all([])[0] as { version: number };
    return `${row.version}.${this.writes.of(tables)}`;
  }
}

const GENERATION_SQL = 'select data_version as version from pragma_data_version';

class SqliteDialectKeepingCause extends SqliteDialect {
  /** The driver Kysely made from this dialect (one per Kysely instance). */
  driver: SqliteDriverKeepingCause | undefined;

  constructor(
    private readonly database: KyselySqliteDatabase,
    private readonly writes: WriteCounts,
    private readonly checkpointer: WalCheckpointer | undefined,
  ) {
    super({ database });
  }

  override createDriver(): Driver {
    this.driver = new SqliteDriverKeepingCause(this.database, this.writes, this.checkpointer);
    return this.driver;
  }
}

/** The driver Kysely made from a dialect made here (undefined for any other dialect). */
const driverOf = (dialect: SqliteDialect): SqliteDriverKeepingCause | undefined =>
  dialect instanceof SqliteDialectKeepingCause ? dialect.driver : undefined;

/** The checkpointer of a dialect made here on a database file opened for writing. */
export function checkpointerOf(dialect: SqliteDialect): WalCheckpointer | undefined {
  return dialect instanceof SqliteDialectKeepingCause ? dialect.driver?.checkpointer : undefined;
}

/** The store's generation (see the driver's `generation`), for a dialect made here. */
export function generationOf(
  dialect: SqliteDialect,
): ((tables: readonly string[]) => string | undefined) | undefined {
  const driver = driverOf(dialect);
  return driver && ((tables) => driver.generation(tables));
}

/** Reads that can run at once on a SQLite store's connection when it is free (see readNow). */
export type ReadNow = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

/** The `readNow` and `runHeld` of the driver behind a dialect made here, once Kysely has made it. */
export function runNowOf(dialect: SqliteDialect): { readNow: ReadNow; runHeld: ReadNow } | undefined {
  const driver = driverOf(dialect);
  return (
    driver && {
      readNow: (sql, parameters) => driver.readNow(sql, parameters),
      runHeld: (sql, parameters) => driver.runHeld(sql, parameters),
    }
  );
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
  if (options.dataDir === ':memory:') return writable(open(':memory:'), undefined);
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
  return writable(raw, file);
}

/** A connection open for writing; on a file, with a checkpointer (see WalCheckpointer). */
function writable(raw: SqliteConnection, file: string | undefined) {
  const checkpointer = file === undefined ? undefined : new WalCheckpointer(raw, file);
  return { dialect: dialectOf(raw, checkpointer), readOnly: false, driver: raw.driver };
}

function dialectOf(raw: SqliteConnection, checkpointer?: WalCheckpointer): SqliteDialect {
  const writes = new WriteCounts(raw);
  return new SqliteDialectKeepingCause(withStatementCache(raw, writes), writes, checkpointer);
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
