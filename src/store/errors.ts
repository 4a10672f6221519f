/**
 * SQLite's result codes by number (https://sqlite.org/rescode.html): the primary codes and the
 * extended ones a store can meet. node:sqlite reports only the number (`errcode`); better-sqlite3
 * reports the name (`code`).
 */
const PRIMARY: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
  27: 'SQLITE_NOTICE',
  28: 'SQLITE_WARNING',
};

const EXTENDED: Record<number, string> = {
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  262: 'SQLITE_LOCKED_SHAREDCACHE',
  264: 'SQLITE_READONLY_RECOVERY',
  520: 'SQLITE_READONLY_CANTLOCK',
  776: 'SQLITE_READONLY_ROLLBACK',
  1032: 'SQLITE_READONLY_DBMOVED',
  266: 'SQLITE_IOERR_READ',
  522: 'SQLITE_IOERR_SHORT_READ',
  778: 'SQLITE_IOERR_WRITE',
  1034: 'SQLITE_IOERR_FSYNC',
  1290: 'SQLITE_IOERR_DIR_FSYNC',
  1546: 'SQLITE_IOERR_TRUNCATE',
  1802: 'SQLITE_IOERR_FSTAT',
  2058: 'SQLITE_IOERR_UNLOCK',
  2314: 'SQLITE_IOERR_RDLOCK',
  2570: 'SQLITE_IOERR_DELETE',
  3082: 'SQLITE_IOERR_NOMEM',
  3338: 'SQLITE_IOERR_ACCESS',
  3594: 'SQLITE_IOERR_CHECKRESERVEDLOCK',
  3850: 'SQLITE_IOERR_LOCK',
  4106: 'SQLITE_IOERR_CLOSE',
  4618: 'SQLITE_IOERR_SHMOPEN',
  4874: 'SQLITE_IOERR_SHMSIZE',
  5130: 'SQLITE_IOERR_SHMLOCK',
  5386: 'SQLITE_IOERR_SHMMAP',
  5642: 'SQLITE_IOERR_SEEK',
  5898: 'SQLITE_IOERR_DELETE_NOENT',
  6154: 'SQLITE_IOERR_MMAP',
  13: 'SQLITE_FULL',
  270: 'SQLITE_CANTOPEN_NOTEMPDIR',
  526: 'SQLITE_CANTOPEN_ISDIR',
  782: 'SQLITE_CANTOPEN_FULLPATH',
  267: 'SQLITE_CORRUPT_VTAB',
  275: 'SQLITE_CONSTRAINT_CHECK',
  531: 'SQLITE_CONSTRAINT_COMMITHOOK',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1043: 'SQLITE_CONSTRAINT_FUNCTION',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  1811: 'SQLITE_CONSTRAINT_TRIGGER',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
  2323: 'SQLITE_CONSTRAINT_VTAB',
  2579: 'SQLITE_CONSTRAINT_ROWID',
  3091: 'SQLITE_CONSTRAINT_DATATYPE',
};

/**
 * The SQLite result code of an error thrown by either SQLite driver, as SQLite names it
 * (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_FULL`, `SQLITE_BUSY`, …); undefined for anything else,
 * PostgreSQL's errors included. An extended code SQLite has and this table lacks comes back as its
 * primary code.
 */
export function sqliteErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  // better-sqlite3: the name itself.
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
  // node:sqlite: ERR_SQLITE_ERROR with the extended result code as a number.
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    return EXTENDED[errcode] ?? PRIMARY[errcode & 0xff] ?? `SQLITE_UNKNOWN_${errcode}`;
  }
  return undefined;
}

/**
 * What a store failure means to a caller: `unavailable` (the database cannot be reached or is
 * busy; retry later), `full` (it cannot take a write: no disk space, or opened read-only), or
 * `other` (a bug or a constraint, not the store's condition).
 */
export type StoreFailure = 'unavailable' | 'full' | 'other';

/** What SQLite's primary result codes mean to a caller. */
const SQLITE_NAMES: Record<string, StoreFailure> = {
  SQLITE_BUSY: 'unavailable',
  SQLITE_LOCKED: 'unavailable',
  SQLITE_READONLY: 'full',
  SQLITE_IOERR: 'unavailable',
  SQLITE_FULL: 'full',
  SQLITE_CANTOPEN: 'unavailable',
};

/** Socket errors of a connection to PostgreSQL that could not be made or was cut. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Messages of `pg` (and of pg-boss around it) that carry no code but mean the connection is gone. */
const PG_CONNECTION_MESSAGES = [
  /connection terminated/i,
  /not queryable/i,
  /timeout exceeded when trying to connect/i,
  /cannot use a pool after calling end/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

interface DriverError {
  code?: unknown;
  errcode?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/**
 * Classifies an error thrown by a store driver: better-sqlite3 (`code: 'SQLITE_FULL'`,
 * `'SQLITE_IOERR_WRITE'` …), `node:sqlite` (`code: 'ERR_SQLITE_ERROR'` with a numeric `errcode`),
 * `pg` (SQLSTATE codes, socket errors, pool errors) and pg-boss errors that wrap them (`cause`,
 * `errors` of an AggregateError). Anything else is `other`.
 */
export function storeFailureOf(error: unknown, depth = 0): StoreFailure {
  if (typeof error !== 'object' || error === null || depth > 4) return 'other';
  const e = error as DriverError;
  const own = ownFailure(e);
  if (own !== 'other') return own;
  if (e.cause !== undefined) {
    const inner = storeFailureOf(e.cause, depth + 1);
    if (inner !== 'other') return inner;
  }
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const kind = storeFailureOf(inner, depth + 1);
      if (kind !== 'other') return kind;
    }
  }
  return 'other';
}

function ownFailure(e: DriverError): StoreFailure {
  const sqlite = sqliteErrorCode(e);
  if (sqlite !== undefined) return SQLITE_NAMES[/^SQLITE_[A-Z]+/.exec(sqlite)?.[0] ?? sqlite] ?? 'other';
  const code = typeof e.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code)) return 'unavailable';
  // PostgreSQL SQLSTATE: 53100 disk full; 08 connection exceptions; 57P01–57P03 shutdown and
  // start-up; 53300 too many connections.
  if (code === '53100') return 'full';
  if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '53300') return 'unavailable';
  const message = typeof e.message === 'string' ? e.message : '';
  if (code === '' && PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return 'unavailable';
  return 'other';
}
