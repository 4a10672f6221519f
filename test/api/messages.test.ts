import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { NewMessage } from '../../src/domain/messages.js';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

const exchange = (extra: { request?: Record<string, unknown>; response?: Record<string, unknown> } = {}) => ({
  request: { method: 'GET', url: 'https://api.example.com/items', ...extra.request },
  response: { status: 200, ...extra.response },
});

/** An exchange whose lists position is fixed by its request timestamp. */
const at = (timestamp: number, status = 200) =>
  exchange({ request: { timestamp, url: `https://api.example.com/at/${timestamp}` }, response: { status } });

const recorded = (source: NewMessage['source'], path: string, timestamp: number): NewMessage => ({
  source,
  unique_identifier: null,
  note: null,
  request: {
    method: 'GET',
    url: `https://api.example.com${path}`,
    scheme: 'https',
    host: 'api.example.com',
    path,
    params: {},
    headers: {},
    form: null,
    timestamp,
    body: '',
    body_encoding: 'plaintext',
    size_bytes: 0,
  },
  response: null,
});

await describeApi('messages', (get) => {
  /** A fresh bucket of alice's per test, so that lists hold only what the test put there. */
  async function bucket(): Promise<string> {
    const created = await get().data('POST', '/buckets', {
      name: `messages ${randomBytes(4).toString('hex')}`,
    });
    return created.key;
  }
  const messagesOf = (key: string) => `/buckets/${key}/messages`;

  async function post(key: string, body: unknown) {
    const response = await get().call({ method: 'POST', url: messagesOf(key), body });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as {
      data: {
        status: string;
        uuid?: string;
        unique_identifier?: string;
        warning?: { code: number; message: string; more_info: string };
        error?: { code: number; message: string; more_info: string };
      }[];
      meta: Record<string, unknown>;
      error: null;
    };
  }

  async function list(key: string, view = 'messages', query = '') {
    return get().data('GET', `/buckets/${key}/${view}${query}`) as Promise<any[]>;
  }

  const detail = (key: string, uuid: string) => get().data('GET', `${messagesOf(key)}/${uuid}`);

  // Creation

  test('one object answers an array of one result', async () => {
    const key = await bucket();
    const body = await post(key, exchange());
    assert.equal(body.error, null);
    assert.equal(body.data.length, 1);
    assert.equal(body.data[0]!.status, 'success');
    assert.match(body.data[0]!.uuid!, /^[0-9a-f-]{36}$/);
    assert.equal('warning' in body.data[0]!, false);
    assert.equal('error' in body.data[0]!, false);
    assert.deepEqual(body.meta, { status: 'success', success_count: 1, warning_count: 0, error_count: 0 });
    assert.equal((await detail(key, body.data[0]!.uuid!)).uuid, body.data[0]!.uuid);
  });

  test('an array of 50 answers one result per item, in the order submitted', async () => {
    const key = await bucket();
    const items = Array.from({ length: 50 }, (_, i) => ({
      unique_identifier: `item-${i}`,
      ...exchange({ request: { url: `https://api.example.com/n/${i}` } }),
    }));
    const body = await post(key, items);
    assert.equal(body.data.length, 50);
    assert.deepEqual(
      body.data.map((r) => r.unique_identifier),
      items.map((i) => i.unique_identifier),
    );
    assert.deepEqual(body.meta, { status: 'success', success_count: 50, warning_count: 0, error_count: 0 });
    for (const [i, result] of body.data.entries()) {
      assert.equal((await detail(key, result.uuid!)).request.path, `/n/${i}`);
    }
  });

  test('lone surrogates in bodies and headers: the batch is saved, bodies as well-formed text', async () => {
    const key = await bucket();
    const odd = exchange({
      request: { body: 'a\ud800b', headers: { 'X-Odd': 'x\udfff' } },
      response: { body: '\udc00' },
    });
    const body = await post(key, [exchange(), odd, exchange()]);
    assert.deepEqual(
      body.data.map((r) => r.status),
      ['success', 'success', 'success'],
    );
    const stored = await detail(key, body.data[1]!.uuid!);
    const wellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed();
    // Each store puts U+FFFD where the surrogate was (SQLite one per byte of it, PostgreSQL one).
    assert.match(stored.request.body, /^a\ufffd+b$/);
    assert.match(stored.response.body, /^\ufffd+$/);
    assert.ok(wellFormed(stored.request.body) && wellFormed(stored.response.body));
    // Headers are kept in the message's JSON metadata, escapes and all.
    assert.deepEqual(stored.request.headers['X-Odd'], ['x\udfff']);
  });

  test('51 items are refused with 422 limit_reached and none is saved', async () => {
    const key = await bucket();
    const items = Array.from({ length: 51 }, () => exchange());
    const error = await get().expectError(
      { method: 'POST', url: messagesOf(key), body: items },
      422,
      'limit_reached',
    );
    assert.match(error.message, /50/);
    assert.deepEqual(await list(key), []);
    assert.equal((await get().data('GET', `/buckets/${key}/usage`)).messages_received, 0);
  });

  test('an item with neither request nor response fails with 51006; the others are saved', async () => {
    const key = await bucket();
    const body = await post(key, [exchange(), { unique_identifier: 'empty' }, exchange()]);
    assert.deepEqual(
      body.data.map((r) => r.status),
      ['success', 'error', 'success'],
    );
    const failed = body.data[1]!;
    assert.equal(failed.error!.code, 51006);
    assert.equal(failed.unique_identifier, 'empty');
    assert.equal(failed.uuid, undefined);
    assert.match(failed.error!.message, /neither a request nor a response/);
    assert.equal(typeof failed.error!.more_info, 'string');
    assert.ok(failed.error!.more_info.startsWith(PUBLIC_URL), failed.error!.more_info);
    assert.deepEqual(body.meta, { status: 'success', success_count: 2, warning_count: 0, error_count: 1 });
    assert.equal((await list(key)).length, 2);
  });

  test('unexpected fields give warning 51109 naming every one, and the item is saved', async () => {
    const key = await bucket();
    const body = await post(key, [
      {
        extra_top: 1,
        request: { method: 'GET', url: 'https://api.example.com/', cookies: 'a=b' },
        response: { status: 200, elapsed: 3, httpVersion: '1.1' },
      },
      exchange(),
    ]);
    const [warned, clean] = body.data;
    assert.equal(warned!.status, 'warning');
    assert.equal(warned!.warning!.code, 51109);
    for (const field of ['extra_top', 'request.cookies', 'response.elapsed', 'response.httpVersion']) {
      assert.ok(warned!.warning!.message.includes(field), `${field} named: ${warned!.warning!.message}`);
    }
    assert.equal(typeof warned!.warning!.more_info, 'string');
    assert.equal('error' in warned!, false);
    assert.equal(clean!.status, 'success');
    assert.deepEqual(body.meta, { status: 'success', success_count: 2, warning_count: 1, error_count: 0 });
    const saved = await detail(key, warned!.uuid!);
    assert.equal(saved.request.path, '/');
    assert.equal('cookies' in saved.request, false);
    assert.equal('elapsed' in saved.response, false);
  });

  test('wrongly typed fields fail their item with 51001 naming the field; never a 5xx, the rest saved', async () => {
    const key = await bucket();
    const cases: [unknown, string][] = [
      [exchange({ request: { method: 42 } }), 'request.method'],
      [exchange({ request: { method: 'GET POST' } }), 'request.method'],
      [exchange({ request: { url: 42 } }), 'request.url'],
      [exchange({ request: { url: '/relative/path' } }), 'request.url'],
      [exchange({ request: { url: 'ftp://files.example.com/a' } }), 'request.url'],
      [exchange({ request: { headers: { 'X-Count': 3 } } }), 'request.headers.X-Count'],
      [exchange({ request: { headers: 'Accept: */*' } }), 'request.headers'],
      [exchange({ request: { form: { a: [1] } } }), 'request.form.a'],
      [exchange({ request: { timestamp: '1700000000' } }), 'request.timestamp'],
      [exchange({ request: { body: 'not base64!', body_encoding: 'base64' } }), 'request.body'],
      [exchange({ request: { body_encoding: 'gzip' } }), 'request.body_encoding'],
      [exchange({ request: { body: { a: 1 } } }), 'request.body'],
      [exchange({ response: { status: '200' } }), 'response.status'],
      [exchange({ response: { status: 200.5 } }), 'response.status'],
      [exchange({ response: { status: 99 } }), 'response.status'],
      [exchange({ response: { status: 1000 } }), 'response.status'],
      [exchange({ response: { reason: 404 } }), 'response.reason'],
      [exchange({ response: { response_time: 'fast' } }), 'response.response_time'],
      [exchange({ response: { timestamp: -1 } }), 'response.timestamp'],
      [exchange({ response: { headers: { Vary: ['Accept', 1] } } }), 'response.headers.Vary'],
      [exchange({ response: { body: '%%%', body_encoding: 'base64' } }), 'response.body'],
      [{ request: 'GET /' }, 'request'],
      [{ response: [200] }, 'response'],
      [{ unique_identifier: 7, ...exchange() }, 'unique_identifier'],
    ];
    const body = await post(key, [exchange(), ...cases.map(([item]) => item), exchange()]);
    assert.equal(body.data.length, cases.length + 2);
    assert.equal(body.data[0]!.status, 'success');
    assert.equal(body.data.at(-1)!.status, 'success');
    for (const [i, [, field]] of cases.entries()) {
      const result = body.data[i + 1]!;
      assert.equal(result.status, 'error', `case ${i} (${field}): ${JSON.stringify(result)}`);
      assert.equal(result.error!.code, 51001);
      assert.ok(result.error!.message.includes(field), `case ${i} names ${field}: ${result.error!.message}`);
      assert.equal(result.uuid, undefined);
    }
    assert.deepEqual(body.meta, {
      status: 'success',
      success_count: 2,
      warning_count: 0,
      error_count: cases.length,
    });
    assert.equal((await list(key)).length, 2);
  });

  test('an array entry that is not an object fails alone (51001); a body that is neither is a 400', async () => {
    const key = await bucket();
    const mixed = await post(key, [exchange(), 42, [exchange()], exchange()]);
    assert.deepEqual(
      mixed.data.map((r: { status: string }) => r.status),
      ['success', 'error', 'error', 'success'],
    );
    assert.equal(mixed.data[1]?.error?.code, 51001);
    assert.equal(mixed.meta.error_count, 2);
    assert.equal((await list(key)).length, 2);
    for (const body of ['"text"', '42']) {
      const error = await get().expectError(
        { method: 'POST', url: messagesOf(key), body },
        400,
        'validation_failed',
      );
      assert.equal(error.field, '/', error.message);
    }
    assert.equal((await list(key)).length, 2);
    const empty = await post(key, []);
    assert.deepEqual(empty.data, []);
    assert.deepEqual(empty.meta, { status: 'success', success_count: 0, warning_count: 0, error_count: 0 });
  });

  test('a call is one transaction: a refused call leaves nothing behind, and usage counts saved items only', async () => {
    const key = await bucket();
    await get().expectError(
      {
        method: 'POST',
        url: messagesOf(key),
        body: [...Array.from({ length: 50 }, () => exchange()), { request: 'x' }],
      },
      422,
      'limit_reached',
    );
    assert.deepEqual(await list(key), []);
    await post(key, [exchange(), {}, exchange({ response: { status: 'x' } })]);
    assert.equal((await list(key)).length, 1);
    assert.equal((await get().data('GET', `/buckets/${key}/usage`)).messages_received, 1);
  });

  // Normalisation

  test('the url is split into scheme, host, path and params, repeated names kept in order', async () => {
    const key = await bucket();
    const url = 'https://api.example.com:8443/v1/items?a=1&b=2&a=3&empty=&q=hello%20world';
    const [result] = (await post(key, exchange({ request: { url, method: 'post' } }))).data;
    const { request } = await detail(key, result!.uuid!);
    assert.equal(request.url, url);
    assert.equal(request.method, 'POST');
    assert.equal(request.scheme, 'https');
    assert.equal(request.host, 'api.example.com:8443');
    assert.equal(request.path, '/v1/items');
    assert.deepEqual(request.params, { a: ['1', '3'], b: ['2'], empty: [''], q: ['hello world'] });
  });

  test('header values given as strings become arrays; arrays and form fields are kept', async () => {
    const key = await bucket();
    const [result] = (
      await post(
        key,
        exchange({
          request: {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: ['a/b', 'c/d'] },
            form: { name: 'Ada', tags: ['x', 'y'] },
            body: 'name=Ada&tags=x&tags=y',
          },
          response: { headers: { 'Set-Cookie': ['a=1', 'b=2'], Server: 'test' } },
        }),
      )
    ).data;
    const message = await detail(key, result!.uuid!);
    assert.deepEqual(message.request.headers, {
      'Content-Type': ['application/x-www-form-urlencoded'],
      Accept: ['a/b', 'c/d'],
    });
    assert.deepEqual(message.request.form, { name: ['Ada'], tags: ['x', 'y'] });
    assert.deepEqual(message.response.headers, { 'Set-Cookie': ['a=1', 'b=2'], Server: ['test'] });
    const [plain] = (await post(key, exchange())).data;
    const other = await detail(key, plain!.uuid!);
    assert.equal(other.request.form, null);
    assert.deepEqual(other.request.headers, {});
  });

  test('reason comes from the status unless given', async () => {
    const key = await bucket();
    const body = await post(key, [
      exchange({ response: { status: 404 } }),
      exchange({ response: { status: 201 } }),
      exchange({ response: { status: 404, reason: 'Nope' } }),
      exchange({ response: { status: 299 } }),
    ]);
    const reasons = [];
    for (const r of body.data) reasons.push((await detail(key, r.uuid!)).response.reason);
    assert.deepEqual(reasons, ['Not Found', 'Created', 'Nope', '']);
  });

  test('plaintext bodies come back byte for byte, unicode and CRLF included', async () => {
    const key = await bucket();
    const text = 'héllo wörld ✓ 日本語 🚀\r\nsecond line\r\n\ttabbed \u00e9 \\u0000 \\n';
    const [result] = (
      await post(key, exchange({ request: { method: 'PUT', body: text }, response: { body: `${text}!` } }))
    ).data;
    const message = await detail(key, result!.uuid!);
    assert.equal(message.request.body, text);
    assert.equal(message.request.body_encoding, 'plaintext');
    assert.equal(message.request.size_bytes, Buffer.byteLength(text, 'utf8'));
    assert.equal(message.response.body, `${text}!`);
    assert.equal(message.response.size_bytes, Buffer.byteLength(text, 'utf8') + 1);
  });

  test('base64 bodies of random bytes come back identical, with body_encoding base64 and the decoded size', async () => {
    const key = await bucket();
    const bytes = randomBytes(1021);
    const encoded = bytes.toString('base64');
    const [result] = (
      await post(
        key,
        exchange({
          request: { method: 'POST', body: encoded, body_encoding: 'base64' },
          response: { body: bytes.subarray(0, 7).toString('base64'), body_encoding: 'base64' },
        }),
      )
    ).data;
    const message = await detail(key, result!.uuid!);
    assert.equal(message.request.body_encoding, 'base64');
    assert.deepEqual(Buffer.from(message.request.body, 'base64'), bytes);
    assert.equal(message.request.size_bytes, 1021);
    assert.equal(message.response.body_encoding, 'base64');
    assert.deepEqual(Buffer.from(message.response.body, 'base64'), bytes.subarray(0, 7));
    assert.equal(message.response.size_bytes, 7);
  });

  test('timestamps and response_time are kept to the microsecond; missing timestamps are the receive time', async () => {
    const key = await bucket();
    const body = await post(key, [
      exchange({
        request: { timestamp: 1700000000.123456 },
        response: { timestamp: 1700000000.654321, response_time: 0.530865 },
      }),
      exchange(),
    ]);
    const exact = await detail(key, body.data[0]!.uuid!);
    assert.equal(exact.request.timestamp, 1700000000.123456);
    assert.equal(exact.response.timestamp, 1700000000.654321);
    assert.equal(exact.response.response_time, 0.530865);
    assert.equal(exact.timestamp, 1700000000.123456);
    const now = Date.now() / 1000;
    const defaulted = await detail(key, body.data[1]!.uuid!);
    assert.ok(Math.abs(defaulted.request.timestamp - now) < 30, `${defaulted.request.timestamp} vs ${now}`);
    assert.ok(Math.abs(defaulted.response.timestamp - now) < 30);
    assert.ok(Math.abs(defaulted.received_at - now) < 30);
    assert.equal(defaulted.response.response_time, null);
  });

  // unique_identifier

  test('a request and its response sent apart with one unique_identifier become one message', async () => {
    const key = await bucket();
    const request = { method: 'POST', url: 'https://api.example.com/pair', body: 'ping' };
    const response = { status: 202, body: 'pong' };
    const first = await post(key, { unique_identifier: 'pair-1', request });
    const second = await post(key, { unique_identifier: 'pair-1', response });
    assert.equal(first.data[0]!.status, 'success');
    assert.equal(second.data[0]!.status, 'success');
    assert.equal(first.data[0]!.unique_identifier, 'pair-1');
    assert.equal(second.data[0]!.uuid, first.data[0]!.uuid);
    const message = await detail(key, first.data[0]!.uuid!);
    assert.equal(message.unique_identifier, 'pair-1');
    assert.equal(message.request.body, 'ping');
    assert.equal(message.response.status, 202);
    assert.equal(message.response.body, 'pong');
    assert.equal((await list(key)).length, 1);
  });

  test('the response may come first and the request complete it', async () => {
    const key = await bucket();
    const first = await post(key, { unique_identifier: 'pair-2', response: { status: 500, body: 'boom' } });
    assert.equal((await list(key, 'errors')).length, 1);
    const second = await post(key, {
      unique_identifier: 'pair-2',
      request: { method: 'DELETE', url: 'https://api.example.com/x', body: 'bye' },
    });
    assert.equal(second.data[0]!.uuid, first.data[0]!.uuid);
    const message = await detail(key, first.data[0]!.uuid!);
    assert.equal(message.request.method, 'DELETE');
    assert.equal(message.request.body, 'bye');
    assert.equal(message.response.body, 'boom');
    assert.equal((await list(key)).length, 1);
  });

  // Reading

  test('lists are newest first, default to 50 and take count', async () => {
    const key = await bucket();
    await post(
      key,
      Array.from({ length: 50 }, (_, i) => at(1_000 + i)),
    );
    await post(
      key,
      Array.from({ length: 5 }, (_, i) => at(2_000 + i)),
    );
    const page = await list(key);
    assert.equal(page.length, 50);
    const times = page.map((m) => m.timestamp);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    );
    assert.equal(times[0], 2_004);
    assert.deepEqual(
      (await list(key, 'messages', '?count=3')).map((m) => m.timestamp),
      [2_004, 2_003, 2_002],
    );
    assert.equal((await list(key, 'messages', '?count=1000')).length, 55);
  });

  test('count above 1000 is capped, not refused', async () => {
    const key = await bucket();
    await get().server.services.messages.recordMany(
      key,
      Array.from({ length: 1001 }, (_, i) => recorded('api', `/bulk/${i}`, 5_000 + i)),
    );
    const page = await list(key, 'messages', '?count=5000');
    assert.equal(page.length, 1000);
    assert.equal(page[0].timestamp, 6_000);
    assert.equal(page.at(-1).timestamp, 5_001);
    await get().expectError({ method: 'GET', url: `${messagesOf(key)}?count=0` }, 400, 'validation_failed');
  });

  test('since and before bound the list by timestamp', async () => {
    const key = await bucket();
    await post(key, [at(1_000), at(2_000), at(3_000), at(4_000)]);
    const times = async (query: string) => (await list(key, 'messages', query)).map((m) => m.timestamp);
    assert.deepEqual(await times('?since=1500'), [4_000, 3_000, 2_000]);
    assert.deepEqual(await times('?before=3000'), [2_000, 1_000]);
    assert.deepEqual(await times('?since=1000&before=4000'), [3_000, 2_000]);
    assert.deepEqual(await times('?since=1500&before=3500&count=1'), [3_000]);
    assert.deepEqual(await times('?since=2999.5'), [4_000, 3_000]);
  });

  test('list items carry no bodies; the detail does', async () => {
    const key = await bucket();
    const [result] = (
      await post(
        key,
        exchange({ request: { method: 'POST', body: 'secret-in' }, response: { body: 'secret-out' } }),
      )
    ).data;
    const response = await get().call({ method: 'GET', url: messagesOf(key) });
    assert.equal(response.statusCode, 200);
    assert.ok(!response.body.includes('secret-in'));
    assert.ok(!response.body.includes('secret-out'));
    const [item] = response.json().data;
    assert.equal(item.uuid, result!.uuid);
    assert.equal('body' in item.request, false);
    assert.equal('body' in item.response, false);
    assert.equal(item.request.size_bytes, 9);
    assert.equal(item.response.body_encoding, 'plaintext');
    assert.equal(item.bucket_key, key);
    const message = await detail(key, result!.uuid!);
    assert.equal(message.request.body, 'secret-in');
    assert.equal(message.response.body, 'secret-out');
  });

  test('the errors view holds status 400 and above and exchanges without a response', async () => {
    const key = await bucket();
    const body = await post(key, [
      at(1, 200),
      at(2, 399),
      at(3, 400),
      at(4, 503),
      { request: { method: 'GET', url: 'https://api.example.com/lost', timestamp: 5 } },
      { response: { status: 302, timestamp: 6 } },
      { response: { status: 404, timestamp: 7 } },
    ]);
    const errors = await list(key, 'errors');
    const uuids = body.data.map((r) => r.uuid);
    assert.deepEqual(
      errors.map((m) => m.uuid),
      [uuids[6], uuids[4], uuids[3], uuids[2]],
    );
    assert.equal(errors[1].response, null);
    assert.equal((await list(key)).length, 7);
  });

  test('the captures view lists only captured requests', async () => {
    const key = await bucket();
    await post(key, at(10));
    const [captured] = await get().server.services.messages.recordMany(key, [
      recorded('capture', '/hook', 20),
    ]);
    await get().server.services.messages.recordMany(key, [recorded('gateway', '/gw', 30)]);
    assert.deepEqual(
      (await list(key, 'captures')).map((m) => m.uuid),
      [captured],
    );
    assert.equal((await list(key)).length, 3);
  });

  test('DELETE of one message answers 204 with no body; it is then gone', async () => {
    const key = await bucket();
    const body = await post(key, [exchange(), exchange()]);
    const [gone, kept] = body.data.map((r) => r.uuid!);
    const response = await get().call({ method: 'DELETE', url: `${messagesOf(key)}/${gone}` });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    await get().expectError({ method: 'GET', url: `${messagesOf(key)}/${gone}` }, 404, 'not_found');
    await get().expectError({ method: 'DELETE', url: `${messagesOf(key)}/${gone}` }, 404, 'not_found');
    assert.deepEqual(
      (await list(key)).map((m) => m.uuid),
      [kept],
    );
  });

  test('DELETE of the messages path removes them all with 204', async () => {
    const key = await bucket();
    await post(key, [exchange(), exchange(), exchange()]);
    const response = await get().call({ method: 'DELETE', url: messagesOf(key) });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assert.deepEqual(await list(key), []);
  });

  test('usage counts deleted messages as received', async () => {
    const key = await bucket();
    const body = await post(key, [exchange(), exchange(), exchange(), {}]);
    await get().call({ method: 'DELETE', url: `${messagesOf(key)}/${body.data[0]!.uuid}` });
    await get().data('PUT', `/buckets/${key}/shared/${body.data[1]!.uuid}`);
    assert.deepEqual(await get().data('GET', `/buckets/${key}/usage`), {
      bucket_key: key,
      messages_received: 3,
      messages_stored: 2,
      messages_shared: 1,
    });
    await get().call({ method: 'DELETE', url: messagesOf(key) });
    const usage = await get().data('GET', `/buckets/${key}/usage`);
    assert.equal(usage.messages_received, 3);
    assert.equal(usage.messages_stored, 0);
  });

  test('unknown or malformed message ids answer 404', async () => {
    const key = await bucket();
    await get().expectError(
      { method: 'GET', url: `${messagesOf(key)}/00000000-0000-4000-8000-000000000000` },
      404,
      'not_found',
    );
    await get().expectError({ method: 'GET', url: `${messagesOf(key)}/not-a-uuid` }, 404, 'not_found');
  });

  // Scopes and accounts

  test('creating, sharing, unsharing and deleting need message:write; api:read may read', async () => {
    const key = await bucket();
    const [result] = (await post(key, exchange())).data;
    const uuid = result!.uuid!;
    const reader = await get().tokenWith(['api:read']);
    for (const [method, url, body] of [
      ['POST', messagesOf(key), exchange()],
      ['PUT', `/buckets/${key}/shared/${uuid}`, undefined],
      ['DELETE', `/buckets/${key}/shared/${uuid}`, undefined],
      ['DELETE', `${messagesOf(key)}/${uuid}`, undefined],
      ['DELETE', messagesOf(key), undefined],
    ] as const) {
      const error = await get().expectError({ method, url, body, as: reader }, 403, 'forbidden');
      assert.match(error.message, /message:write/);
    }
    const response = await get().call({ method: 'GET', url: `${messagesOf(key)}/${uuid}`, as: reader });
    assert.equal(response.statusCode, 200);
    assert.equal(
      (await get().call({ method: 'GET', url: messagesOf(key), as: reader })).json().data.length,
      1,
    );
    const writer = await get().tokenWith(['message:write']);
    const created = await get().call({ method: 'POST', url: messagesOf(key), body: exchange(), as: writer });
    assert.equal(created.statusCode, 201, created.body);
    await get().expectError({ method: 'GET', url: messagesOf(key), as: null }, 401, 'unauthorized');
  });

  test("another account's bucket or message answers 404", async () => {
    const key = await bucket();
    const [result] = (await post(key, exchange())).data;
    const uuid = result!.uuid!;
    const { bob } = get();
    const foreign = [
      ['GET', messagesOf(key)],
      ['GET', `/buckets/${key}/errors`],
      ['GET', `/buckets/${key}/shared`],
      ['GET', `/buckets/${key}/captures`],
      ['GET', `/buckets/${key}/usage`],
      ['GET', `${messagesOf(key)}/${uuid}`],
      ['DELETE', `${messagesOf(key)}/${uuid}`],
      ['DELETE', messagesOf(key)],
      ['PUT', `/buckets/${key}/shared/${uuid}`],
      ['DELETE', `/buckets/${key}/shared/${uuid}`],
      ['GET', `${messagesOf(bob.bucketKey)}/${uuid}`],
      ['PUT', `/buckets/${bob.bucketKey}/shared/${uuid}`],
      ['DELETE', `${messagesOf(bob.bucketKey)}/${uuid}`],
    ] as const;
    for (const [method, url] of foreign) {
      await get().expectError({ method, url, as: bob }, 404, 'not_found');
    }
    await get().expectError(
      { method: 'POST', url: messagesOf(key), body: exchange(), as: bob },
      404,
      'not_found',
    );
    // A message is reachable only through its own bucket, even for its owner.
    await get().expectError(
      { method: 'GET', url: `${messagesOf(get().alice.bucketKey)}/${uuid}` },
      404,
      'not_found',
    );
    assert.equal((await detail(key, uuid)).uuid, uuid);
    assert.equal((await list(key)).length, 1);
  });

  // Sharing

  test('sharing answers the detail with a public_url on PUBLIC_URL and lists the message as shared', async () => {
    const key = await bucket();
    const body = await post(key, [
      exchange({ request: { body: 'shared body' } }),
      exchange({ request: { body: 'private body' } }),
    ]);
    const uuid = body.data[0]!.uuid!;
    const shared = await get().data('PUT', `/buckets/${key}/shared/${uuid}`);
    assert.equal(shared.uuid, uuid);
    assert.equal(shared.shared, true);
    assert.equal(shared.request.body, 'shared body');
    assert.match(shared.public_url, new RegExp(`^${PUBLIC_URL}/public/messages/[A-Za-z0-9_-]{16,64}$`));
    assert.ok(!shared.public_url.includes(uuid), 'the public link does not carry the message id');
    assert.equal('share_token' in shared, false);
    assert.deepEqual(
      (await list(key, 'shared')).map((m) => m.uuid),
      [uuid],
    );
    assert.equal((await detail(key, uuid)).shared, true);
    // The share time is what the Shared list orders and pages by; it is null for the others.
    const listed = (await list(key, 'shared'))[0]!;
    assert.equal(typeof listed.shared_at, 'number');
    assert.equal(shared.shared_at, listed.shared_at);
    assert.equal((await detail(key, body.data[1]!.uuid!)).shared_at, null);
    const older = await get().data('GET', `/buckets/${key}/shared?before=${listed.shared_at}`);
    assert.deepEqual(older, []);
    const page = await get().call({
      method: 'GET',
      url: shared.public_url.slice(PUBLIC_URL.length),
      as: null,
      headers: { accept: 'application/json' },
    });
    assert.equal(page.statusCode, 200, page.body);
    assert.equal(page.json().data.request.body, 'shared body');
  });

  test('the Shared list gives each message its public link as share_url; other views and the detail do not', async () => {
    const key = await bucket();
    const [result] = (await post(key, exchange())).data;
    const uuid = result!.uuid!;
    const { public_url } = await get().data('PUT', `/buckets/${key}/shared/${uuid}`);
    const [listed] = await list(key, 'shared');
    assert.equal(listed!.share_url, public_url);
    assert.equal('share_url' in (await list(key, 'messages'))[0]!, false);
    const fetched = await detail(key, uuid);
    assert.equal('share_url' in fetched, false);
    assert.equal('public_url' in fetched, false);
    const again = await get().data('PUT', `/buckets/${key}/shared/${uuid}`);
    assert.equal((await list(key, 'shared'))[0]!.share_url, again.public_url);
  });

  test('unsharing answers 204 and the public URL then answers 404', async () => {
    const key = await bucket();
    const [result] = (await post(key, exchange())).data;
    const uuid = result!.uuid!;
    const { public_url } = await get().data('PUT', `/buckets/${key}/shared/${uuid}`);
    const path = public_url.slice(PUBLIC_URL.length);
    const json = { accept: 'application/json' };
    assert.equal((await get().call({ method: 'GET', url: path, as: null, headers: json })).statusCode, 200);
    const response = await get().call({ method: 'DELETE', url: `/buckets/${key}/shared/${uuid}` });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    await get().expectError({ method: 'GET', url: path, as: null, headers: json }, 404, 'not_found');
    assert.deepEqual(await list(key, 'shared'), []);
    assert.equal((await detail(key, uuid)).shared, false);
  });

  test('sharing again makes a new token; the old link answers 404', async () => {
    const key = await bucket();
    const [result] = (await post(key, exchange())).data;
    const uuid = result!.uuid!;
    const first = (await get().data('PUT', `/buckets/${key}/shared/${uuid}`)).public_url as string;
    const second = (await get().data('PUT', `/buckets/${key}/shared/${uuid}`)).public_url as string;
    assert.notEqual(first, second);
    const json = { accept: 'application/json' };
    await get().expectError(
      { method: 'GET', url: first.slice(PUBLIC_URL.length), as: null, headers: json },
      404,
      'not_found',
    );
    const fresh = await get().call({
      method: 'GET',
      url: second.slice(PUBLIC_URL.length),
      as: null,
      headers: json,
    });
    assert.equal(fresh.statusCode, 200);
    assert.equal(fresh.json().data.uuid, uuid);
    await get().call({ method: 'DELETE', url: `/buckets/${key}/shared/${uuid}` });
    const third = (await get().data('PUT', `/buckets/${key}/shared/${uuid}`)).public_url as string;
    assert.notEqual(third, second);
    assert.equal(
      (await get().call({ method: 'GET', url: second.slice(PUBLIC_URL.length), as: null, headers: json }))
        .statusCode,
      404,
    );
  });

  test('a shared message stays shared when its pair is completed', async () => {
    const key = await bucket();
    const [result] = (
      await post(key, {
        unique_identifier: 'late',
        request: { method: 'GET', url: 'https://api.example.com/' },
      })
    ).data;
    const { public_url } = await get().data('PUT', `/buckets/${key}/shared/${result!.uuid}`);
    await post(key, { unique_identifier: 'late', response: { status: 204 } });
    const page = await get().call({
      method: 'GET',
      url: public_url.slice(PUBLIC_URL.length),
      as: null,
      headers: { accept: 'application/json' },
    });
    assert.equal(page.statusCode, 200);
    assert.equal(page.json().data.response.status, 204);
  });
});

await describeApi('message retention', (get) => {
  test('messages past the bucket retention go, shared ones stay, usage still counts them', async () => {
    const { data, server } = get();
    const key = (await data('POST', '/buckets', { name: 'Retention' })).key;
    await data('PUT', `/buckets/${key}`, { retention_days: 2 });
    const created = await data('POST', `/buckets/${key}/messages`, [
      { request: { method: 'GET', url: 'https://api.example.com/old' } },
      { request: { method: 'GET', url: 'https://api.example.com/shared' } },
    ]);
    const [old, shared] = created.map((r: { uuid: string }) => r.uuid);
    await data('PUT', `/buckets/${key}/shared/${shared}`);
    const now = Date.now() / 1000;
    assert.equal(
      await server.services.messages.applyRetention(now + 86_400),
      0,
      'within retention nothing goes',
    );
    assert.ok((await server.services.messages.applyRetention(now + 3 * 86_400)) >= 1);
    const left = (await data('GET', `/buckets/${key}/messages`)).map((m: { uuid: string }) => m.uuid);
    assert.deepEqual(left, [shared]);
    assert.ok(!left.includes(old));
    const usage = await data('GET', `/buckets/${key}/usage`);
    assert.equal(usage.messages_received, 2);
    assert.equal(usage.messages_stored, 1);
  });
});
