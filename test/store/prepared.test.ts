import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { sqliteText, preparedQuery, type Slot } from '../../src/store/prepared.js';
import { Store } from '../../src/store/store.js';

type P = { email: string };

describe('prepared queries: integer constants written into SQLite text', () => {
  test('integer constants replace their placeholders; other values stay bound, a bound limit or offset inside an expression', () => {
    const slots: Slot<P>[] = [{ param: 'email' }, { value: 'pass' }, { value: 1 }, { value: 2.5 }];
    const out = sqliteText('select "?" from t where a = ? and b = ? limit ? offset ?', slots);
    assert.equal(out.sql, 'select "?" from t where a = ? and b = ? limit 1 offset (? + 0)');
    assert.deepEqual(out.slots, [{ param: 'email' }, { value: 'pass' }, { value: 2.5 }]);
  });

  test("quoted text holding '?' (with doubled quotes) is skipped", () => {
    const out = sqliteText<P>(`select 'it''s ?' as a, ? as b limit ?`, [{ value: 'x' }, { value: 3 }]);
    assert.equal(out.sql, `select 'it''s ?' as a, ? as b limit 3`);
    assert.deepEqual(out.slots, [{ value: 'x' }]);
  });

  test('a placeholder count that does not match the values leaves the query as it was', () => {
    const slots: Slot<P>[] = [{ value: 1 }, { value: 2 }];
    assert.deepEqual(sqliteText('select ? limit 5', slots), { sql: 'select ? limit 5', slots });
  });

  describe('on a store', () => {
    let store: Store;
    before(async () => {
      store = Store.open({ dataDir: ':memory:' });
      await store.migrate();
      for (const name of ['Ann', 'Bob', 'Cid'])
        await store.db
          .insertInto('accounts')
          .values({
            id: newId(),
            email: `${name.toLowerCase()}@example.com`,
            name,
            password_hash: 'x',
            created_at: 1_700_000_000,
          })
          .execute();
    });
    after(async () => store.close());

    test('a read with a constant limit answers as the same query built each time', async () => {
      const firstTwo = preparedQuery<{ created: number }, { name: string }>(['created'], (db, p) =>
        db.selectFrom('accounts').select('name').where('created_at', '=', p.created).orderBy('name').limit(2),
      );
      const rows = await firstTwo(store.db, { created: 1_700_000_000 });
      assert.deepEqual(rows, [{ name: 'Ann' }, { name: 'Bob' }]);
      assert.deepEqual(
        rows,
        await store.db
          .selectFrom('accounts')
          .select('name')
          .where('created_at', '=', 1_700_000_000)
          .orderBy('name')
          .limit(2)
          .execute(),
      );
    });

    test('a read whose limit and offset are parameters pages as the same query built each time', async () => {
      const page = preparedQuery<{ count: number; offset: number }, { name: string }>(
        ['count', 'offset'],
        (db, p) => db.selectFrom('accounts').select('name').orderBy('name').limit(p.count).offset(p.offset),
      );
      assert.deepEqual(await page(store.db, { count: 2, offset: 1 }), [{ name: 'Bob' }, { name: 'Cid' }]);
      assert.deepEqual(await page(store.db, { count: 1, offset: 0 }), [{ name: 'Ann' }]);
      assert.deepEqual(
        await page(store.db, { count: 5, offset: 2 }),
        await store.db.selectFrom('accounts').select('name').orderBy('name').limit(5).offset(2).execute(),
      );
    });
  });
});
