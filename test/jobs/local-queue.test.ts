import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LocalJobQueue } from '../../src/jobs/local-queue.js';
import { Worker } from '../../src/jobs/worker.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

for (const { fixture, skip } of await dialects()) {
  describe(`local job queue [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let queue: LocalJobQueue;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
      queue = new LocalJobQueue(store);
    });
    after(async () => cleanup());

    const clear = () => store.db.deleteFrom('jobs').execute();

    test('a job is claimed once, by one worker, and leaves the queue when completed', async () => {
      await clear();
      const id = await queue.enqueue(store.db, 'run-test', { runId: 'r1' });
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => queue.claim(`w${i}`, ['run-test'], null, 30_000)),
      );
      const won = claims.filter((c) => c !== null);
      assert.equal(won.length, 1);
      assert.equal(won[0]!.id, id);
      assert.deepEqual(won[0]!.payload, { runId: 'r1' });
      assert.equal(won[0]!.attempt, 1);
      const owner = `w${claims.findIndex((c) => c !== null)}`;
      await queue.complete(id, 'someone-else');
      assert.equal(
        (await store.db.selectFrom('jobs').select('id').execute()).length,
        1,
        'only the owner completes',
      );
      await queue.complete(id, owner);
      assert.equal((await store.db.selectFrom('jobs').select('id').execute()).length, 0);
    });

    test('a job enqueued in a rolled-back transaction does not exist', async () => {
      await clear();
      await assert.rejects(
        store.transaction(async (trx) => {
          await queue.enqueue(trx, 'run-test', { runId: 'gone' });
          throw new Error('rollback');
        }),
      );
      assert.equal(await queue.claim('w', ['run-test'], null, 1_000), null);
    });

    test('regions: a worker takes its own region and region-less jobs only', async () => {
      await clear();
      await queue.enqueue(store.db, 'run-test', { runId: 'eu' }, { region: 'eu-west' });
      await queue.enqueue(store.db, 'run-test', { runId: 'any' }, { runAfter: Date.now() / 1000 - 10 });
      const us = await queue.claim('us', ['run-test'], ['us-east'], 30_000);
      assert.deepEqual(us?.payload, { runId: 'any' });
      assert.equal(await queue.claim('us', ['run-test'], ['us-east'], 30_000), null);
      const eu = await queue.claim('eu', ['run-test'], ['eu-west'], 30_000);
      assert.deepEqual(eu?.payload, { runId: 'eu' });
    });

    test('a job not yet due waits; a failed attempt is retried, then dropped', async () => {
      await clear();
      await queue.enqueue(store.db, 'run-test', { runId: 'later' }, { runAfter: Date.now() / 1000 + 60 });
      assert.equal(await queue.claim('w', ['run-test'], null, 1_000), null);
      await clear();
      const id = await queue.enqueue(store.db, 'run-test', { runId: 'flaky' }, { maxAttempts: 2 });
      await queue.claim('w', ['run-test'], null, 1_000);
      assert.equal(await queue.fail(id, 'w', 'boom', 0), 'retrying');
      const second = await queue.claim('w', ['run-test'], null, 1_000);
      assert.equal(second?.attempt, 2);
      assert.equal(await queue.fail(id, 'w', 'boom again', 0), 'dropped');
      assert.equal(await queue.claim('w', ['run-test'], null, 1_000), null);
    });

    test('an expired lease returns the job to the queue; without attempts left it is given up', async () => {
      await clear();
      const id = await queue.enqueue(store.db, 'run-test', { runId: 'dead' }, { maxAttempts: 2 });
      await queue.claim('dead-worker', ['run-test'], null, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(await queue.reclaimExpired(), []);
      assert.equal(await queue.renew(id, 'dead-worker', 1_000), false, 'the dead worker lost its lease');
      const again = await queue.claim('live-worker', ['run-test'], null, 1);
      assert.equal(again?.attempt, 2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const givenUp = await queue.reclaimExpired();
      assert.deepEqual(
        givenUp.map((j) => j.payload),
        [{ runId: 'dead' }],
      );
      assert.equal(await queue.claim('w', ['run-test'], null, 1_000), null);
    });

    test('the worker runs jobs as they arrive, up to its concurrency, and stops cleanly', async () => {
      await clear();
      const seen: string[] = [];
      let running = 0;
      let peak = 0;
      const worker = new Worker({
        queue,
        concurrency: 2,
        regions: null,
        pollMs: 50,
        handlers: {
          'run-test': async ({ runId }) => {
            running++;
            peak = Math.max(peak, running);
            await new Promise((resolve) => setTimeout(resolve, 30));
            seen.push(runId);
            running--;
          },
        },
      });
      worker.start();
      for (let i = 0; i < 6; i++) await queue.enqueue(store.db, 'run-test', { runId: `job${i}` });
      queue.notify();
      const deadline = Date.now() + 5_000;
      while (seen.length < 6 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      await worker.stop();
      assert.deepEqual([...seen].sort(), ['job0', 'job1', 'job2', 'job3', 'job4', 'job5']);
      assert.ok(peak <= 2, `peak concurrency ${peak}`);
      assert.equal((await store.db.selectFrom('jobs').select('id').execute()).length, 0);
    });

    test('a job whose handler keeps failing is given up and reported', async () => {
      await clear();
      const givenUp: string[] = [];
      const worker = new Worker({
        queue,
        concurrency: 1,
        regions: null,
        pollMs: 20,
        handlers: {
          'run-test': async () => {
            throw new Error('always');
          },
        },
        onGiveUp: async (job, reason) => {
          givenUp.push(`${(job.payload as { runId: string }).runId}: ${reason}`);
        },
      });
      await queue.enqueue(store.db, 'run-test', { runId: 'bad' }, { maxAttempts: 2 });
      worker.start();
      const deadline = Date.now() + 5_000;
      while (givenUp.length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      await worker.stop();
      assert.deepEqual(givenUp, ['bad: always']);
    });
  });
}
