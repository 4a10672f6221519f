import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/domain/ids.js';
import { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

const account = (id = newId()) => ({
  id,
  email: `${id}@example.com`,
  name: 'Counted',
  password_hash: 'x',
  created_at: 1_700_000_000,
});

/**
 * A store's generation of some tables moves with every change to their rows, and only then: it is
 * what kept answers are checked against (src/api/shared/answer-cache.ts).
 */
describe('SQLite: generations of tables', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-generation-'));
    store = Store.open({ dataDir: dir });
    await store.migrate();
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a write to a table moves its generation; a write to another leaves it', async () => {
    const teams = store.generation(['teams']);
    const accounts = store.generation(['accounts']);
    assert.equal(typeof teams, 'string');
    await store.db.insertInto('accounts').values(account()).execute();
    assert.equal(store.generation(['teams']), teams);
    assert.notEqual(store.generation(['accounts']), accounts);
    const both = store.generation(['teams', 'accounts']);
    await store.db
      .insertInto('teams')
      .values({ id: newId(), name: 'T', created_at: 1_700_000_000 })
      .execute();
    assert.notEqual(store.generation(['teams']), teams);
    assert.notEqual(store.generation(['teams', 'accounts']), both);
  });

  test('a write that returns rows moves it; reads, with common table expressions or not, do not', async () => {
    const accounts = store.generation(['accounts']);
    await store.db.selectFrom('accounts').select('id').execute();
    await store.db
      .with('named', (db) => db.selectFrom('accounts').select('id'))
      .selectFrom('named')
      .select('id')
      .execute();
    assert.equal(store.generation(['accounts']), accounts);
    const added = await store.db
      .insertInto('accounts')
      .values(account())
      .returning('id')
      .executeTakeFirstOrThrow();
    const afterInsert = store.generation(['accounts']);
    assert.notEqual(afterInsert, accounts);
    await store.db
      .updateTable('accounts')
      .set({ name: 'Renamed' })
      .where('id', '=', added.id)
      .returningAll()
      .execute();
    assert.notEqual(store.generation(['accounts']), afterInsert);
  });

  test('a delete moves the generation of the tables its foreign keys cascade to', async () => {
    const teamId = newId();
    const accountId = newId();
    await store.db.insertInto('accounts').values(account(accountId)).execute();
    await store.db.insertInto('teams').values({ id: teamId, name: 'T', created_at: 1_700_000_000 }).execute();
    await store.db
      .insertInto('team_members')
      .values({
        team_id: teamId,
        account_id: accountId,
        role: 'member',
        created_at: 1_700_000_000,
        role_id: null,
      })
      .execute();
    const members = store.generation(['team_members']);
    await store.db.deleteFrom('accounts').where('id', '=', accountId).execute();
    const left = await store.db
      .selectFrom('team_members')
      .select('account_id')
      .where('team_id', '=', teamId)
      .execute();
    assert.deepEqual(left, [], 'the membership went with the account');
    assert.notEqual(store.generation(['team_members']), members);
  });

  test('writes inside a transaction count, and a rolled-back one does not bring the old value back', async () => {
    const before = store.generation(['accounts']);
    await assert.rejects(
      store.transaction(async (trx) => {
        await trx.insertInto('accounts').values(account()).execute();
        throw new Error('undo');
      }),
    );
    const after = store.generation(['accounts']);
    assert.notEqual(after, before);
    assert.equal(store.generation(['accounts']), after);
  });

  test('a change to the schema moves every generation', async () => {
    const teams = store.generation(['teams']);
    await sql`create table scratch_generation (id integer primary key)`.execute(store.db);
    assert.notEqual(store.generation(['teams']), teams);
    await sql`drop table scratch_generation`.execute(store.db);
  });

  test('a commit by another connection moves every generation', async () => {
    const teams = store.generation(['teams']);
    const other = Store.open({ dataDir: dir });
    try {
      await other.db.insertInto('accounts').values(account()).execute();
    } finally {
      await other.close();
    }
    assert.notEqual(store.generation(['teams']), teams);
  });

  test('while a transaction holds the connection there is no generation', async () => {
    await store.transaction(async () => {
      assert.equal(store.generation(['teams']), undefined);
    });
    assert.equal(typeof store.generation(['teams']), 'string');
  });
});

describe('PostgreSQL: no generation', async () => {
  const postgres = (await dialects()).find(({ fixture }) => fixture.name === 'postgres');
  test('a store on PostgreSQL has none to give', { skip: postgres?.skip }, async () => {
    const db = await postgres!.fixture.create();
    try {
      assert.equal(db.store.generation(['tests']), undefined);
    } finally {
      await db.cleanup();
    }
  });
});
