import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashSecret } from '../../src/domain/ids.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { describeApi } from '../helpers/api.js';

const APPLICATION_KEYS = ['callback_url', 'client_id', 'created_at', 'is_public', 'name', 'website_url'];
const TOKEN_KEYS = [
  'client_id',
  'client_name',
  'created_at',
  'expires_at',
  'id',
  'kind',
  'last_used_at',
  'name',
  'scopes',
];
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const input = (overrides: Record<string, unknown> = {}) => ({
  name: 'Status page',
  website_url: 'https://status.example.com',
  callback_url: 'https://status.example.com/oauth/callback',
  ...overrides,
});

await describeApi('client applications and tokens', (get) => {
  const secretHashOf = async (clientId: string) =>
    (
      await get()
        .store.db.selectFrom('client_applications')
        .select('secret_hash')
        .where('client_id', '=', clientId)
        .executeTakeFirstOrThrow()
    ).secret_hash;

  test('POST /applications answers the secret and an owner token once, and keeps only hashes', async () => {
    const { data, call, alice } = get();
    const created = await data('POST', '/applications', input());
    assert.deepEqual(
      Object.keys(created).sort(),
      [...APPLICATION_KEYS, 'access_token', 'client_secret'].sort(),
    );
    assert.match(created.client_id, /^[0-9a-f-]{36}$/);
    assert.match(created.client_secret, /^vgl_cs_[A-Za-z0-9_-]{43}$/);
    assert.match(created.access_token, /^vgl_at_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.name, 'Status page');
    assert.equal(created.website_url, 'https://status.example.com');
    assert.equal(created.callback_url, 'https://status.example.com/oauth/callback');
    assert.equal(created.is_public, false);
    assert.equal(typeof created.created_at, 'number');

    const account = await call({ method: 'GET', url: '/account', as: created.access_token });
    assert.equal(account.json().data.id, alice.accountId);
    assert.equal(await secretHashOf(created.client_id), hashSecret(created.client_secret));
    const token = await get()
      .store.db.selectFrom('access_tokens')
      .selectAll()
      .where('client_id', '=', created.client_id)
      .executeTakeFirstOrThrow();
    assert.equal(token.token_hash, hashSecret(created.access_token));
    assert.equal(token.kind, 'personal');
    assert.equal(token.scopes, SCOPES.join(' '));

    const listed = await call({ method: 'GET', url: '/account/tokens', as: created.access_token });
    const mine = listed.json().data.find((t: any) => t.client_id === created.client_id);
    assert.deepEqual(mine.scopes, [...SCOPES]);
    assert.equal(mine.client_name, 'Status page');
  });

  test('is_public is stored; localhost and 127.0.0.1 callbacks are accepted for development', async () => {
    const { data } = get();
    const local = await data(
      'POST',
      '/applications',
      input({ callback_url: 'http://localhost:3000/callback', is_public: true }),
    );
    assert.equal(local.is_public, true);
    assert.equal(local.callback_url, 'http://localhost:3000/callback');
    assert.equal((await data('GET', `/applications/${local.client_id}`)).is_public, true);
    const loopback = await data(
      'POST',
      '/applications',
      input({ website_url: 'http://127.0.0.1:8080', callback_url: 'http://127.0.0.1:8080/cb?x=1' }),
    );
    assert.equal(loopback.callback_url, 'http://127.0.0.1:8080/cb?x=1');
    assert.equal(loopback.is_public, false);
  });

  test('invalid applications are 400 naming the field, and nothing is written', async () => {
    const { expectError, store } = get();
    const before = (await store.db.selectFrom('client_applications').select('client_id').execute()).length;
    const cases: [Record<string, unknown>, string][] = [
      [{ name: undefined }, '/name'],
      [{ name: '' }, '/name'],
      [{ name: '   ' }, '/name'],
      [{ name: 'x'.repeat(256) }, '/name'],
      [{ website_url: undefined }, '/website_url'],
      [{ website_url: 'status.example.com' }, '/website_url'],
      [{ website_url: 'ftp://status.example.com' }, '/website_url'],
      [{ website_url: 'https://user:pw@status.example.com' }, '/website_url'],
      [{ callback_url: 'javascript:alert(1)' }, '/callback_url'],
      [{ callback_url: 'https://status.example.com/cb#frag' }, '/callback_url'],
      [{ callback_url: 'https://status.example.com/ cb' }, '/callback_url'],
      [{ callback_url: `https://example.com/${'x'.repeat(2048)}` }, '/callback_url'],
      [{ is_public: 'yes' }, '/is_public'],
    ];
    for (const [overrides, field] of cases) {
      await expectError(
        { method: 'POST', url: '/applications', body: input(overrides) },
        400,
        'validation_failed',
        field,
      );
    }
    const after = (await store.db.selectFrom('client_applications').select('client_id').execute()).length;
    assert.equal(after, before);
  });

  test('GET lists and shows the account’s applications, never a secret; others’ are 404', async () => {
    const { data, call, bob, expectError } = get();
    const created = await data('POST', '/applications', input({ name: 'Listed' }));
    const list = await data('GET', '/applications');
    assert.ok(list.length >= 2, 'the bootstrap application and this one');
    for (const item of list) assert.deepEqual(Object.keys(item).sort(), APPLICATION_KEYS);
    const { client_secret: _secret, access_token: _token, ...shown } = created;
    assert.deepEqual(
      list.find((a: any) => a.client_id === created.client_id),
      shown,
    );
    assert.deepEqual(await data('GET', `/applications/${created.client_id}`), shown);
    const body = (await call({ method: 'GET', url: '/applications' })).body;
    assert.ok(!body.includes(created.client_secret));
    assert.ok(!body.includes(hashSecret(created.client_secret)));

    const bobs = (await call({ method: 'GET', url: '/applications', as: bob })).json().data;
    assert.ok(bobs.length >= 1);
    assert.ok(!bobs.some((a: any) => a.client_id === created.client_id));
    await expectError(
      { method: 'GET', url: `/applications/${created.client_id}`, as: bob },
      404,
      'not_found',
    );
    await expectError({ method: 'GET', url: `/applications/${UNKNOWN}` }, 404, 'not_found');
    await expectError({ method: 'GET', url: '/applications/not-a-uuid' }, 404, 'not_found');
  });

  test('POST /applications/<id>/secret rotates: the new secret is shown once, only its hash kept', async () => {
    const { data, call, bob, expectError } = get();
    const created = await data('POST', '/applications', input({ name: 'Rotating' }));
    const rotated = await data('POST', `/applications/${created.client_id}/secret`, undefined, 200);
    assert.deepEqual(Object.keys(rotated).sort(), [...APPLICATION_KEYS, 'client_secret'].sort());
    assert.equal(rotated.client_id, created.client_id);
    assert.match(rotated.client_secret, /^vgl_cs_/);
    assert.notEqual(rotated.client_secret, created.client_secret);
    const stored = await secretHashOf(created.client_id);
    assert.equal(stored, hashSecret(rotated.client_secret));
    assert.notEqual(stored, hashSecret(created.client_secret));
    assert.equal(
      (await call({ method: 'GET', url: '/account', as: created.access_token })).statusCode,
      200,
      'tokens already issued stay valid',
    );

    await expectError(
      { method: 'POST', url: `/applications/${created.client_id}/secret`, as: bob },
      404,
      'not_found',
    );
    assert.equal(await secretHashOf(created.client_id), stored);
    await expectError({ method: 'POST', url: `/applications/${UNKNOWN}/secret` }, 404, 'not_found');
  });

  test('DELETE /applications/<id> is 204 and its tokens fail at once; others’ are 404', async () => {
    const { data, call, bob, expectError, store } = get();
    const created = await data('POST', '/applications', input({ name: 'Doomed' }));
    await expectError(
      { method: 'DELETE', url: `/applications/${created.client_id}`, as: bob },
      404,
      'not_found',
    );
    assert.equal((await call({ method: 'GET', url: '/account', as: created.access_token })).statusCode, 200);

    const deleted = await call({ method: 'DELETE', url: `/applications/${created.client_id}` });
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    await expectError({ method: 'GET', url: '/account', as: created.access_token }, 401, 'unauthorized');
    await expectError({ method: 'GET', url: `/applications/${created.client_id}` }, 404, 'not_found');
    await expectError({ method: 'DELETE', url: `/applications/${created.client_id}` }, 404, 'not_found');
    const left = await store.db
      .selectFrom('access_tokens')
      .select('id')
      .where('client_id', '=', created.client_id)
      .execute();
    assert.deepEqual(left, []);
  });

  test('GET /account/tokens lists live tokens without their values or hashes', async () => {
    const { call, data, alice, tokenWith } = get();
    const created = await data('POST', '/applications', input({ name: 'Token lister' }));
    const granted = await tokenWith(['api:read', 'message:write']);
    const response = await call({ method: 'GET', url: '/account/tokens' });
    assert.equal(response.statusCode, 200);
    const tokens = response.json().data;
    for (const token of tokens) assert.deepEqual(Object.keys(token).sort(), TOKEN_KEYS);
    for (const secret of [alice.token, created.access_token, granted]) {
      assert.ok(!response.body.includes(secret));
      assert.ok(!response.body.includes(hashSecret(secret)));
    }
    const personal = tokens.find((t: any) => t.client_id === created.client_id);
    assert.equal(personal.kind, 'personal');
    assert.equal(personal.client_name, 'Token lister');
    const oauth = tokens.find(
      (t: any) => t.kind === 'oauth' && t.scopes.join(' ') === 'api:read message:write',
    );
    assert.ok(oauth, 'the granted token is listed');
    assert.equal(oauth.client_id, null);
    assert.equal(oauth.client_name, null);
    const createdAt = tokens.map((t: any) => t.created_at);
    assert.deepEqual(
      createdAt,
      [...createdAt].sort((a, b) => b - a),
      'newest first',
    );

    const bobs = (await call({ method: 'GET', url: '/account/tokens', as: get().bob })).json().data;
    assert.ok(!bobs.some((t: any) => tokens.some((mine: any) => mine.id === t.id)));
  });

  test('DELETE /account/tokens/<id> revokes: the token fails with 401 on the very next request', async () => {
    const { call, data, expectError } = get();
    const created = await data('POST', '/applications', input({ name: 'Revoked soon' }));
    const listed = await data('GET', '/account/tokens');
    const { id } = listed.find((t: any) => t.client_id === created.client_id);
    assert.equal((await call({ method: 'GET', url: '/buckets', as: created.access_token })).statusCode, 200);

    const revoked = await call({ method: 'DELETE', url: `/account/tokens/${id}` });
    assert.equal(revoked.statusCode, 204);
    assert.equal(revoked.body, '');
    const after = await expectError(
      { method: 'GET', url: '/buckets', as: created.access_token },
      401,
      'unauthorized',
    );
    assert.match(after.message, /revoked/);
    assert.ok(!(await data('GET', '/account/tokens')).some((t: any) => t.id === id));
    await expectError({ method: 'DELETE', url: `/account/tokens/${id}` }, 404, 'not_found');
    assert.equal((await data('GET', `/applications/${created.client_id}`)).name, 'Revoked soon');
  });

  test('POST /account/tokens makes a named token with its scopes and lifetime, shown once', async () => {
    const { call, data, store, expectError } = get();
    const response = await call({
      method: 'POST',
      url: '/account/tokens',
      body: { name: 'CI reader', scopes: ['api:read', 'api:read'], expires_in: 3600 },
    });
    assert.equal(response.statusCode, 201, response.body);
    const made = response.json().data;
    assert.deepEqual(Object.keys(made).sort(), [...TOKEN_KEYS, 'token'].sort());
    assert.match(made.token, /^vgl_at_[A-Za-z0-9_-]{43}$/);
    assert.equal(made.name, 'CI reader');
    assert.equal(made.kind, 'personal');
    assert.deepEqual(made.scopes, ['api:read']);
    assert.equal(made.expires_at, made.created_at + 3600);

    const listed = (await data('GET', '/account/tokens')).find((t: any) => t.id === made.id);
    assert.equal(listed.name, 'CI reader');
    assert.equal(listed.expires_at, made.expires_at);
    assert.ok(!JSON.stringify(listed).includes(made.token));

    // It reads, but it cannot write tests nor make a wider token: it holds fewer than every scope.
    assert.equal((await call({ method: 'GET', url: '/buckets', as: made.token })).statusCode, 200);
    await expectError(
      {
        method: 'POST',
        url: '/account/tokens',
        as: made.token,
        body: { name: 'wider', scopes: [...SCOPES] },
      },
      403,
      'forbidden',
    );
    await expectError({ method: 'GET', url: '/applications', as: made.token }, 403, 'forbidden');

    // Past its expiry it is refused and no longer listed.
    await store.db
      .updateTable('access_tokens')
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where('id', '=', made.id)
      .execute();
    await expectError({ method: 'GET', url: '/buckets', as: made.token }, 401, 'unauthorized');
    assert.ok(!(await data('GET', '/account/tokens')).some((t: any) => t.id === made.id));

    // Without expires_in it lasts until revoked; unknown scopes and blank names are refused.
    const lasting = await data('POST', '/account/tokens', {
      name: 'Deploys',
      scopes: ['test:write', 'api:read'],
    });
    assert.equal(lasting.expires_at, null);
    assert.deepEqual(lasting.scopes, ['api:read', 'test:write']);
    await expectError(
      { method: 'POST', url: '/account/tokens', body: { name: 'x', scopes: ['everything'] } },
      400,
      'validation_failed',
    );
    await expectError(
      { method: 'POST', url: '/account/tokens', body: { name: '  ', scopes: ['api:read'] } },
      400,
      'validation_failed',
      '/name',
    );
    await expectError(
      { method: 'POST', url: '/account/tokens', body: { name: 'x', scopes: [] } },
      400,
      'validation_failed',
    );
  });

  test('a token may revoke itself', async () => {
    const { call, data, expectError } = get();
    const created = await data('POST', '/applications', input({ name: 'Self revoking' }));
    const as = created.access_token;
    const { id } = (await call({ method: 'GET', url: '/account/tokens', as }))
      .json()
      .data.find((t: any) => t.client_id === created.client_id);
    assert.equal((await call({ method: 'DELETE', url: `/account/tokens/${id}`, as })).statusCode, 204);
    await expectError({ method: 'GET', url: '/account/tokens', as }, 401, 'unauthorized');
  });

  test('another account’s token id is 404 and that token keeps working', async () => {
    const { call, bob, expectError } = get();
    const bobs = (await call({ method: 'GET', url: '/account/tokens', as: bob })).json().data;
    assert.ok(bobs.length >= 1);
    for (const token of bobs) {
      await expectError({ method: 'DELETE', url: `/account/tokens/${token.id}` }, 404, 'not_found');
    }
    assert.equal((await call({ method: 'GET', url: '/account', as: bob })).statusCode, 200);
    await expectError({ method: 'DELETE', url: `/account/tokens/${UNKNOWN}` }, 404, 'not_found');
    await expectError({ method: 'DELETE', url: '/account/tokens/not-a-uuid' }, 404, 'not_found');
  });

  test('tokens granted to applications cannot manage applications or tokens, whatever their scopes', async () => {
    const { call, data, tokenWith, expectError, store } = get();
    const target = await data('POST', '/applications', input({ name: 'Protected' }));
    const victim = await tokenWith(['api:read']);
    const victimId = (await data('GET', '/account/tokens')).find(
      (t: any) => t.kind === 'oauth' && t.scopes.join(' ') === 'api:read',
    ).id;
    const oauth = await tokenWith([...SCOPES]);
    const count = async () =>
      (await store.db.selectFrom('client_applications').select('client_id').execute()).length;
    const before = await count();
    const requests = [
      { method: 'POST', url: '/applications', body: input({ name: 'Sneaky' }) },
      { method: 'GET', url: '/applications' },
      { method: 'GET', url: `/applications/${target.client_id}` },
      { method: 'POST', url: `/applications/${target.client_id}/secret` },
      { method: 'DELETE', url: `/applications/${target.client_id}` },
      { method: 'GET', url: '/account/tokens' },
      { method: 'DELETE', url: `/account/tokens/${victimId}` },
    ] as const;
    for (const request of requests) {
      const error = await expectError({ ...request, as: oauth }, 403, 'forbidden');
      assert.match(error.message, /personal access token/, `${request.method} ${request.url}`);
    }
    assert.equal(await count(), before);
    assert.equal(await secretHashOf(target.client_id), hashSecret(target.client_secret));
    assert.equal((await call({ method: 'GET', url: '/account', as: victim })).statusCode, 200);
    assert.equal((await call({ method: 'GET', url: '/account', as: oauth })).statusCode, 200);
  });
});
