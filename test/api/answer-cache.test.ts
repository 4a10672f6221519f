import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { hashSecret } from '../../src/domain/ids.js';
import { Store } from '../../src/store/store.js';
import { describeApi } from '../helpers/api.js';

/**
 * The tests list and a test's detail are served from answers kept while nothing stored has changed
 * (src/api/shared/answer-cache.ts; on SQLite only). Whatever changes what they show, however it is
 * written, must show in the next read, and no caller may be given an answer made for another.
 */
await describeApi('kept answers of the tests list and detail', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

  test('a read after a change through the API shows the change', async () => {
    const { data } = get();
    const created = await data('POST', tests(), { name: 'Before', description: null });
    const url = `${tests()}/${created.id}`;
    assert.equal((await data('GET', url)).name, 'Before');
    assert.equal((await data('GET', url)).name, 'Before');
    assert.ok((await data('GET', tests())).some((t: { name: string }) => t.name === 'Before'));
    await data('PUT', url, { name: 'After' });
    assert.equal((await data('GET', url)).name, 'After');
    assert.ok((await data('GET', tests())).some((t: { name: string }) => t.name === 'After'));
  });

  test('a change written to the store outside the API shows in the next read', async () => {
    const { data, store } = get();
    const created = await data('POST', tests(), { name: 'Stored', description: null });
    const url = `${tests()}/${created.id}`;
    await data('GET', url);
    await store.db
      .updateTable('tests')
      .set({ description: 'written below' })
      .where('id', '=', created.id)
      .execute();
    assert.equal((await data('GET', url)).description, 'written below');
  });

  test('a change committed by another connection to the same database shows in the next read', async (t) => {
    const { data, store, dialect } = get();
    if (dialect !== 'sqlite') return t.skip('another connection to one file is a SQLite case');
    const created = await data('POST', tests(), { name: 'Elsewhere', description: null });
    const url = `${tests()}/${created.id}`;
    assert.equal((await data('GET', url)).name, 'Elsewhere');
    const { rows } = await sql<{
      file: string;
    }>`select file from pragma_database_list where name = 'main'`.execute(store.db);
    const other = Store.open({ dataDir: path.dirname(rows[0]!.file) });
    try {
      await other.db
        .updateTable('tests')
        .set({ name: 'Renamed elsewhere' })
        .where('id', '=', created.id)
        .execute();
    } finally {
      await other.close();
    }
    assert.equal((await data('GET', url)).name, 'Renamed elsewhere');
    assert.ok((await data('GET', tests())).some((t: { name: string }) => t.name === 'Renamed elsewhere'));
  });

  test('another account is not given an answer kept for a member, and loses it with its membership', async () => {
    const { data, call, store, alice, bob } = get();
    const created = await data('POST', tests(), { name: 'Members only', description: null });
    const url = `${tests()}/${created.id}`;
    await data('GET', url);
    await data('GET', tests());
    assert.equal((await call({ method: 'GET', url, as: bob })).statusCode, 404);
    assert.equal((await call({ method: 'GET', url: tests(), as: bob })).statusCode, 404);

    const { team_id } = await store.db
      .selectFrom('buckets')
      .select('team_id')
      .where('key', '=', alice.bucketKey)
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto('team_members')
      .values({
        team_id,
        account_id: bob.accountId,
        role: 'member',
        created_at: 1_700_000_000,
        role_id: null,
      })
      .execute();
    assert.equal((await call({ method: 'GET', url, as: bob })).json().data.name, 'Members only');
    await store.db
      .deleteFrom('team_members')
      .where('team_id', '=', team_id)
      .where('account_id', '=', bob.accountId)
      .execute();
    assert.equal((await call({ method: 'GET', url, as: bob })).statusCode, 404);
    assert.equal((await call({ method: 'GET', url: tests(), as: bob })).statusCode, 404);
  });

  test('a token without the e-mail scope is not given the e-mail a kept answer shows', async () => {
    const { data, call, tokenWith, alice } = get();
    const created = await data('POST', tests(), { name: 'Whose', description: null });
    const url = `${tests()}/${created.id}`;
    // Minted and used first: issuing a token and its first use (which stamps it) are changes, and a
    // change drops every kept answer.
    const reader = await tokenWith(['api:read']);
    await call({ method: 'GET', url, as: reader });
    assert.equal((await data('GET', url)).created_by.email, alice.email);
    assert.ok(
      (await data('GET', tests())).some((t: { created_by: { email: string } }) => t.created_by.email),
    );
    const detail = (await call({ method: 'GET', url, as: reader })).json().data;
    assert.equal(detail.created_by.email, '');
    const listed = (await call({ method: 'GET', url: tests(), as: reader })).json().data;
    assert.ok(listed.every((t: { created_by: { email: string } }) => t.created_by.email === ''));
  });

  test('a revoked token is refused though the answer it was given is kept', async () => {
    const { data, call, tokenWith, store } = get();
    const created = await data('POST', tests(), { name: 'Revoked', description: null });
    const url = `${tests()}/${created.id}`;
    const reader = await tokenWith(['api:read']);
    assert.equal((await call({ method: 'GET', url, as: reader })).statusCode, 200);
    assert.equal((await call({ method: 'GET', url, as: reader })).statusCode, 200);
    // Tokens are no table the answers are read from: revoking one leaves the kept answers in place.
    await store.db
      .updateTable('access_tokens')
      .set({ revoked_at: 1_700_000_000 })
      .where('token_hash', '=', hashSecret(reader))
      .execute();
    assert.equal((await call({ method: 'GET', url, as: reader })).statusCode, 401);
    assert.equal((await call({ method: 'GET', url: tests(), as: reader })).statusCode, 401);
  });

  test('a kept answer is the same text, with the same headers, as the answer it was kept from', async () => {
    const { data, call } = get();
    const created = await data('POST', tests(), { name: 'Same bytes', description: null });
    const url = `${tests()}/${created.id}`;
    const first = await call({ method: 'GET', url });
    const second = await call({ method: 'GET', url });
    assert.equal(second.body, first.body);
    assert.equal(second.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(second.headers['content-type'], first.headers['content-type']);
    assert.equal(second.headers['x-content-type-options'], 'nosniff');
  });
});
