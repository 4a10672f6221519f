import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteStatement } from 'kysely';

/**
 * The two SQLite bindings Vigil can run on; both open the same file format.
 * - `node:sqlite`: built into Node (24, and recent 22 releases), nothing to compile;
 * - `better-sqlite3`: the native module, for Node 20 (its version 12 aborts on Node 24).
 */
export const SQLITE_DRIVERS = ['node:sqlite', 'better-sqlite3'] as const;
export type SqliteDriverName = (typeof SQLITE_DRIVERS)[number];

/** What the dialect needs of a connection, whichever binding is under it. */
export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  prepare(sql: string): SqliteStatement;
  /** Runs statements that return nothing (pragmas, DDL). */
  exec(sql: string): void;
  close(): void;
}

/** The parts of node:sqlite used here (its types are not in the @types/node of the oldest Node supported). */
interface NodeStatement {
  setReturnArrays(enabled: boolean): void;
  columns(): { name: string }[];
  all(...parameters: unknown[]): unknown[][];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): Iterable<unknown[]>;
}
interface NodeSqlite {
  DatabaseSync: new (
    file: string,
    options?: { readOnly?: boolean },
  ) => {
    prepare(sql: string): NodeStatement;
    exec(sql: string): void;
    close(): void;
  };
  StatementSync: { prototype: Partial<NodeStatement> };
}

const nodeMajor = Number(process.versions.node.split('.')[0]);

/** better-sqlite3 12 aborts in its statement destructor during garbage collection on Node 24+. */
const betterSqliteUnsupported = nodeMajor >= 24 ? `better-sqlite3 12 aborts on Node ${nodeMajor}` : null;

let nodeSqlite: NodeSqlite | null | undefined;

/**
 * Node's own SQLite module, or null where this Node has none usable without a flag. Node 22
 * still calls it experimental and says so once on load; that one warning is not passed on.
 */
function loadNodeSqlite(): NodeSqlite | null {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/^SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    const module = process.getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined;
    // Statements that name their columns and return arrays: Node 24, and 22 from the backports on.
    const usable = module?.StatementSync.prototype.columns && module.StatementSync.prototype.setReturnArrays;
    nodeSqlite = usable ? module : null;
  } catch {
    nodeSqlite = null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return nodeSqlite;
}

/** Why `driver` cannot run on this Node, or null when it can. */
export function sqliteDriverUnavailable(driver: SqliteDriverName): string | null {
  if (driver === 'node:sqlite') {
    return loadNodeSqlite()
      ? null
      : `Node ${process.version} has no node:sqlite with StatementSync columns() and setReturnArrays() (Node 24 has)`;
  }
  return betterSqliteUnsupported;
}

/** The driver used when none is asked for: node:sqlite wherever this Node has it, better-sqlite3 otherwise. */
export function defaultSqliteDriver(): SqliteDriverName {
  return sqliteDriverUnavailable('node:sqlite') === null ? 'node:sqlite' : 'better-sqlite3';
}

/**
 * Rows as plain objects, like better-sqlite3's: node:sqlite's own rows have no prototype, which
 * `assert.deepStrictEqual`, `hasOwnProperty` and the like do not expect. Reading arrays and naming
 * them here costs no more than node:sqlite building the objects itself.
 */
function nodeStatement(statement: NodeStatement): SqliteStatement {
  statement.setReturnArrays(true);
  const names = statement.columns().map((column) => column.name);
  const toObject = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  };
  return {
    reader: names.length > 0,
    all: (parameters) => statement.all(...parameters).map(toObject),
    run: (parameters) => statement.run(...parameters),
    *iterate(parameters) {
      for (const values of statement.iterate(...parameters)) yield toObject(values);
    },
  };
}

function openNodeSqlite(file: string, readOnly: boolean): SqliteConnection {
  const { DatabaseSync: Database } = loadNodeSqlite()!;
  const db = new Database(file, { readOnly });
  return {
    driver: 'node:sqlite',
    prepare: (sql) => nodeStatement(db.prepare(sql)),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

/** Loaded on first use only, so a Node that runs node:sqlite never loads the native module. */
function openBetterSqlite(file: string, readOnly: boolean): SqliteConnection {
  let Database: typeof BetterSqlite3;
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    // An optional dependency: its native build may have failed at install time.
    throw new Error(
      `better-sqlite3 could not be loaded (${(error as Error).message.split('\n')[0]}); on Node ${process.version} it is the SQLite driver: reinstall with \`npm ci\`, or run Vigil on Node 24`,
    );
  }
  const db = new Database(file, { readonly: readOnly });
  return {
    driver: 'better-sqlite3',
    prepare: (sql) => db.prepare(sql) as unknown as SqliteStatement,
    exec: (sql) => void db.exec(sql),
    close: () => void db.close(),
  };
}

/**
 * Opens `file` (or ':memory:') with `driver`, for reading only with `readOnly`; throws naming the
 * reason when this Node cannot run it.
 */
export function openSqlite(
  file: string,
  driver: SqliteDriverName = defaultSqliteDriver(),
  { readOnly = false }: { readOnly?: boolean } = {},
): SqliteConnection {
  const unavailable = sqliteDriverUnavailable(driver);
  if (unavailable) throw new Error(`The SQLite driver ${driver} cannot run here: ${unavailable}`);
  return driver === 'node:sqlite' ? openNodeSqlite(file, readOnly) : openBetterSqlite(file, readOnly);
}
