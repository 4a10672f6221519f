import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { schedulesRepo } from '../../src/store/repositories/schedules.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';
import { seedBucketWithTest } from '../helpers/seed.js';

for (const { fixture, skip } of await dialects()) {
  describe(`schedules repository: the scheduler's queries [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let testId: string;
    let environmentId: string;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
      const bucketKey = newId().replaceAll('-', '').slice(0, 12);
      ({ testId } = await seedBucketWithTest(store, bucketKey));
      environmentId = newId();
      await store.db
        .insertInto('environments')
        .values({
          id: environmentId,
          bucket_key: bucketKey,
          test_id: testId,
          name: 'Default',
          parent_environment_id: null,
          settings: '{}',
          created_at: 1,
          updated_at: 1,
        })
        .execute();
    });
    after(async () => cleanup());

    async function schedule(nextRunAt: number | null, interval = '1h'): Promise<string> {
      const id = newId();
      await schedulesRepo.insert(store.db, [
        {
          id,
          test_id: testId,
          environment_id: environmentId,
          interval,
          note: '',
          created_at: 1,
          next_run_at: nextRunAt,
        },
      ]);
      return id;
    }
    const nextRunOf = async (id: string) =>
      (await store.db.selectFrom('schedules').select('next_run_at').where('id', '=', id).executeTakeFirst())
        ?.next_run_at;

    test('unplanned schedules get their first start once; a second plan does not move it', async () => {
      const fresh = await schedule(null, '5m');
      const planned = await schedule(500);
      const unplanned = await schedulesRepo.unplanned(store.db, 1000);
      assert.deepEqual(unplanned, [{ id: fresh, interval: '5m' }]);
      assert.equal(
        unplanned.some((row) => row.id === planned),
        false,
      );
      await schedulesRepo.plan(store.db, fresh, 1000.25);
      await schedulesRepo.plan(store.db, fresh, 2000);
      assert.equal(await nextRunOf(fresh), 1000.25);
      assert.deepEqual(await schedulesRepo.unplanned(store.db, 1000), []);
      await store.db.deleteFrom('schedules').execute();
    });

    test('due ids come the longest due first, up to the limit; takeDue keeps only those still due', async () => {
      const late = await schedule(100);
      const later = await schedule(50);
      const due = await schedule(150);
      const notYet = await schedule(10_000);
      assert.deepEqual(await schedulesRepo.dueIds(store.db, 200, 1000), [later, late, due]);
      assert.deepEqual(await schedulesRepo.dueIds(store.db, 200, 2), [later, late]);
      const taken = await store.transaction((trx) =>
        schedulesRepo.takeDue(trx, [late, notYet], 200, { skipLocked: store.dialect === 'postgres' }),
      );
      assert.deepEqual(
        taken.map((row) => [row.id, row.next_run_at, row.test_id]),
        [[late, 100, testId]],
      );
      assert.deepEqual(await schedulesRepo.takeDue(store.db, [], 200, { skipLocked: false }), []);
      await store.db.deleteFrom('schedules').execute();
    });

    test('setNextRun moves a schedule; intervalOf reads it, undefined once it is gone', async () => {
      const id = await schedule(100, '15m');
      await schedulesRepo.setNextRun(store.db, id, 1900.5);
      assert.equal(await nextRunOf(id), 1900.5);
      assert.equal(await schedulesRepo.intervalOf(store.db, id), '15m');
      await schedulesRepo.delete(store.db, id);
      assert.equal(await schedulesRepo.intervalOf(store.db, id), undefined);
    });

    if (fixture.name === 'postgres') {
      test('takeDue with skipLocked passes over a schedule another transaction holds', async () => {
        const held = await schedule(100);
        const free = await schedule(100);
        let release!: () => void;
        const holding = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const holder = store.transaction(async (trx) => {
          await schedulesRepo.takeDue(trx, [held], 200, { skipLocked: true });
          locked();
          await holding;
        });
        await isLocked;
        const taken = await store.transaction((trx) =>
          schedulesRepo.takeDue(trx, [held, free], 200, { skipLocked: true }),
        );
        release();
        await holder;
        assert.deepEqual(
          taken.map((row) => row.id),
          [free],
        );
        await store.db.deleteFrom('schedules').execute();
      });
    }
  });
}
