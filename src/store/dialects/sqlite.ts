import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { type SqliteDatabase as KyselySqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';

export interface SqliteOptions {
  /** Directory that holds vigil.db, or ':memory:' for a throw-away store. */
  dataDir: string;
  synchronous?: 'NORMAL' | 'FULL';
}

/** Statements kept prepared, most recently used last; the oldest goes when the cache is full. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Hands Kysely the connection with a cache of prepared statements: Kysely prepares every query it
 * runs, and preparing costs more than running most of ours. Kysely runs one query at a time on the
 * one connection and each statement to completion, so sharing a prepared statement is safe.
 */
function withStatementCache(raw: SqliteDatabase.Database): KyselySqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = raw.prepare(sql) as unknown as SqliteStatement;
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** The embedded store: one better-sqlite3 connection in WAL mode with foreign keys enforced. */
export function createSqliteDialect(options: SqliteOptions): SqliteDialect {
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
  return new SqliteDialect({ database: withStatementCache(raw) });
}
