import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import type { TestRunRow } from '../../src/store/database.js';
import { runsRepo } from '../../src/store/repositories/runs.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';
import { runRow, seedBucketWithTest } from '../helpers/seed.js';

for (const { fixture, skip } of await dialects()) {
  describe(`test runs store [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup());

    async function seedTest(): Promise<{ testId: string; bucketKey: string }> {
      const bucketKey = newId().replaceAll('-', '').slice(0, 12);
      const { testId } = await seedBucketWithTest(store, bucketKey);
      return { testId, bucketKey };
    }

    test('retention keeps step details of the newest passing and failing runs and drops the oldest runs', async () => {
      const { testId, bucketKey } = await seedTest();
      const rows: TestRunRow[] = [];
      // Twelve runs, oldest first: pass, fail, pass, fail, …
      for (let i = 0; i < 12; i++)
        rows.push(runRow(testId, bucketKey, i % 2 === 0 ? 'pass' : 'fail', 1_700_000_000 + i));
      await runsRepo.insert(store.db, rows);
      for (const row of rows) {
        await runsRepo.insertSteps(store.db, [{ run_id: row.id, position: 0, step_id: 's', detail: '{}' }]);
      }
      await runsRepo.applyRetention(store.db, testId, 2, 8);

      const kept = await store.db
        .selectFrom('test_runs')
        .select(['id'])
        .where('test_id', '=', testId)
        .execute();
      const keptIds = new Set(kept.map((r) => r.id));
      assert.deepEqual(
        rows.map((r) => keptIds.has(r.id)),
        [false, false, false, false, true, true, true, true, true, true, true, true],
        'the 8 newest runs are kept',
      );
      const withSteps = await store.db.selectFrom('test_run_steps').select('run_id').execute();
      const detailed = new Set(withSteps.map((r) => r.run_id));
      // Newest two passing (i = 10, 8) and newest two failing (i = 11, 9) keep their details.
      assert.deepEqual(
        rows.map((r) => detailed.has(r.id)),
        [false, false, false, false, false, false, false, false, true, true, true, true],
      );
    });

    test('a queued or working run is never removed by retention, and finish does not overwrite a cancel', async () => {
      const { testId, bucketKey } = await seedTest();
      const old = runRow(testId, bucketKey, 'queued', 1_600_000_000);
      old.finished_at = null;
      const finished = [1, 2, 3].map((i) => runRow(testId, bucketKey, 'pass', 1_700_000_000 + i));
      await runsRepo.insert(store.db, [old, ...finished]);
      await runsRepo.applyRetention(store.db, testId, 1, 1);
      assert.ok(await runsRepo.byId(store.db, old.id), 'the queued run stays');
      assert.equal(await runsRepo.cancel(store.db, old.id, 1_700_000_010, 'canceled by request'), true);
      const { id: _id, ...finish } = runRow(testId, bucketKey, 'pass', 1_700_000_011);
      assert.equal(await runsRepo.finish(store.db, old.id, finish), false);
      assert.equal((await runsRepo.byId(store.db, old.id))?.result, 'canceled');
      assert.equal(await runsRepo.cancel(store.db, old.id, 1_700_000_012, 'again'), false);
    });
  });
}
