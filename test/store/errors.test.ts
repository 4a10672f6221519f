import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openSqlite } from '../../src/store/dialects/sqlite-drivers.js';
import { sql } from 'kysely';
import pg from 'pg';
import { sqliteErrorCode, storeFailureOf } from '../../src/store/errors.js';
import { Store } from '../../src/store/store.js';
import { freePort } from '../helpers/cli.js';

/** The error a call throws (fails the test when it throws none). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

test('the running SQLite driver: a read-only store cannot take a write (full); a constraint is other', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-errors-'));
  try {
    const file = path.join(dir, 'x.db');
    const writable = openSqlite(file);
    writable.exec('create table t (x integer primary key)');
    writable.exec('insert into t values (1)');
    const readOnly = openSqlite(file, undefined, { readOnly: true });
    const readOnlyError = await thrown(() => readOnly.exec('insert into t values (2)'));
    assert.equal(sqliteErrorCode(readOnlyError), 'SQLITE_READONLY');
    assert.equal(storeFailureOf(readOnlyError), 'full');
    assert.equal(storeFailureOf(await thrown(() => writable.exec('insert into t values (1)'))), 'other');
    readOnly.close();
    writable.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('node:sqlite error shapes: the primary code is the low byte of errcode', () => {
  const nodeSqlite = (errcode: number, errstr: string) =>
    Object.assign(new Error(errstr), { code: 'ERR_SQLITE_ERROR', errcode, errstr });
  assert.equal(storeFailureOf(nodeSqlite(13, 'database or disk is full')), 'full');
  assert.equal(storeFailureOf(nodeSqlite(8, 'attempt to write a readonly database')), 'full');
  assert.equal(storeFailureOf(nodeSqlite(5, 'database is locked')), 'unavailable');
  assert.equal(storeFailureOf(nodeSqlite(10 | (3 << 8), 'disk I/O error')), 'unavailable');
  assert.equal(storeFailureOf(nodeSqlite(19, 'UNIQUE constraint failed')), 'other');
  // better-sqlite3's extended names
  assert.equal(storeFailureOf(Object.assign(new Error('x'), { code: 'SQLITE_IOERR_WRITE' })), 'unavailable');
  assert.equal(storeFailureOf(Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })), 'other');
});

test('pg: a refused connection, SQLSTATE classes and wrapped errors', async () => {
  const port = await freePort();
  const client = new pg.Client({ connectionString: `postgres://root@127.0.0.1:${port}/x` });
  const refused = await thrown(() => client.connect());
  assert.equal(storeFailureOf(refused), 'unavailable');
  const sqlState = (code: string) => Object.assign(new Error(code), { code });
  assert.equal(storeFailureOf(sqlState('57P01')), 'unavailable');
  assert.equal(storeFailureOf(sqlState('57P03')), 'unavailable');
  assert.equal(storeFailureOf(sqlState('08006')), 'unavailable');
  assert.equal(storeFailureOf(sqlState('53100')), 'full');
  assert.equal(storeFailureOf(sqlState('23505')), 'other');
  assert.equal(storeFailureOf(new Error('Connection terminated unexpectedly')), 'unavailable');
  // pg-boss and pools wrap the driver's error
  assert.equal(storeFailureOf(new Error('queue fetch failed', { cause: refused })), 'unavailable');
  assert.equal(storeFailureOf(new AggregateError([sqlState('53100')], 'several')), 'full');
  assert.equal(storeFailureOf(new Error('a bug')), 'other');
  assert.equal(storeFailureOf('not an error'), 'other');
});

test('SQLite: when SQLite has already rolled a transaction back, the original error is what surfaces', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-rollback-'));
  const store = Store.open({ dataDir: dir });
  try {
    await store.migrate();
    const original = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const error = await thrown(() =>
      store.transaction(async (trx) => {
        // As SQLite does by itself on SQLITE_FULL: the transaction is gone before the driver's ROLLBACK.
        await sql`rollback`.execute(trx);
        throw original;
      }),
    );
    assert.equal(error, original);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
