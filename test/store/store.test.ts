import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';
import { seedBucketWithTest } from '../helpers/seed.js';

for (const { fixture, skip } of await dialects()) {
  describe(`store [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup());

    const seedBucket = (key: string) => seedBucketWithTest(store, key);

    test('migrating again applies nothing', async () => {
      assert.deepEqual(await store.migrate(), []);
    });

    test('integers and float seconds come back as numbers on every dialect', async () => {
      const { testId, now } = await seedBucket('numbers00001');
      const row = await store.db
        .selectFrom('tests')
        .selectAll()
        .where('id', '=', testId)
        .executeTakeFirstOrThrow();
      assert.equal(row.created_at, now);
      assert.equal(row.updated_at, now + 0.123456);
    });

    test('a failed transaction leaves nothing behind', async () => {
      const { testId } = await seedBucket('rollback0001');
      await assert.rejects(
        store.transaction(async (trx) => {
          await trx.updateTable('tests').set({ name: 'changed' }).where('id', '=', testId).execute();
          await trx
            .insertInto('steps')
            .values({
              id: newId(),
              test_id: testId,
              parent_id: null,
              position: 0,
              step_type: 'pause',
              body: '{}',
            })
            .execute();
          throw new Error('abort');
        }),
        /abort/,
      );
      const row = await store.db
        .selectFrom('tests')
        .select('name')
        .where('id', '=', testId)
        .executeTakeFirstOrThrow();
      assert.equal(row.name, 't');
      assert.equal(
        (await store.db.selectFrom('steps').select('id').where('test_id', '=', testId).execute()).length,
        0,
      );
    });

    test('deleting a bucket cascades to its tests and their steps', async () => {
      const { testId } = await seedBucket('cascade00001');
      await store.db
        .insertInto('steps')
        .values({
          id: newId(),
          test_id: testId,
          parent_id: null,
          position: 0,
          step_type: 'pause',
          body: '{}',
        })
        .execute();
      await store.db.deleteFrom('buckets').where('key', '=', 'cascade00001').execute();
      assert.equal(
        (await store.db.selectFrom('tests').select('id').where('id', '=', testId).execute()).length,
        0,
      );
      assert.equal(
        (await store.db.selectFrom('steps').select('id').where('test_id', '=', testId).execute()).length,
        0,
      );
    });

    test('ping answers true while the store is open', async () => {
      assert.equal(await store.ping(), true);
    });
  });
}
