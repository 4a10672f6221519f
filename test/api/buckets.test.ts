import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';

await describeApi('account and buckets', (get) => {
  test('GET /account shows the account and its team', async () => {
    const account = await get().data('GET', '/account');
    assert.equal(account.id, get().alice.accountId);
    assert.equal(account.uuid, account.id);
    assert.equal(account.name, 'Alice');
    assert.equal(account.email, 'alice@example.com');
    assert.equal(typeof account.created_at, 'number');
    assert.equal(account.teams.length, 1);
    assert.deepEqual(Object.keys(account.teams[0]).sort(), ['id', 'name', 'uuid']);
  });

  test('the default bucket is listed with every field', async () => {
    const buckets = await get().data('GET', '/buckets');
    assert.equal(buckets.length, 1);
    const [bucket] = buckets;
    assert.equal(bucket.key, get().alice.bucketKey);
    assert.match(bucket.key, /^[a-z0-9]{12}$/);
    assert.equal(bucket.default, true);
    assert.equal(bucket.verify_ssl, true);
    assert.match(bucket.trigger_url, /^http:\/\/vigil\.test\/radar\/bucket\/[A-Za-z0-9_-]+\/trigger$/);
    assert.equal(bucket.tests_url, `http://vigil.test/buckets/${bucket.key}/tests`);
    assert.equal(bucket.messages_url, `http://vigil.test/buckets/${bucket.key}/messages`);
    assert.equal(bucket.capture_url, `http://traffic.vigil.test/capture/${bucket.key}`);
    assert.equal(bucket.gateway_url, `http://traffic.vigil.test/gateway/${bucket.key}`);
    assert.equal(bucket.gateway_domain, null);
    assert.equal(bucket.auth_token, null);
    assert.deepEqual(Object.keys(bucket.team).sort(), ['id', 'name']);
    assert.equal(typeof bucket.created_at, 'number');
  });

  test('POST /buckets creates from JSON or ?name=, DELETE removes it with its tests', async () => {
    const { data, call } = get();
    const fromJson = await data('POST', '/buckets', { name: 'Staging checks' });
    assert.equal(fromJson.name, 'Staging checks');
    assert.equal(fromJson.default, false);
    const fromQuery = await call({ method: 'POST', url: '/buckets?name=From%20query' });
    assert.equal(fromQuery.statusCode, 201, fromQuery.body);
    assert.equal(fromQuery.json().data.name, 'From query');
    assert.equal((await call({ method: 'POST', url: '/buckets' })).statusCode, 400);

    await data('POST', `/buckets/${fromJson.key}/tests`, { name: 'inside' });
    assert.equal((await data('GET', `/buckets/${fromJson.key}`)).key, fromJson.key);
    const deleted = await call({ method: 'DELETE', url: `/buckets/${fromJson.key}` });
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    assert.equal((await call({ method: 'GET', url: `/buckets/${fromJson.key}` })).statusCode, 404);
    const left = await get()
      .store.db.selectFrom('tests')
      .select('id')
      .where('bucket_key', '=', fromJson.key)
      .execute();
    assert.equal(left.length, 0);
  });

  test('the default bucket cannot be deleted (409)', async () => {
    const response = await get().call({ method: 'DELETE', url: `/buckets/${get().alice.bucketKey}` });
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().error.code, 'conflict');
  });

  test('team_uuid must be a team of the account', async () => {
    const response = await get().call({
      method: 'POST',
      url: '/buckets',
      body: { name: 'x', team_uuid: '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error.field, '/team_uuid');
  });

  test('buckets of other accounts are neither listed nor reachable', async () => {
    const { data, call, bob } = get();
    const keys = (await data('GET', '/buckets')).map((b: any) => b.key);
    assert.ok(!keys.includes(bob.bucketKey));
    assert.equal((await call({ method: 'DELETE', url: `/buckets/${bob.bucketKey}` })).statusCode, 404);
  });

  test('PUT /buckets/<key> changes name, verify_ssl and retention_days, with bucket:write', async () => {
    const { data, call, expectError, tokenWith, alice, bob } = get();
    const key = (await data('POST', '/buckets', { name: 'Settings' })).key;
    assert.equal((await data('GET', `/buckets/${key}`)).retention_days, 30);
    const changed = await data('PUT', `/buckets/${key}`, {
      name: 'Renamed',
      verify_ssl: false,
      retention_days: 7,
    });
    assert.equal(changed.name, 'Renamed');
    assert.equal(changed.verify_ssl, false);
    assert.equal(changed.retention_days, 7);
    assert.deepEqual(await data('GET', `/buckets/${key}`), changed);
    await expectError(
      { method: 'PUT', url: `/buckets/${key}`, body: { retention_days: 0 } },
      400,
      'validation_failed',
      '/retention_days',
    );
    await expectError(
      { method: 'PUT', url: `/buckets/${key}`, body: { name: '' } },
      400,
      'validation_failed',
      '/name',
    );
    const reader = await tokenWith(['api:read', 'test:write']);
    assert.equal(
      (await call({ method: 'PUT', url: `/buckets/${key}`, body: { name: 'x' }, as: reader })).statusCode,
      403,
    );
    assert.equal(
      (await call({ method: 'PUT', url: `/buckets/${bob.bucketKey}`, body: { name: 'x' }, as: alice }))
        .statusCode,
      404,
    );
  });
});
