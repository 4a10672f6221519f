import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { SqliteDialect } from 'kysely';

export interface SqliteOptions {
  /** Directory that holds vigil.db, or ':memory:' for a throw-away store. */
  dataDir: string;
  synchronous?: 'NORMAL' | 'FULL';
}

/** The embedded store: one better-sqlite3 connection in WAL mode with foreign keys enforced. */
export function createSqliteDialect(options: SqliteOptions): {
  dialect: SqliteDialect;
  raw: SqliteDatabase.Database;
} {
  let file = ':memory:';
  if (options.dataDir !== ':memory:') {
    fs.mkdirSync(options.dataDir, { recursive: true });
    file = path.join(options.dataDir, 'vigil.db');
  }
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  return { dialect: new SqliteDialect({ database: raw }), raw };
}
