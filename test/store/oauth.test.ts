import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashSecret, newId } from '../../src/domain/ids.js';
import { DASHBOARD_BUILTIN, oauthRepo } from '../../src/store/repositories/oauth.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

const NOW = 1_700_000_000;

for (const { fixture, skip } of await dialects()) {
  describe(`OAuth repository [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup());

    async function account(): Promise<string> {
      const id = newId();
      await store.db
        .insertInto('accounts')
        .values({ id, email: `${id}@x.test`, name: 'A', password_hash: 'x', created_at: NOW })
        .execute();
      return id;
    }

    async function application(accountId: string): Promise<string> {
      const clientId = newId();
      await store.db
        .insertInto('client_applications')
        .values({
          client_id: clientId,
          account_id: accountId,
          name: 'App',
          website_url: 'https://app.test',
          callback_url: 'https://app.test/cb',
          secret_hash: hashSecret('secret'),
          is_public: 0,
          created_at: NOW,
          builtin: null,
        })
        .execute();
      return clientId;
    }

    async function token(accountId: string, clientId: string | null): Promise<{ id: string; hash: string }> {
      const id = newId();
      const hash = hashSecret(id);
      await store.db
        .insertInto('access_tokens')
        .values({
          id,
          token_hash: hash,
          account_id: accountId,
          client_id: clientId,
          scopes: 'api:read',
          kind: 'oauth',
          created_at: NOW,
          last_used_at: null,
          revoked_at: null,
        })
        .execute();
      return { id, hash };
    }

    const revokedAt = async (id: string) =>
      (
        await store.db
          .selectFrom('access_tokens')
          .select('revoked_at')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).revoked_at;

    const dashboardRow = (accountId: string) => ({
      clientId: newId(),
      accountId,
      name: 'Vigil dashboard',
      websiteUrl: 'https://vigil.test',
      callbackUrl: 'https://vigil.test/app/',
      secretHash: hashSecret(newId()),
      createdAt: NOW,
    });

    test('findClient finds registered applications, never the dashboard row', async () => {
      const owner = await account();
      const clientId = await application(owner);
      const found = await oauthRepo.findClient(store.db, clientId);
      assert.equal(found?.account_id, owner);
      assert.equal(found?.callback_url, 'https://app.test/cb');
      assert.equal(found?.secret_hash, hashSecret('secret'));
      assert.equal(await oauthRepo.findClient(store.db, newId()), undefined);
      const dashboardId = await oauthRepo.ensureDashboardClient(store.db, dashboardRow(owner));
      assert.equal(await oauthRepo.findClient(store.db, dashboardId), undefined);
    });

    test('ensureDashboardClient makes one row per account, however often and concurrently it is asked', async () => {
      const owner = await account();
      const ids = await Promise.all(
        [1, 2, 3].map(() => oauthRepo.ensureDashboardClient(store.db, dashboardRow(owner))),
      );
      assert.equal(new Set(ids).size, 1);
      assert.equal(await oauthRepo.ensureDashboardClient(store.db, dashboardRow(owner)), ids[0]);
      const rows = await store.db
        .selectFrom('client_applications')
        .select('client_id')
        .where('account_id', '=', owner)
        .where('builtin', '=', DASHBOARD_BUILTIN)
        .execute();
      assert.equal(rows.length, 1);
      assert.equal(await oauthRepo.isDashboardClient(store.db, ids[0]!, owner), true);
      assert.equal(await oauthRepo.isDashboardClient(store.db, ids[0]!, await account()), false);
      assert.equal(await oauthRepo.isDashboardClient(store.db, await application(owner), owner), false);
    });

    test('a code is found by its hash, consumed once, and remembers its token', async () => {
      const owner = await account();
      const clientId = await application(owner);
      const codeHash = hashSecret(newId());
      await oauthRepo.insertCode(store.db, {
        codeHash,
        clientId,
        accountId: owner,
        redirectUri: 'https://app.test/cb',
        scopes: 'api:read message:write',
        codeChallenge: null,
        createdAt: NOW + 0.5,
        expiresAt: NOW + 60.5,
      });
      assert.deepEqual(await oauthRepo.findCode(store.db, codeHash), {
        client_id: clientId,
        account_id: owner,
        redirect_uri: 'https://app.test/cb',
        scopes: 'api:read message:write',
        code_challenge: null,
        expires_at: NOW + 60.5,
        used_at: null,
        token_id: null,
      });
      assert.equal(await oauthRepo.consumeCode(store.db, codeHash, NOW + 1), true);
      assert.equal(await oauthRepo.consumeCode(store.db, codeHash, NOW + 2), false);
      const minted = await token(owner, clientId);
      await oauthRepo.recordToken(store.db, codeHash, minted.id);
      const row = await oauthRepo.findCode(store.db, codeHash);
      assert.equal(row?.used_at, NOW + 1);
      assert.equal(row?.token_id, minted.id);
      assert.equal(await oauthRepo.findCode(store.db, hashSecret('unknown')), undefined);
    });

    test('deleteCodesExpiredBefore removes only the codes that expired before the time', async () => {
      const owner = await account();
      const clientId = await application(owner);
      const code = (expiresAt: number) => ({
        codeHash: hashSecret(newId()),
        clientId,
        accountId: owner,
        redirectUri: 'https://app.test/cb',
        scopes: 'api:read',
        codeChallenge: 'c'.repeat(43),
        createdAt: expiresAt - 60,
        expiresAt,
      });
      const old = code(NOW - 100);
      const fresh = code(NOW + 100);
      await oauthRepo.insertCode(store.db, old);
      await oauthRepo.insertCode(store.db, fresh);
      await oauthRepo.deleteCodesExpiredBefore(store.db, NOW);
      assert.equal(await oauthRepo.findCode(store.db, old.codeHash), undefined);
      assert.equal((await oauthRepo.findCode(store.db, fresh.codeHash))?.code_challenge, 'c'.repeat(43));
    });

    test('revoking: by id once, by hash only for the client it was issued to, dashboard tokens only as such', async () => {
      const owner = await account();
      const clientId = await application(owner);
      const other = await application(owner);
      const byId = await token(owner, clientId);
      await oauthRepo.revokeTokenById(store.db, byId.id, NOW + 1);
      await oauthRepo.revokeTokenById(store.db, byId.id, NOW + 2);
      assert.equal(await revokedAt(byId.id), NOW + 1);

      const issued = await token(owner, clientId);
      assert.equal(await oauthRepo.revokeClientToken(store.db, issued.hash, other, NOW), false);
      assert.equal(await oauthRepo.revokeDashboardToken(store.db, issued.hash, NOW), false);
      assert.equal(await revokedAt(issued.id), null);
      assert.equal(await oauthRepo.revokeClientToken(store.db, issued.hash, clientId, NOW + 3), true);
      assert.equal(await oauthRepo.revokeClientToken(store.db, issued.hash, clientId, NOW + 4), false);
      assert.equal(await revokedAt(issued.id), NOW + 3);

      const dashboardId = await oauthRepo.ensureDashboardClient(store.db, dashboardRow(owner));
      const dashboard = await token(owner, dashboardId);
      assert.equal(await oauthRepo.revokeDashboardToken(store.db, dashboard.hash, NOW + 5), true);
      assert.equal(await revokedAt(dashboard.id), NOW + 5);
    });
  });
}
