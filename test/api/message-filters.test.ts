import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';

await describeApi('message list filters', (get) => {
  let key = '';
  const ids: Record<string, string> = {};

  test('fixtures', async () => {
    const h = get();
    key = (await h.data('POST', '/buckets', { name: `filters ${randomBytes(4).toString('hex')}` })).key;
    const items: [string, unknown][] = [
      [
        'getItems',
        {
          request: { method: 'GET', url: 'https://API.example.com/items?q=Blue', timestamp: 1 },
          response: { status: 200 },
        },
      ],
      [
        'postItems',
        {
          request: { method: 'post', url: 'https://api.example.com/items/new', timestamp: 2 },
          response: { status: 201 },
        },
      ],
      [
        'notFound',
        {
          request: { method: 'GET', url: 'https://api.example.com/Items/9', timestamp: 3 },
          response: { status: 404 },
        },
      ],
      [
        'noResponse',
        { request: { method: 'DELETE', url: 'http://other.example.org:8080/a_b%25c', timestamp: 4 } },
      ],
      [
        'serverError',
        {
          request: { method: 'PUT', url: 'https://other.example.org/items', timestamp: 5 },
          response: { status: 503 },
        },
      ],
      ['responseOnly', { response: { status: 500, timestamp: 6 } }],
    ];
    for (const [name, item] of items) {
      const [result] = await h.data('POST', `/buckets/${key}/messages`, item);
      assert.ok(result.uuid, JSON.stringify(result));
      ids[result.uuid] = name;
    }
  });

  const names = async (view: string, query: string) => {
    const list = await get().data('GET', `/buckets/${key}/${view}?${query}`);
    return (list as any[]).map((m) => ids[m.uuid]);
  };

  test('each filter, alone and together, on every list', async () => {
    assert.deepEqual(await names('messages', 'method=get'), ['notFound', 'getItems']);
    assert.deepEqual(await names('messages', 'method=POST'), ['postItems']);
    assert.deepEqual(await names('messages', 'host=OTHER.example.org:8080'), ['noResponse']);
    assert.deepEqual(await names('messages', 'host=api.example.com'), ['notFound', 'postItems', 'getItems']);
    assert.deepEqual(await names('messages', 'path=/items'), ['serverError', 'postItems', 'getItems']);
    assert.deepEqual(await names('messages', 'path=/items/'), ['postItems']);
    assert.deepEqual(await names('messages', 'status=2xx'), ['postItems', 'getItems']);
    assert.deepEqual(await names('messages', 'status=5XX'), ['responseOnly', 'serverError']);
    assert.deepEqual(await names('messages', 'status=404'), ['notFound']);
    assert.deepEqual(await names('messages', 'status=none'), ['noResponse']);
    assert.deepEqual(await names('messages', 'q=blue'), ['getItems']);
    assert.deepEqual(await names('messages', 'q=ITEMS'), [
      'serverError',
      'notFound',
      'postItems',
      'getItems',
    ]);
    assert.deepEqual(await names('messages', 'q=a_b'), ['noResponse']);
    assert.deepEqual(await names('messages', 'q=%25'), ['noResponse']);
    assert.deepEqual(await names('messages', 'q=_'), ['noResponse']);
    assert.deepEqual(await names('messages', 'q=https'), []);
    assert.deepEqual(await names('messages', 'method=GET&status=4xx'), ['notFound']);
    assert.deepEqual(await names('messages', 'method=GET&count=1'), ['notFound']);
    assert.deepEqual(await names('messages', 'method=GET&before=3'), ['getItems']);
    assert.deepEqual(await names('errors', 'host=other.example.org'), ['serverError']);
    assert.deepEqual(await names('errors', 'status=none'), ['noResponse']);
    assert.deepEqual(await names('captures', 'method=GET'), []);
    const h = get();
    const shareable = Object.keys(ids).find((id) => ids[id] === 'postItems')!;
    await h.data('PUT', `/buckets/${key}/shared/${shareable}`);
    assert.deepEqual(await names('shared', 'status=201'), ['postItems']);
    assert.deepEqual(await names('shared', 'status=200'), []);
  });

  test('HAR export takes the same filters', async () => {
    const response = await get().call({
      method: 'GET',
      url: `/buckets/${key}/messages.har?method=get&path=/items`,
    });
    assert.equal(response.statusCode, 200, response.body);
    const har = JSON.parse(response.body);
    assert.deepEqual(
      har.log.entries.map((e: any) => e.request.url),
      ['https://API.example.com/items?q=Blue'],
    );
  });

  test('a bad filter is a 400 naming it', async () => {
    const h = get();
    for (const view of ['messages', 'errors', 'shared', 'captures', 'messages.har']) {
      const url = `/buckets/${key}/${view}`;
      await h.expectError({ method: 'GET', url: `${url}?status=6xx` }, 400, 'validation_failed', '?status');
      await h.expectError({ method: 'GET', url: `${url}?status=99` }, 400, 'validation_failed', '?status');
      await h.expectError({ method: 'GET', url: `${url}?status=600` }, 400, 'validation_failed', '?status');
      await h.expectError({ method: 'GET', url: `${url}?status=` }, 400, 'validation_failed', '?status');
      await h.expectError({ method: 'GET', url: `${url}?method=G%20T` }, 400, 'validation_failed', '?method');
      await h.expectError({ method: 'GET', url: `${url}?path=items` }, 400, 'validation_failed', '?path');
      await h.expectError({ method: 'GET', url: `${url}?host=a/b` }, 400, 'validation_failed', '?host');
      await h.expectError({ method: 'GET', url: `${url}?q=` }, 400, 'validation_failed', '?q');
      await h.expectError(
        { method: 'GET', url: `${url}?q=${'x'.repeat(501)}` },
        400,
        'validation_failed',
        '?q',
      );
      await h.expectError({ method: 'GET', url: `${url}?q=a%00b` }, 400, 'validation_failed', '?q');
    }
    await h.expectError(
      { method: 'GET', url: `/buckets/${h.bob.bucketKey}/messages?method=GET` },
      404,
      'not_found',
    );
  });
});
