import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { preparedQuery } from '../../src/store/prepared.js';
import { Store } from '../../src/store/store.js';

/** One prepared read, as the repositories write theirs. */
const accountByEmail = preparedQuery<{ email: string }, { id: string; name: string }>(['email'], (db, p) =>
  db.selectFrom('accounts').select(['id', 'name']).where('email', '=', p.email),
);

const account = (email: string) => ({
  id: newId(),
  email,
  name: 'Reader',
  password_hash: 'x',
  created_at: 1_700_000_000,
});

/** Lets every pending promise callback and timer of this tick run. */
const ticks = () => new Promise((resolve) => setImmediate(resolve));

/**
 * On SQLite, prepared reads outside a transaction run at once when the one connection is free
 * (src/store/dialects/sqlite.ts, readNow). While a transaction holds the connection they wait their
 * turn as any query does, and never see what the transaction has not committed.
 */
describe('SQLite: prepared reads while a transaction holds the connection', () => {
  let store: Store;
  before(async () => {
    store = Store.open({ dataDir: ':memory:' });
    await store.migrate();
  });
  after(async () => store.close());

  test('with the connection free a read answers the same rows as the executor does', async () => {
    await store.db.insertInto('accounts').values(account('free@example.com')).execute();
    const rows = await accountByEmail(store.db, { email: 'free@example.com' });
    assert.equal(rows.length, 1);
    assert.deepEqual(
      rows,
      await store.db
        .selectFrom('accounts')
        .select(['id', 'name'])
        .where('email', '=', 'free@example.com')
        .execute(),
    );
    assert.deepEqual(await accountByEmail(store.db, { email: 'nobody@example.com' }), []);
  });

  test('a read started during a transaction waits for its commit and sees what it committed', async () => {
    let read: Promise<unknown[]> | undefined;
    let answered = false;
    await store.transaction(async (trx) => {
      await trx.insertInto('accounts').values(account('committed@example.com')).execute();
      read = accountByEmail(store.db, { email: 'committed@example.com' }).then((rows) => {
        answered = true;
        return rows;
      });
      await ticks();
      assert.equal(answered, false, 'the read waits while the transaction holds the connection');
      // Inside the transaction its own prepared reads see its writes.
      assert.equal((await accountByEmail(trx, { email: 'committed@example.com' })).length, 1);
    });
    assert.equal((await read!).length, 1);
  });

  test('a read started during a transaction that rolls back never sees its writes', async () => {
    let read: Promise<unknown[]> | undefined;
    await assert.rejects(
      store.transaction(async (trx) => {
        await trx.insertInto('accounts').values(account('rolled@example.com')).execute();
        read = accountByEmail(store.db, { email: 'rolled@example.com' });
        await ticks();
        throw new Error('undo');
      }),
      /undo/,
    );
    assert.deepEqual(await read!, []);
  });

  test("a transaction's prepared writes run in it: they land with its commit and go with its rollback", async () => {
    const addAccount = preparedQuery<ReturnType<typeof account>, never>(
      ['id', 'email', 'name', 'password_hash', 'created_at'],
      (db, p) => db.insertInto('accounts').values(p),
    );
    await assert.rejects(
      store.transaction(async (trx) => {
        await addAccount(trx, account('undone@example.com'));
        assert.equal((await accountByEmail(trx, { email: 'undone@example.com' })).length, 1);
        throw new Error('undo');
      }),
      /undo/,
    );
    assert.deepEqual(await accountByEmail(store.db, { email: 'undone@example.com' }), []);
    await store.transaction(async (trx) => {
      await addAccount(trx, account('kept@example.com'));
    });
    assert.equal((await accountByEmail(store.db, { email: 'kept@example.com' })).length, 1);
  });

  test('after the store is closed a read fails instead of answering', async () => {
    const closed = Store.open({ dataDir: ':memory:' });
    await closed.migrate();
    await closed.close();
    await assert.rejects(accountByEmail(closed.db, { email: 'free@example.com' }));
  });
});
