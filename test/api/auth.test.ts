import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SCOPES } from '../../src/domain/scopes.js';
import { describeApi } from '../helpers/api.js';
import { defaultSqliteDriver } from '../../src/store/dialects/sqlite-drivers.js';

await describeApi('authentication, scopes and the error envelope', (get) => {
  const bucket = () => `/buckets/${get().alice.bucketKey}`;

  function assertErrorEnvelope(
    response: { statusCode: number; json(): any; headers: Record<string, unknown> },
    status: number,
    code: string,
  ) {
    assert.equal(response.statusCode, status);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const body = response.json();
    assert.equal(body.data, null);
    assert.deepEqual(body.meta, { status: 'error' });
    assert.equal(body.error.status, status);
    assert.equal(body.error.code, code);
    assert.ok(body.error.message.length > 0);
    assert.match(body.error.more_info, new RegExp(`/errors#${code}$`));
    return body.error;
  }

  test('success responses carry meta.status success and error null', async () => {
    const response = await get().call({ method: 'GET', url: '/' });
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.deepEqual(body, {
      data: {
        bucket_list_url: 'http://vigil.test/buckets',
        current_account_url: 'http://vigil.test/account',
      },
      meta: { status: 'success' },
      error: null,
    });
  });

  test('no token, a malformed header, an unknown token: 401 with WWW-Authenticate', async () => {
    const { call } = get();
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer vgl_at_unknown_token_value' },
    ]) {
      const response = await call({ method: 'GET', url: '/buckets', as: null, headers });
      assertErrorEnvelope(response, 401, 'unauthorized');
      assert.match(String(response.headers['www-authenticate']), /^Bearer/);
    }
  });

  test('a revoked token fails at once', async () => {
    const { call, tokenWith, store } = get();
    const token = await tokenWith(['api:read']);
    assert.equal((await call({ method: 'GET', url: '/buckets', as: token })).statusCode, 200);
    await store.db
      .updateTable('access_tokens')
      .set({ revoked_at: 1 })
      .where('scopes', '=', 'api:read')
      .execute();
    assertErrorEnvelope(await call({ method: 'GET', url: '/buckets', as: token }), 401, 'unauthorized');
  });

  test('tokens are stored only as hashes', async () => {
    const { store, alice } = get();
    const rows = await store.db.selectFrom('access_tokens').select(['token_hash']).execute();
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.match(row.token_hash, /^[0-9a-f]{64}$/);
      assert.notEqual(row.token_hash, alice.token);
    }
    const clients = await store.db.selectFrom('client_applications').select(['secret_hash']).execute();
    for (const row of clients) assert.match(row.secret_hash, /^[0-9a-f]{64}$/);
  });

  test('each route needs its scope: a table of route × scope', async () => {
    const { call, tokenWith, data } = get();
    const created = await data('POST', `${bucket()}/tests`, { name: 'Scoped' });
    const t = `${bucket()}/tests/${created.id}`;
    const routes: {
      method: 'GET' | 'POST' | 'PUT' | 'DELETE';
      url: string;
      body?: unknown;
      scope: string;
    }[] = [
      { method: 'GET', url: '/', scope: 'api:read' },
      { method: 'GET', url: '/account', scope: 'api:read' },
      { method: 'GET', url: '/buckets', scope: 'api:read' },
      { method: 'POST', url: '/buckets', body: { name: 'scoped bucket' }, scope: 'bucket:write' },
      { method: 'GET', url: bucket(), scope: 'api:read' },
      { method: 'DELETE', url: '/buckets/zzzzzzzzzzzz', scope: 'bucket:write' },
      { method: 'GET', url: `${bucket()}/tests`, scope: 'api:read' },
      { method: 'POST', url: `${bucket()}/tests`, body: { name: 'x' }, scope: 'test:write' },
      { method: 'GET', url: t, scope: 'api:read' },
      { method: 'PUT', url: t, body: { name: 'Scoped' }, scope: 'test:write' },
      {
        method: 'DELETE',
        url: `${bucket()}/tests/00000000-0000-4000-8000-000000000000`,
        scope: 'test:write',
      },
      { method: 'GET', url: `${t}/export`, scope: 'api:read' },
      { method: 'GET', url: `${t}/revisions`, scope: 'api:read' },
      { method: 'POST', url: `${t}/steps`, body: { step_type: 'pause' }, scope: 'test:write' },
      { method: 'PUT', url: `${t}/steps`, body: [], scope: 'test:write' },
      { method: 'GET', url: `${t}/steps/${created.steps[0].id}`, scope: 'api:read' },
      { method: 'PUT', url: `${t}/steps/${created.steps[0].id}`, body: { note: 'n' }, scope: 'test:write' },
      { method: 'DELETE', url: `${t}/steps/00000000-0000-4000-8000-000000000000`, scope: 'test:write' },
      { method: 'GET', url: `${t}/environments`, scope: 'api:read' },
      { method: 'POST', url: `${t}/environments`, body: { name: 'e' }, scope: 'test:write' },
      { method: 'GET', url: `${t}/environments/${created.default_environment_id}`, scope: 'api:read' },
      {
        method: 'PUT',
        url: `${t}/environments/${created.default_environment_id}`,
        body: { name: 'e' },
        scope: 'test:write',
      },
      {
        method: 'DELETE',
        url: `${t}/environments/00000000-0000-4000-8000-000000000000`,
        scope: 'test:write',
      },
      { method: 'GET', url: `${bucket()}/environments`, scope: 'api:read' },
      { method: 'POST', url: `${bucket()}/environments`, body: { name: 's' }, scope: 'test:write' },
      { method: 'GET', url: `${t}/schedules`, scope: 'api:read' },
      { method: 'POST', url: `${t}/schedules`, body: { interval: '1d' }, scope: 'test:write' },
      { method: 'DELETE', url: `${t}/schedules/00000000-0000-4000-8000-000000000000`, scope: 'test:write' },
    ];
    const tokens = new Map<string, string>();
    for (const scope of SCOPES) tokens.set(scope, await tokenWith([scope]));
    for (const route of routes) {
      for (const scope of SCOPES) {
        const response = await call({
          method: route.method,
          url: route.url,
          body: route.body,
          as: tokens.get(scope)!,
        });
        const label = `${route.method} ${route.url} with ${scope}`;
        if (scope === route.scope) {
          assert.notEqual(response.statusCode, 403, `${label}: ${response.body}`);
          assert.notEqual(response.statusCode, 401, label);
        } else {
          assertErrorEnvelope(response, 403, 'forbidden');
          assert.match(response.json().error.message, new RegExp(route.scope), label);
        }
      }
    }
  });

  test('the e-mail of people shows only with account:email', async () => {
    const { call, tokenWith, data } = get();
    const created = await data('POST', `${bucket()}/tests`, { name: 'Emails' });
    const readOnly = await tokenWith(['api:read']);
    const account = (await call({ method: 'GET', url: '/account', as: readOnly })).json().data;
    assert.equal(account.email, '');
    const detail = (
      await call({ method: 'GET', url: `${bucket()}/tests/${created.id}`, as: readOnly })
    ).json().data;
    assert.equal(detail.created_by.email, '');
    const withEmail = await tokenWith(['api:read', 'account:email']);
    assert.equal(
      (await call({ method: 'GET', url: '/account', as: withEmail })).json().data.email,
      'alice@example.com',
    );
  });

  test('bad JSON is 400 invalid_json; a JSON body without the JSON content type is 415', async () => {
    const { call } = get();
    const url = `${bucket()}/tests`;
    assertErrorEnvelope(await call({ method: 'POST', url, body: '{"name":' }), 400, 'invalid_json');
    assertErrorEnvelope(
      await call({ method: 'POST', url, body: '{"name":"x"}', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    const noType = await get().app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${get().alice.token}` },
      payload: Buffer.from('{"name":"x"}'),
    });
    assertErrorEnvelope(noType as any, 415, 'unsupported_media_type');
    const charset = await call({
      method: 'POST',
      url,
      body: { name: 'utf8' },
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(charset.statusCode, 201);
  });

  test('schema failures are 400 naming the field', async () => {
    const error = assertErrorEnvelope(
      await get().call({ method: 'POST', url: `${bucket()}/tests`, body: { description: 'no name' } }),
      400,
      'validation_failed',
    );
    assert.equal(error.field, '/name');
    assert.match(error.message, /\/name is required/);
    const query = assertErrorEnvelope(
      await get().call({ method: 'GET', url: `${bucket()}/tests?count=abc` }),
      400,
      'validation_failed',
    );
    assert.equal(query.field, '?count');
  });

  test('a body over the limit is 413', async () => {
    const big = JSON.stringify({ name: 'big', description: 'x'.repeat(1_100_000) });
    assertErrorEnvelope(
      await get().call({ method: 'POST', url: `${bucket()}/tests`, body: big }),
      413,
      'payload_too_large',
    );
  });

  test('unknown paths are 404, known paths with another method 405 with Allow', async () => {
    assertErrorEnvelope(await get().call({ method: 'GET', url: '/nothing/here' }), 404, 'not_found');
    const response = await get().call({ method: 'PATCH', url: `${bucket()}/tests` });
    assertErrorEnvelope(response, 405, 'method_not_allowed');
    assert.equal(response.headers.allow, 'GET, POST');
  });

  test('another account’s bucket is 404, not 403', async () => {
    const { call, bob } = get();
    assertErrorEnvelope(
      await call({ method: 'GET', url: `/buckets/${bob.bucketKey}/tests` }),
      404,
      'not_found',
    );
    assertErrorEnvelope(await call({ method: 'GET', url: `/buckets/${bob.bucketKey}` }), 404, 'not_found');
  });

  test('public routes need no token: /health, /openapi.json, /docs, /errors', async () => {
    const { call } = get();
    const health = await call({ method: 'GET', url: '/health', as: null });
    assert.equal(health.statusCode, 200);
    // The runtime beside the status: this Node, and the store's driver (node:sqlite where Node has it).
    const { store, driver, ...rest } = health.json();
    assert.deepEqual(rest, { status: 'ok', node: process.version });
    if (store === 'postgres') assert.equal(driver, 'pg');
    else assert.deepEqual([store, driver], ['sqlite', defaultSqliteDriver()]);
    const openapi = await call({ method: 'GET', url: '/openapi.json', as: null });
    assert.equal(openapi.statusCode, 200);
    const doc = openapi.json();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of [
      '/buckets/{bucket_key}/tests',
      '/buckets/{bucket_key}/tests/{test_id}/steps',
      '/buckets/{bucket_key}/environments',
    ]) {
      assert.ok(doc.paths[path], path);
    }
    const docs = await call({ method: 'GET', url: '/docs', as: null });
    assert.ok([200, 302].includes(docs.statusCode));
    const errors = await call({ method: 'GET', url: '/errors', as: null });
    assert.equal(errors.json().data.limit_reached, 422);
    assert.deepEqual(Object.keys(errors.json().meta.message_codes).sort(), ['51001', '51006', '51109']);
  });
});
