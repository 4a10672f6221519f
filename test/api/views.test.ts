import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';

await describeApi('saved stream views', (get) => {
  let b = '';

  test('create, list, read, replace and delete', async () => {
    const h = get();
    b = `/buckets/${(await h.data('POST', '/buckets', { name: 'Views' })).key}/views`;
    assert.deepEqual(await h.data('GET', b), []);
    const view = await h.data('POST', b, {
      name: '  Errors of the API  ',
      stream: 'errors',
      filters: {
        method: 'get',
        host: 'api.example.com',
        path: '/items',
        status: '5xx',
        q: 'blue',
        window: '24h',
      },
      id: 'ignored',
    });
    assert.match(view.id, /^[0-9a-f-]{36}$/);
    assert.equal(view.name, 'Errors of the API');
    assert.equal(view.stream, 'errors');
    assert.deepEqual(view.filters, {
      method: 'get',
      host: 'api.example.com',
      path: '/items',
      status: '5xx',
      q: 'blue',
      window: '24h',
    });
    assert.equal(view.bucket_key, b.split('/')[2]);
    assert.deepEqual(view.created_by, { id: h.alice.accountId, name: 'Alice', email: 'alice@example.com' });
    assert.equal(typeof view.created_at, 'number');
    assert.equal(view.updated_at, view.created_at);
    assert.deepEqual(await h.data('GET', b), [view]);
    assert.deepEqual(await h.data('GET', `${b}/${view.id}`), view);

    const readOnly = await h.tokenWith(['api:read']);
    const seen = (await h.call({ method: 'GET', url: `${b}/${view.id}`, as: readOnly })).json().data;
    assert.equal(seen.created_by.email, '', 'e-mail only with account:email');

    const replaced = await h.data('PUT', `${b}/${view.id}`, {
      name: 'errors of the api',
      stream: 'captures',
    });
    assert.equal(replaced.name, 'errors of the api', 'its own name in another case is no conflict');
    assert.equal(replaced.stream, 'captures');
    assert.deepEqual(replaced.filters, {});
    assert.ok(replaced.updated_at >= view.updated_at);
    assert.equal(replaced.created_at, view.created_at);

    const other = await h.data('POST', b, { name: 'Other', stream: 'messages' });
    await h.expectError(
      { method: 'POST', url: b, body: { name: 'OTHER ', stream: 'shared' } },
      409,
      'conflict',
      '/name',
    );
    await h.expectError(
      { method: 'PUT', url: `${b}/${other.id}`, body: { name: 'Errors of the API', stream: 'shared' } },
      409,
      'conflict',
      '/name',
    );
    const deleted = await h.call({ method: 'DELETE', url: `${b}/${other.id}` });
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    await h.expectError({ method: 'GET', url: `${b}/${other.id}` }, 404, 'not_found');
    await h.expectError({ method: 'DELETE', url: `${b}/${other.id}` }, 404, 'not_found');
    await h.expectError({ method: 'GET', url: `${b}/not-a-uuid` }, 404, 'not_found');
  });

  test('each field is validated and named', async () => {
    const h = get();
    const post = (body: unknown) => ({ method: 'POST' as const, url: b, body });
    await h.expectError(post({ stream: 'messages' }), 400, 'validation_failed', '/name');
    await h.expectError(post({ name: '', stream: 'messages' }), 400, 'validation_failed', '/name');
    await h.expectError(post({ name: '   ', stream: 'messages' }), 400, 'validation_failed', '/name');
    await h.expectError(
      post({ name: 'x'.repeat(101), stream: 'messages' }),
      400,
      'validation_failed',
      '/name',
    );
    await h.expectError(post({ name: 'n', stream: 'everything' }), 400, 'validation_failed', '/stream');
    await h.expectError(post({ name: 'n' }), 400, 'validation_failed', '/stream');
    await h.expectError(
      post({ name: 'n', stream: 'errors', filters: [] }),
      400,
      'validation_failed',
      '/filters',
    );
    const bad: [string, unknown][] = [
      ['status', '6xx'],
      ['status', 7],
      ['method', 'G T'],
      ['path', 'items'],
      ['host', 'a b'],
      ['q', ''],
      ['window', '2h'],
    ];
    for (const [name, value] of bad) {
      await h.expectError(
        post({ name: 'n', stream: 'errors', filters: { [name]: value } }),
        400,
        'validation_failed',
        `/filters/${name}`,
      );
    }
  });

  test('at most 100 views per bucket', async () => {
    const h = get();
    const bucket = `/buckets/${(await h.data('POST', '/buckets', { name: 'Full' })).key}/views`;
    for (let i = 0; i < 100; i++) await h.data('POST', bucket, { name: `View ${i}`, stream: 'messages' });
    await h.expectError(
      { method: 'POST', url: bucket, body: { name: 'One more', stream: 'messages' } },
      422,
      'limit_reached',
    );
    assert.equal((await h.data('GET', bucket)).length, 100);
  });

  test("another account's bucket is 404 and scopes are checked", async () => {
    const h = get();
    const [view] = await h.data('GET', b);
    const foreign = `/buckets/${h.bob.bucketKey}/views`;
    await h.expectError({ method: 'GET', url: foreign }, 404, 'not_found');
    await h.expectError(
      { method: 'POST', url: foreign, body: { name: 'x', stream: 'messages' } },
      404,
      'not_found',
    );
    await h.expectError({ method: 'GET', url: `${b}/${view.id}`, as: h.bob }, 404, 'not_found');
    await h.expectError({ method: 'DELETE', url: `${b}/${view.id}`, as: h.bob }, 404, 'not_found');
    const readOnly = await h.tokenWith(['api:read']);
    await h.expectError(
      { method: 'POST', url: b, as: readOnly, body: { name: 'x', stream: 'messages' } },
      403,
      'forbidden',
    );
    await h.expectError(
      { method: 'PUT', url: `${b}/${view.id}`, as: readOnly, body: { name: 'x', stream: 'messages' } },
      403,
      'forbidden',
    );
    await h.expectError({ method: 'DELETE', url: `${b}/${view.id}`, as: readOnly }, 403, 'forbidden');
    const writeOnly = await h.tokenWith(['message:write']);
    await h.expectError({ method: 'GET', url: b, as: writeOnly }, 403, 'forbidden');
  });
});
