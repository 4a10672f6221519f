import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { teamsRepo } from '../../src/store/repositories/teams.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

for (const { fixture, skip } of await dialects()) {
  describe(`teams repository: membership reads [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup());

    async function account(name: string): Promise<string> {
      const id = newId();
      await store.db
        .insertInto('accounts')
        .values({ id, email: `${name}-${id}@x.test`, name, password_hash: 'x', created_at: 1 })
        .execute();
      return id;
    }

    test('teamOfMember answers the team and the role of a member, nothing for anyone else', async () => {
      const teamId = newId();
      await store.db.insertInto('teams').values({ id: teamId, name: 'Ops', created_at: 1 }).execute();
      const owner = await account('Owner');
      const member = await account('Member');
      const stranger = await account('Stranger');
      await store.db
        .insertInto('team_members')
        .values({ team_id: teamId, account_id: owner, role: 'owner', created_at: 1 })
        .execute();
      await teamsRepo.addMember(store.db, {
        team_id: teamId,
        account_id: member,
        role_id: null,
        created_at: 2,
      });
      assert.deepEqual(await teamsRepo.teamOfMember(store.db, teamId, owner), {
        id: teamId,
        name: 'Ops',
        role: 'owner',
      });
      assert.deepEqual(await teamsRepo.teamOfMember(store.db, teamId, member), {
        id: teamId,
        name: 'Ops',
        role: 'member',
      });
      assert.equal(await teamsRepo.teamOfMember(store.db, teamId, stranger), undefined);
      assert.equal(await teamsRepo.teamOfMember(store.db, newId(), owner), undefined);
    });

    test('memberAccounts lists the members earliest first, ties by account id', async () => {
      const teamId = newId();
      await store.db.insertInto('teams').values({ id: teamId, name: 'Dev', created_at: 1 }).execute();
      const first = await account('First');
      const tiedA = await account('Tied A');
      const tiedB = await account('Tied B');
      await account('Outsider');
      await teamsRepo.addMember(store.db, {
        team_id: teamId,
        account_id: tiedA,
        role_id: null,
        created_at: 20,
      });
      await teamsRepo.addMember(store.db, {
        team_id: teamId,
        account_id: first,
        role_id: null,
        created_at: 10,
      });
      await teamsRepo.addMember(store.db, {
        team_id: teamId,
        account_id: tiedB,
        role_id: null,
        created_at: 20,
      });
      const listed = await teamsRepo.memberAccounts(store.db, teamId);
      assert.deepEqual(
        listed.map((row) => row.id),
        [first, ...[tiedA, tiedB].sort()],
      );
      assert.deepEqual(
        listed.find((row) => row.id === first),
        {
          id: first,
          name: 'First',
          email: (
            await store.db
              .selectFrom('accounts')
              .select('email')
              .where('id', '=', first)
              .executeTakeFirstOrThrow()
          ).email,
        },
      );
      assert.deepEqual(await teamsRepo.memberAccounts(store.db, newId()), []);
    });
  });
}
