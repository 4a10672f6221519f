import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/domain/ids.js';
import { CommitGroup } from '../../src/store/commit-group.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

const team = (name: string) => ({ id: newId(), name, created_at: 1_700_000_000 });

/**
 * Shared transactions (src/store/commit-group.ts): calls made while one is being written share the
 * next transaction, each in a savepoint; one call's failure is its own, and nobody hears of a write
 * before its commit.
 */
for (const { fixture, skip } of await dialects()) {
  describe(`shared transactions [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let group: CommitGroup;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
      // The store shares transactions on SQLite only (sharedTransaction); the group works on both.
      group = new CommitGroup((fn) => store.transaction(fn));
    });
    after(async () => cleanup());

    const names = async (prefix: string) =>
      (
        await store.db
          .selectFrom('teams')
          .select('name')
          .where('name', 'like', `${prefix}%`)
          .orderBy('name')
          .execute()
      ).map((row) => row.name);

    test('concurrent calls are all written; one that throws loses only its own writes', async () => {
      const calls = Array.from({ length: 40 }, (_, i) =>
        group.run(async (trx) => {
          await trx
            .insertInto('teams')
            .values(team(`group-${String(i).padStart(2, '0')}`))
            .execute();
          if (i % 7 === 3) throw new Error(`call ${i} refused`);
          await trx
            .insertInto('teams')
            .values(team(`group-${String(i).padStart(2, '0')}b`))
            .execute();
          return i;
        }),
      );
      const settled = await Promise.allSettled(calls);
      const refused = settled.flatMap((outcome, i) => (outcome.status === 'rejected' ? [i] : []));
      assert.deepEqual(refused, [3, 10, 17, 24, 31, 38]);
      for (const i of refused)
        assert.match(String((settled[i] as PromiseRejectedResult).reason), new RegExp(`call ${i} refused`));
      settled.forEach((outcome, i) => {
        if (outcome.status === 'fulfilled') assert.equal(outcome.value, i);
      });
      const expected = Array.from({ length: 40 }, (_, i) => i)
        .filter((i) => !refused.includes(i))
        .flatMap((i) => [`group-${String(i).padStart(2, '0')}`, `group-${String(i).padStart(2, '0')}b`]);
      assert.deepEqual(await names('group-'), expected);
    });

    test('a caller hears of its writes only once they are committed', async () => {
      const seen: string[][] = [];
      const calls = Array.from({ length: 5 }, (_, i) =>
        store
          .sharedTransaction(async (trx) => {
            await trx
              .insertInto('teams')
              .values(team(`seen-${i}`))
              .execute();
          })
          // Read outside the transaction: what the caller could read when it is answered.
          .then(async () => seen.push(await names(`seen-${i}`))),
      );
      await Promise.all(calls);
      assert.deepEqual(
        seen.map((rows) => rows.length),
        [1, 1, 1, 1, 1],
      );
    });

    test('a statement that fails inside a call fails that call only', async () => {
      const duplicate = team('failing-duplicate');
      await store.db.insertInto('teams').values(duplicate).execute();
      const outcomes = await Promise.allSettled([
        group.run(async (trx) => {
          await trx.insertInto('teams').values(team('failing-kept')).execute();
        }),
        group.run(async (trx) => {
          await trx.insertInto('teams').values(duplicate).execute();
        }),
        group.run(async (trx) => {
          await trx.insertInto('teams').values(team('failing-kept-too')).execute();
        }),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual(await names('failing-'), ['failing-duplicate', 'failing-kept', 'failing-kept-too']);
    });

    test('calls made while one is written share the next transaction; when it fails, they all fail', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const first = group.run(async (trx) => {
        await trx.insertInto('teams').values(team('shared-first')).execute();
        await held;
      });
      const together = [
        group.run(async (trx) => {
          await trx.insertInto('teams').values(team('shared-a')).execute();
        }),
        group.run(async (trx) => {
          await trx.insertInto('teams').values(team('shared-b')).execute();
        }),
        // Ends the transaction under the group: what the store does when it gives one up.
        group.run(async (trx) => {
          await sql`rollback`.execute(trx);
          throw new Error('the transaction is gone');
        }),
      ];
      release();
      await first;
      const outcomes = await Promise.allSettled(together);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected', 'rejected'],
      );
      for (const outcome of outcomes)
        assert.match(String((outcome as PromiseRejectedResult).reason), /the transaction is gone/);
      assert.deepEqual(await names('shared-'), ['shared-first']);
    });
  });
}
