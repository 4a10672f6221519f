import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import type { JobRow } from '../../src/store/database.js';
import { jobsRepo } from '../../src/store/repositories/jobs.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

function job(fields: Partial<JobRow> = {}): JobRow {
  return {
    id: newId(),
    name: 'run-test',
    payload: '{}',
    region: null,
    state: 'ready',
    run_after: 100,
    attempts: 0,
    max_attempts: 3,
    retry_delay: 0,
    retry_backoff: 0,
    locked_by: null,
    locked_until: null,
    last_error: null,
    created_at: 1,
    ...fields,
  };
}

for (const { fixture, skip } of await dialects()) {
  describe(`jobs repository [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup());
    beforeEach(async () => {
      await store.db.deleteFrom('jobs').execute();
    });

    const claim = (region: Parameters<typeof jobsRepo.claimNext>[1]['region'], now = 200) =>
      jobsRepo.claimNext(store.db, {
        workerId: 'w1',
        names: ['run-test'],
        region,
        now,
        lockedUntil: now + 30,
        skipLocked: store.dialect === 'postgres',
      });

    test('claimNext leases the job due longest and counts an attempt; not-yet-due and other names wait', async () => {
      const older = job({ run_after: 50 });
      const newer = job({ run_after: 150 });
      await jobsRepo.insert(store.db, newer);
      await jobsRepo.insert(store.db, older);
      await jobsRepo.insert(store.db, job({ run_after: 500 }));
      await jobsRepo.insert(store.db, job({ name: 'notify', run_after: 0 }));
      const first = await claim({ exceptPrefix: 'agent-' });
      assert.equal(first?.id, older.id);
      assert.equal(first?.state, 'active');
      assert.equal(first?.locked_by, 'w1');
      assert.equal(first?.locked_until, 230);
      assert.equal(first?.attempts, 1);
      assert.equal((await claim({ exceptPrefix: 'agent-' }))?.id, newer.id);
      assert.equal(await claim({ exceptPrefix: 'agent-' }), undefined);
    });

    test('region filters: listed regions and region-less jobs, region-less only, all but a prefix', async () => {
      const plain = job({ run_after: 1 });
      const eu = job({ region: 'eu', run_after: 2 });
      const agent = job({ region: 'agent-x', run_after: 3 });
      for (const row of [plain, eu, agent]) await jobsRepo.insert(store.db, row);
      assert.equal((await claim({ regions: ['us'] }))?.id, plain.id);
      assert.equal(await claim({ regions: [] }), undefined);
      assert.equal(await claim({ regions: ['us'] }), undefined);
      assert.equal((await claim({ exceptPrefix: 'agent-' }))?.id, eu.id);
      assert.equal(await claim({ exceptPrefix: 'agent-' }), undefined);
      assert.equal((await claim({ regions: ['agent-x'] }))?.id, agent.id);
    });

    test('a lease is renewed, read and deleted only by its holder; release puts the job back', async () => {
      const row = job();
      await jobsRepo.insert(store.db, row);
      await claim({ regions: [] });
      assert.equal(await jobsRepo.renew(store.db, row.id, 'w2', 400), false);
      assert.equal(await jobsRepo.renew(store.db, row.id, 'w1', 400), true);
      assert.equal(await jobsRepo.heldBy(store.db, row.id, 'w2'), undefined);
      assert.equal((await jobsRepo.heldBy(store.db, row.id, 'w1'))?.locked_until, 400);
      await jobsRepo.deleteHeld(store.db, row.id, 'w2');
      assert.ok(await jobsRepo.heldBy(store.db, row.id, 'w1'), 'another worker cannot delete it');

      await jobsRepo.release(store.db, row.id, 'x'.repeat(3000), 900);
      const released = await store.db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      assert.equal(released.state, 'ready');
      assert.equal(released.locked_by, null);
      assert.equal(released.locked_until, null);
      assert.equal(released.run_after, 900);
      assert.equal(released.last_error?.length, 2000);
      assert.equal(await jobsRepo.renew(store.db, row.id, 'w1', 1000), false, 'a ready job has no lease');

      await claim({ regions: [] }, 1000);
      await jobsRepo.deleteHeld(store.db, row.id, 'w1');
      assert.equal(await store.db.selectFrom('jobs').select('id').executeTakeFirst(), undefined);
    });

    test('expiredLeases lists active jobs whose lease ran out, up to the limit; delete removes one', async () => {
      const expired = job({ state: 'active', locked_by: 'w1', locked_until: 100 });
      const alsoExpired = job({ state: 'active', locked_by: 'w1', locked_until: 110 });
      const leased = job({ state: 'active', locked_by: 'w1', locked_until: 500 });
      const ready = job();
      for (const row of [expired, alsoExpired, leased, ready]) await jobsRepo.insert(store.db, row);
      const found = await store.transaction((trx) =>
        jobsRepo.expiredLeases(trx, 200, 100, { skipLocked: store.dialect === 'postgres' }),
      );
      assert.deepEqual(found.map((row) => row.id).sort(), [expired.id, alsoExpired.id].sort());
      assert.equal((await jobsRepo.expiredLeases(store.db, 200, 1, { skipLocked: false })).length, 1);
      await jobsRepo.delete(store.db, expired.id);
      assert.deepEqual(
        (await jobsRepo.expiredLeases(store.db, 200, 100, { skipLocked: false })).map((row) => row.id),
        [alsoExpired.id],
      );
    });
  });
}
