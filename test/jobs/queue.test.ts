import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JobHandlers } from '../../src/jobs/worker.js';
import { LocalJobQueue } from '../../src/jobs/local-queue.js';
import { PgBossJobQueue } from '../../src/jobs/pg-boss-queue.js';
import type { JobQueue } from '../../src/jobs/queue.js';
import { Worker } from '../../src/jobs/worker.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Handlers for every job name; the tests fill in the ones they use. */
function handlers(partial: Partial<JobHandlers>): JobHandlers {
  const unused = async () => {
    throw new Error('not used by this test');
  };
  return {
    'run-test': unused,
    'notify-run': unused,
    'deliver-notification': unused,
    'apply-retention': unused,
    ...partial,
  } as JobHandlers;
}

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
}

interface Adapter {
  name: string;
  make(store: Store, databaseUrl: string | undefined): Promise<JobQueue & { close?(): Promise<void> }>;
}

const local: Adapter = { name: 'local', make: async (store) => new LocalJobQueue(store) };
const pgBoss: Adapter = {
  name: 'pg-boss',
  async make(_store, databaseUrl) {
    const queue = new PgBossJobQueue({ connectionString: databaseUrl!, expireInSeconds: 60 });
    await queue.start();
    return queue;
  },
};

for (const { fixture, skip } of await dialects()) {
  const adapters = fixture.name === 'postgres' ? [local, pgBoss] : [local];
  for (const adapter of adapters) {
    describe(`job queue: ${adapter.name} [${fixture.name}]`, { skip }, () => {
      let store: Store;
      let cleanup: () => Promise<void>;
      let databaseUrl: string | undefined;
      let queue: JobQueue & { close?(): Promise<void> };
      // Each test uses its own region so that jobs of earlier tests never interfere.
      let n = 0;
      const region = () => `r${++n}-${adapter.name}`;
      before(async () => {
        const created = await fixture.create();
        store = created.store;
        cleanup = created.cleanup;
        databaseUrl = created.databaseUrl;
        queue = await adapter.make(store, databaseUrl);
      });
      after(async () => {
        await queue.close?.();
        await cleanup();
      });

      test('a job is claimed once, by one worker, and leaves the queue when completed', async () => {
        const r = region();
        const id = await queue.enqueue(store.db, 'run-test', { runId: 'r1' }, { region: r });
        const claims = await Promise.all(
          Array.from({ length: 8 }, (_, i) => queue.claim(`w${i}`, ['run-test'], [r], 30_000)),
        );
        const won = claims.filter((c) => c !== null);
        assert.equal(won.length, 1);
        assert.equal(won[0]!.id, id);
        assert.deepEqual(won[0]!.payload, { runId: 'r1' });
        assert.equal(won[0]!.attempt, 1);
        assert.equal(won[0]!.region, r);
        await queue.complete(id, `w${claims.findIndex((c) => c !== null)}`);
        assert.equal(await queue.claim('w', ['run-test'], [r], 30_000), null);
      });

      test('a job enqueued in a rolled-back transaction does not exist', async () => {
        const r = region();
        await assert.rejects(
          store.transaction(async (trx) => {
            await queue.enqueue(trx, 'run-test', { runId: 'gone' }, { region: r });
            throw new Error('rollback');
          }),
        );
        const kept = await store.transaction((trx) =>
          queue.enqueue(trx, 'run-test', { runId: 'kept' }, { region: r }),
        );
        const job = await queue.claim('w', ['run-test'], [r], 1_000);
        assert.equal(job?.id, kept);
        assert.deepEqual(job?.payload, { runId: 'kept' });
        await queue.complete(job!.id, 'w');
      });

      test('regions: a worker takes its own region and region-less jobs; "every region" skips agents', async () => {
        const [eu, us] = [region(), region()];
        const agent = `agent-${region()}`;
        await queue.enqueue(store.db, 'run-test', { runId: 'eu' }, { region: eu });
        await queue.enqueue(store.db, 'run-test', { runId: 'agent' }, { region: agent });
        await queue.enqueue(store.db, 'apply-retention', {});
        const usJob = await queue.claim('us', ['apply-retention'], [us], 30_000);
        assert.equal(usJob?.name, 'apply-retention');
        await queue.complete(usJob!.id, 'us');
        assert.equal(await queue.claim('us', ['run-test'], [us], 30_000), null);
        const euJob = await queue.claim('eu', ['run-test'], [eu], 30_000);
        assert.deepEqual(euJob?.payload, { runId: 'eu' });
        await queue.complete(euJob!.id, 'eu');
        // A worker of every region does not take the agent's private job; the agent's claim does.
        let everyRegion = await queue.claim('all', ['run-test'], null, 30_000);
        while (everyRegion && (everyRegion.payload as { runId: string }).runId !== 'agent') {
          await queue.complete(everyRegion.id, 'all');
          everyRegion = await queue.claim('all', ['run-test'], null, 30_000);
        }
        assert.equal(everyRegion, null);
        const agentJob = await queue.claim('agent', ['run-test'], [agent], 30_000);
        assert.deepEqual(agentJob?.payload, { runId: 'agent' });
        await queue.complete(agentJob!.id, 'agent');
      });

      test('a job not yet due waits; a failed attempt is retried by its policy, then dropped', async () => {
        const r = region();
        await queue.enqueue(
          store.db,
          'run-test',
          { runId: 'later' },
          { region: r, runAfter: Date.now() / 1000 + 60 },
        );
        assert.equal(await queue.claim('w', ['run-test'], [r], 1_000), null);
        const r2 = region();
        const id = await queue.enqueue(
          store.db,
          'run-test',
          { runId: 'flaky' },
          { region: r2, retry: { limit: 1, delaySeconds: 0, backoff: false } },
        );
        const first = await queue.claim('w', ['run-test'], [r2], 1_000);
        assert.equal(first?.attempt, 1);
        assert.equal(first?.maxAttempts, 2);
        assert.equal(await queue.fail(id, 'w', 'boom'), 'retrying');
        let second = null;
        await until(async () => (second = await queue.claim('w', ['run-test'], [r2], 1_000)) !== null);
        assert.equal(second!.attempt, 2);
        assert.equal(await queue.fail(id, 'w', 'boom again'), 'dropped');
        await sleep(50);
        assert.equal(await queue.claim('w', ['run-test'], [r2], 1_000), null);
      });

      test('the worker runs jobs as they arrive, up to its concurrency, and stops cleanly', async () => {
        const r = region();
        const seen: string[] = [];
        let running = 0;
        let peak = 0;
        const worker = new Worker({
          queue,
          concurrency: 2,
          regions: [r],
          pollMs: 50,
          handlers: handlers({
            'run-test': async ({ runId }) => {
              running++;
              peak = Math.max(peak, running);
              await sleep(30);
              seen.push(runId);
              running--;
            },
          }),
        });
        worker.start();
        for (let i = 0; i < 6; i++)
          await queue.enqueue(store.db, 'run-test', { runId: `job${i}` }, { region: r });
        queue.notify();
        await until(() => seen.length === 6);
        await worker.stop();
        assert.deepEqual([...seen].sort(), ['job0', 'job1', 'job2', 'job3', 'job4', 'job5']);
        assert.ok(peak <= 2, `peak concurrency ${peak}`);
        assert.equal(await queue.claim('w', ['run-test'], [r], 1_000), null);
      });

      test('a job whose handler keeps failing is retried with backoff, then given up and reported', async () => {
        const r = region();
        const attempts: number[] = [];
        const givenUp: string[] = [];
        const worker = new Worker({
          queue,
          concurrency: 1,
          regions: [r],
          pollMs: 20,
          handlers: handlers({
            'run-test': async (_payload, ctx) => {
              attempts.push(ctx.job.attempt);
              throw new Error('always');
            },
          }),
          onGiveUp: async (job, reason) => {
            givenUp.push(`${(job.payload as { runId: string }).runId}: ${reason}`);
          },
        });
        await queue.enqueue(
          store.db,
          'run-test',
          { runId: 'bad' },
          { region: r, retry: { limit: 2, delaySeconds: 0, backoff: true } },
        );
        worker.start();
        await until(() => givenUp.length > 0);
        await worker.stop();
        assert.deepEqual(attempts, [1, 2, 3]);
        assert.deepEqual(givenUp, ['bad: always']);
      });

      if (adapter.name === 'local') {
        test('an expired lease returns the job to the queue; without attempts left it is given up', async () => {
          const r = region();
          const id = await queue.enqueue(
            store.db,
            'run-test',
            { runId: 'dead' },
            { region: r, retry: { limit: 1, delaySeconds: 0, backoff: false } },
          );
          await queue.claim('dead-worker', ['run-test'], [r], 1);
          await sleep(20);
          assert.deepEqual(await queue.reclaimExpired(), []);
          assert.equal(await queue.renew(id, 'dead-worker', 1_000), false, 'the dead worker lost its lease');
          const again = await queue.claim('live-worker', ['run-test'], [r], 1);
          assert.equal(again?.attempt, 2);
          await sleep(20);
          const givenUp = await queue.reclaimExpired();
          assert.deepEqual(
            givenUp.map((j) => j.payload),
            [{ runId: 'dead' }],
          );
          assert.equal(await queue.claim('w', ['run-test'], [r], 1_000), null);
        });
      }

      if (adapter.name === 'pg-boss') {
        test('workers of another process are woken through LISTEN/NOTIFY', async () => {
          const other = await pgBoss.make(store, databaseUrl);
          try {
            let woken = 0;
            const stop = other.onNotify(() => woken++);
            const r = region();
            await queue.enqueue(store.db, 'run-test', { runId: 'elsewhere' }, { region: r });
            queue.notify();
            await until(() => woken > 0, 5_000);
            stop();
            const job = await other.claim('other', ['run-test'], [r], 1_000);
            assert.deepEqual(job?.payload, { runId: 'elsewhere' });
            await other.complete(job!.id, 'other');
          } finally {
            await other.close?.();
          }
        });
      }
    });
  }
}
