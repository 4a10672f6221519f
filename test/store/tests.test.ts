import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { testsRepo } from '../../src/store/repositories/tests.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';
import { runRow, seedBucketWithTest } from '../helpers/seed.js';

for (const { fixture, skip } of await dialects()) {
  describe(`tests repository: the detail read [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let bucketKey: string;
    let testId: string;
    let accountId: string;
    let newestFinished: string;

    before(async () => {
      ({ store, cleanup } = await fixture.create());
      bucketKey = newId().replaceAll('-', '').slice(0, 12);
      let now: number;
      ({ testId, now } = await seedBucketWithTest(store, bucketKey));
      const bucket = await store.db
        .selectFrom('buckets')
        .select(['team_id', 'created_by'])
        .where('key', '=', bucketKey)
        .executeTakeFirstOrThrow();
      accountId = bucket.created_by;
      await store.db
        .insertInto('team_members')
        .values({ team_id: bucket.team_id, account_id: accountId, role: 'owner', created_at: now })
        .execute();

      const condition = newId();
      await store.db
        .insertInto('steps')
        .values([
          {
            id: newId(),
            test_id: testId,
            parent_id: null,
            position: 0,
            step_type: 'request',
            body: '{"url":"a"}',
          },
          {
            id: condition,
            test_id: testId,
            parent_id: null,
            position: 1,
            step_type: 'condition',
            body: '{}',
          },
          {
            id: newId(),
            test_id: testId,
            parent_id: condition,
            position: 2,
            step_type: 'pause',
            body: '{"duration":1}',
          },
        ])
        .execute();
      const environments = [newId(), newId()];
      await store.db
        .insertInto('environments')
        .values(
          environments.map((id, i) => ({
            id,
            bucket_key: bucketKey,
            test_id: testId,
            name: `Env ${i}`,
            parent_environment_id: null,
            settings: JSON.stringify({ initial_variables: { n: String(i) } }),
            created_at: now + i,
            updated_at: now + i + 0.25,
          })),
        )
        .execute();
      await store.db
        .insertInto('schedules')
        .values({
          id: newId(),
          test_id: testId,
          environment_id: environments[0]!,
          interval: '1h',
          note: 'hourly',
          created_at: now,
          next_run_at: now + 3600,
        })
        .execute();
      // Finished runs, then newer ones that do not count as the last run: one still working, one canceled.
      const finished = [
        runRow(testId, bucketKey, 'pass', now + 10),
        runRow(testId, bucketKey, 'fail', now + 20),
      ];
      newestFinished = finished[1]!.id;
      await store.db
        .insertInto('test_runs')
        .values([
          ...finished,
          runRow(testId, bucketKey, 'working', now + 30),
          runRow(testId, bucketKey, 'canceled', now + 40),
        ])
        .execute();
    });
    after(async () => cleanup());

    test('the plain reads and the JSON statement answer the same rows', async () => {
      const json = await testsRepo.detailForAccountJson(store.db, bucketKey, testId, accountId);
      const plain = await testsRepo.detailForAccountPlain(store.db, bucketKey, testId, accountId);
      assert.ok(json);
      assert.deepEqual(plain, json);
      assert.deepEqual(
        plain!.steps.map((s) => s.step_type),
        ['request', 'condition', 'pause'],
      );
      assert.deepEqual(
        plain!.environments.map((e) => e.name),
        ['Env 0', 'Env 1'],
      );
      assert.equal(plain!.environments[1]!.updated_at, json!.environments[1]!.updated_at);
      assert.equal(plain!.schedules.length, 1);
      assert.equal(plain!.lastRun?.test_run_id, newestFinished);
      assert.equal(plain!.lastRun?.result, 'fail');
      assert.deepEqual(await testsRepo.detailForAccount(store.db, bucketKey, testId, accountId), json);
    });

    test('nothing for an account outside the team, another bucket or an unknown test', async () => {
      for (const shape of [testsRepo.detailForAccountJson, testsRepo.detailForAccountPlain]) {
        assert.equal(await shape(store.db, bucketKey, testId, newId()), undefined);
        assert.equal(await shape(store.db, 'zzzzzzzzzzzz', testId, accountId), undefined);
        assert.equal(await shape(store.db, bucketKey, newId(), accountId), undefined);
      }
    });
  });
}
