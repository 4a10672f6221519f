import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashSecret, newId } from '../../src/domain/ids.js';
import { sessionsRepo } from '../../src/store/repositories/sessions.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

for (const { fixture, skip } of await dialects()) {
  describe(`web sessions repository [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let accountId: string;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
      accountId = newId();
      await store.db
        .insertInto('accounts')
        .values({ id: accountId, email: 'a@x.test', name: 'A', password_hash: 'x', created_at: 1 })
        .execute();
    });
    after(async () => cleanup());

    const session = (expiresAt: number) => ({
      idHash: hashSecret(newId()),
      accountId,
      csrfToken: newId(),
      createdAt: expiresAt - 100,
      expiresAt,
    });

    test('a live session is found by its hash until it expires', async () => {
      const live = session(1_000);
      await sessionsRepo.insert(store.db, live);
      assert.deepEqual(await sessionsRepo.findLive(store.db, live.idHash, 999), {
        account_id: accountId,
        csrf_token: live.csrfToken,
      });
      assert.equal(await sessionsRepo.findLive(store.db, live.idHash, 1_000), undefined);
      assert.equal(await sessionsRepo.findLive(store.db, hashSecret('unknown'), 0), undefined);
    });

    test('deleteExpired removes the expired sessions only; delete ends one', async () => {
      const expired = session(2_000);
      const kept = session(3_000);
      await sessionsRepo.insert(store.db, expired);
      await sessionsRepo.insert(store.db, kept);
      await sessionsRepo.deleteExpired(store.db, 2_000);
      const left = await store.db.selectFrom('web_sessions').select('id_hash').execute();
      assert.deepEqual(
        left.map((row) => row.id_hash),
        [kept.idHash],
      );
      await sessionsRepo.delete(store.db, kept.idHash);
      assert.equal(await sessionsRepo.findLive(store.db, kept.idHash, 0), undefined);
    });
  });
}
