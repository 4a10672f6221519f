import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { checkpointerOf, createSqliteDialect } from '../../src/store/dialects/sqlite.js';

/** Polls `check` every 20 ms until it is true; false after `ms`. */
async function until(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await delay(20);
  }
  return check();
}

describe('SQLite: checkpoints off the writing thread', () => {
  test('heavy writes start the thread, which copies the log into the file; closing leaves no log', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-checkpoint-'));
    const { dialect } = createSqliteDialect({ dataDir });
    const db = new Kysely<Record<string, { id: number; data: Uint8Array }>>({ dialect });
    const file = path.join(dataDir, 'vigil.db');
    try {
      await sql`create table filler (id integer primary key, data blob)`.execute(db);
      const checkpointer = checkpointerOf(dialect)!;
      assert.ok(checkpointer, 'a store on a file has a checkpointer');
      const writerPages = async () =>
        (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0]!
          .wal_autocheckpoint;
      assert.equal(checkpointer.running, false);
      assert.equal(await writerPages(), 1000);

      // Light writes leave it to the writer, as SQLite does by default.
      await db
        .transaction()
        .execute((trx) => sql`insert into filler (data) values (randomblob(1000))`.execute(trx));
      assert.equal(checkpointer.running, false);

      // A log past 1,000 pages: the thread starts, and the writer steps back.
      const started = await until(10_000, async () => {
        await db
          .transaction()
          .execute((trx) =>
            sql`insert into filler (data) select randomblob(100000) from (select 1 union all select 2)`.execute(
              trx,
            ),
          );
        return checkpointer.running;
      });
      assert.ok(started, 'the checkpoint thread did not start');
      assert.equal(await writerPages(), 16_000);

      // What is committed from now on reaches the database file, though the writer would copy
      // nothing back before 16,000 pages: the thread copies it.
      const before = fs.statSync(file).size;
      for (let i = 0; i < 25; i++) {
        await db
          .transaction()
          .execute((trx) => sql`insert into filler (data) values (randomblob(200000))`.execute(trx));
      }
      assert.ok(
        await until(5_000, () => fs.statSync(file).size >= before + 4_000_000),
        `the database file grew from ${before} to ${fs.statSync(file).size} bytes only`,
      );

      // Stopped, the writer takes its own checkpoints again.
      await checkpointer.stop();
      assert.equal(checkpointer.running, false);
      assert.equal(await writerPages(), 1000);
      const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(db);
      assert.ok(rows.rows[0]!.n > 40);
    } finally {
      await db.destroy();
    }
    // The writer's connection closed last: SQLite copied the rest back and removed the log.
    assert.equal(fs.existsSync(`${file}-wal`), false);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('closing while the thread runs stops it first; the store reopens with every row', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-checkpoint-'));
    const open = () => {
      const { dialect } = createSqliteDialect({ dataDir });
      return { dialect, db: new Kysely<Record<string, { id: number }>>({ dialect }) };
    };
    const first = open();
    await sql`create table filler (id integer primary key, data blob)`.execute(first.db);
    let written = 0;
    await until(10_000, async () => {
      await first.db
        .transaction()
        .execute((trx) => sql`insert into filler (data) values (randomblob(200000))`.execute(trx));
      written++;
      return checkpointerOf(first.dialect)!.running;
    });
    assert.ok(checkpointerOf(first.dialect)!.running);
    await first.db.destroy();
    assert.equal(checkpointerOf(first.dialect)!.running, false);
    assert.equal(fs.existsSync(path.join(dataDir, 'vigil.db-wal')), false);
    const again = open();
    try {
      const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(again.db);
      assert.equal(rows.rows[0]!.n, written);
    } finally {
      await again.db.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a store in memory has none', () => {
    const { dialect } = createSqliteDialect({ dataDir: ':memory:' });
    assert.equal(checkpointerOf(dialect), undefined);
  });
});
