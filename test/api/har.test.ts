import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { bodyBytes } from '../../src/capture/normalize.js';
import { describeApi } from '../helpers/api.js';

interface NameValue {
  name: string;
  value: string;
}

/** The HAR Chromium wrote (scripts/record-har-fixture.mjs). */
const fixture = JSON.parse(readFileSync(new URL('../fixtures/har/chromium.har', import.meta.url), 'utf8'));
const fixtureEntries: any[] = fixture.log.entries;

/** The bytes of a HAR body: `postData` or `content`, Base64 when marked so. */
function harBytes(part: { text?: string; encoding?: string; _encoding?: string } | undefined): Buffer {
  const text = part?.text ?? '';
  return Buffer.from(text, part?.encoding === 'base64' || part?._encoding === 'base64' ? 'base64' : 'utf8');
}

/** `[{name, value}]` grouped by name, values in order. */
function grouped(pairs: NameValue[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const { name, value } of pairs) (out[name] ??= []).push(value);
  return out;
}

/** What must survive a trip through Vigil: method, URL, status, bodies (bytes) and header values. */
function essence(entry: any) {
  return {
    method: entry.request.method,
    url: entry.request.url,
    status: entry.response.status,
    requestBody: harBytes(entry.request.postData).toString('base64'),
    responseBody: entry.response.status === 0 ? '' : harBytes(entry.response.content).toString('base64'),
    requestHeaders: grouped(entry.request.headers),
    responseHeaders: grouped(entry.response.headers),
    started: Date.parse(entry.startedDateTime),
    time: Math.round(entry.time * 1000) / 1000,
  };
}

const byStart = (entries: any[]) =>
  [...entries].sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));

await describeApi('HAR import and export', (get) => {
  const newBucket = async (name: string): Promise<string> =>
    (await get().data('POST', '/buckets', { name })).key;

  async function importHar(bucketKey: string, har: unknown) {
    return get().data('POST', `/buckets/${bucketKey}/har`, har);
  }

  async function exportHar(bucketKey: string, query = '') {
    const response = await get().call({ method: 'GET', url: `/buckets/${bucketKey}/messages.har${query}` });
    assert.equal(response.statusCode, 200, response.body);
    return { response, har: JSON.parse(response.body) };
  }

  test('the Chromium recording imports as messages with methods, URLs, statuses and bodies intact', async () => {
    const { data } = get();
    const key = await newBucket('HAR import');
    const imported = await importHar(key, fixture);
    assert.equal(imported.imported, fixtureEntries.length);
    assert.equal(imported.uuids.length, fixtureEntries.length);

    // The static `/messages` path next to `/messages.har` still lists them.
    const list = await data('GET', `/buckets/${key}/messages`);
    assert.equal(list.length, fixtureEntries.length);
    assert.ok(list.every((m: any) => m.source === 'har'));

    for (const [index, entry] of fixtureEntries.entries()) {
      const message = await data('GET', `/buckets/${key}/messages/${imported.uuids[index]}`);
      assert.equal(message.request.method, entry.request.method);
      assert.equal(message.request.url, entry.request.url);
      assert.equal(message.response.status, entry.response.status);
      assert.equal(message.response.reason, entry.response.statusText);
      assert.equal(message.request.timestamp, Date.parse(entry.startedDateTime) / 1000);
      assert.equal(message.response.response_time, Math.round(entry.time * 1000) / 1_000_000);
      assert.deepEqual(message.request.headers, grouped(entry.request.headers));
      assert.deepEqual(message.response.headers, grouped(entry.response.headers));
      assert.deepEqual(
        bodyBytes(message.request.body, message.request.body_encoding),
        harBytes(entry.request.postData),
      );
      assert.deepEqual(
        bodyBytes(message.response.body, message.response.body_encoding),
        harBytes(entry.response.content),
        entry.request.url,
      );
    }

    const png = fixtureEntries.findIndex((e) => e.request.url.endsWith('/pixel.png'));
    const image = await data('GET', `/buckets/${key}/messages/${imported.uuids[png]}`);
    assert.equal(image.response.body_encoding, 'base64');
    assert.deepEqual(
      Buffer.from(image.response.body, 'base64'),
      Buffer.from(fixtureEntries[png].response.content.text, 'base64'),
    );
    assert.equal(Buffer.from(image.response.body, 'base64').subarray(1, 4).toString(), 'PNG');

    const post = fixtureEntries.findIndex((e) => e.request.method === 'POST');
    const form = await data('GET', `/buckets/${key}/messages/${imported.uuids[post]}`);
    assert.deepEqual(form.request.form, { name: ['Zoë'], color: ['blue', 'green'] });

    const query = fixtureEntries.findIndex((e) => e.request.url.includes('/api/items'));
    const api = await data('GET', `/buckets/${key}/messages/${imported.uuids[query]}`);
    assert.deepEqual(api.request.params, { q: ['café'], tag: ['a', 'b'] });

    const errors = await data('GET', `/buckets/${key}/errors`);
    assert.deepEqual(
      errors.map((m: any) => m.response.status),
      [404],
    );
  });

  test('export gives a HAR 1.2 file matching the import; importing it again gives the same messages', async () => {
    const { data } = get();
    const key = await newBucket('HAR round trip');
    const first = await importHar(key, fixture);

    const { response, har } = await exportHar(key);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(response.headers['content-disposition'], `attachment; filename="${key}.har"`);
    assert.equal(har.log.version, '1.2');
    assert.equal(har.log.creator.name, 'Vigil');
    assert.match(har.log.creator.version, /^\d+\.\d+\.\d+/);
    assert.equal(har.log.comment, undefined);
    assert.equal(har.log.entries.length, fixtureEntries.length);

    // Oldest first, each entry the fixture's entry with the same start.
    const expected = byStart(fixtureEntries);
    assert.deepEqual(har.log.entries.map(essence), expected.map(essence));
    for (const entry of har.log.entries) {
      assert.equal(entry.request.httpVersion, 'HTTP/1.1');
      assert.equal(entry.request.headersSize, -1);
      assert.equal(entry.response.headersSize, -1);
      assert.deepEqual(entry.cache, {});
      assert.deepEqual(entry.timings, { send: 0, wait: entry.time, receive: 0 });
      assert.equal(entry.request.bodySize, harBytes(entry.request.postData).length);
      assert.equal(entry.response.bodySize, harBytes(entry.response.content).length);
      assert.equal(entry.response.content.size, harBytes(entry.response.content).length);
      assert.ok(first.uuids.includes(entry._vigil_message_id));
    }
    const png = har.log.entries.find((e: any) => e.request.url.endsWith('/pixel.png'));
    assert.equal(png.response.content.encoding, 'base64');
    assert.equal(png.response.content.mimeType, 'image/png');
    const form = har.log.entries.find((e: any) => e.request.method === 'POST');
    assert.deepEqual(form.request.postData.params, [
      { name: 'name', value: 'Zoë' },
      { name: 'color', value: 'blue' },
      { name: 'color', value: 'green' },
    ]);
    const api = har.log.entries.find((e: any) => e.request.url.includes('/api/items'));
    assert.deepEqual(api.request.queryString, [
      { name: 'q', value: 'café' },
      { name: 'tag', value: 'a' },
      { name: 'tag', value: 'b' },
    ]);

    // The export imports again into the same messages.
    const again = await importHar(key, har);
    assert.equal(again.imported, fixtureEntries.length);
    for (const [index, uuid] of again.uuids.entries()) {
      const copy = await data('GET', `/buckets/${key}/messages/${uuid}`);
      const original = await data(
        'GET',
        `/buckets/${key}/messages/${har.log.entries[index]._vigil_message_id}`,
      );
      assert.deepEqual(copy.request, original.request);
      assert.deepEqual(copy.response, original.response);
      assert.equal(copy.timestamp, original.timestamp);
      assert.equal(copy.source, 'har');
    }
    const twice = (await exportHar(key)).har;
    assert.equal(twice.log.entries.length, 2 * fixtureEntries.length);
  });

  test('?since, ?before and ?count choose the window; a cut window says so', async () => {
    const key = await newBucket('HAR window');
    await importHar(key, fixture);
    const starts = byStart(fixtureEntries).map((e) => Date.parse(e.startedDateTime) / 1000);
    const first = starts[0]!;
    const last = starts[starts.length - 1]!;

    const after = (await exportHar(key, `?since=${first}`)).har;
    assert.equal(after.log.entries.length, fixtureEntries.length - 1);
    const before = (await exportHar(key, `?before=${last}`)).har;
    assert.equal(before.log.entries.length, fixtureEntries.length - 1);
    const none = (await exportHar(key, `?since=${last}`)).har;
    assert.deepEqual(none.log.entries, []);

    const cut = (await exportHar(key, '?count=2')).har;
    assert.equal(cut.log.entries.length, 2);
    assert.match(cut.log.comment, /more than 2 messages/);
    assert.equal(Date.parse(cut.log.entries[0].startedDateTime) / 1000, first);
  });

  test('messages made through the API: binary request bodies and a missing response survive the trip', async () => {
    const { data } = get();
    const key = await newBucket('HAR binary');
    const created = await data('POST', `/buckets/${key}/messages`, {
      request: {
        method: 'PUT',
        url: 'https://api.example.test/upload?x=1',
        headers: { 'Content-Type': 'application/octet-stream', 'X-Twice': ['a', 'b'] },
        body: Buffer.from([0xff, 0x00, 0xfe, 0x80]).toString('base64'),
        body_encoding: 'base64',
        timestamp: 1_790_000_000.123456,
      },
    });
    const { har } = await exportHar(key);
    const [entry] = har.log.entries;
    assert.equal(entry._vigil_message_id, created[0].uuid);
    assert.equal(entry.startedDateTime, '2026-09-21T14:13:20.123456Z');
    assert.equal(entry.response.status, 0);
    assert.equal(entry.request.postData._encoding, 'base64');
    assert.match(entry.request.postData.comment, /Base64/);
    assert.deepEqual(entry.request.headers, [
      { name: 'Content-Type', value: 'application/octet-stream' },
      { name: 'X-Twice', value: 'a' },
      { name: 'X-Twice', value: 'b' },
    ]);

    const again = await importHar(key, har);
    const copy = await data('GET', `/buckets/${key}/messages/${again.uuids[0]}`);
    const original = await data('GET', `/buckets/${key}/messages/${created[0].uuid}`);
    assert.deepEqual(copy.request, original.request);
    assert.equal(copy.response, null);
    assert.deepEqual(
      bodyBytes(copy.request.body, copy.request.body_encoding),
      Buffer.from([0xff, 0, 0xfe, 0x80]),
    );
  });

  test('an invalid HAR is refused whole with the JSON pointer of the bad field', async () => {
    const { data, expectError } = get();
    const key = await newBucket('HAR invalid');
    const url = `/buckets/${key}/har`;
    await expectError({ method: 'POST', url, body: { entries: [] } }, 400, 'validation_failed', '/log');
    await expectError({ method: 'POST', url, body: [] }, 400, 'validation_failed', '/');
    await expectError({ method: 'POST', url }, 400, 'validation_failed', '/');
    await expectError(
      { method: 'POST', url, body: { log: { entries: 'none' } } },
      400,
      'validation_failed',
      '/log/entries',
    );
    const entries = [
      { request: { method: 'GET', url: 'http://a.test/' } },
      { request: { method: 'GET', url: 'http://a.test/' } },
      { request: { method: 'GET', url: 'http://a.test/' } },
      { request: { method: 'GET' }, response: { status: 200 } },
    ];
    await expectError(
      { method: 'POST', url, body: { log: { entries } } },
      400,
      'validation_failed',
      '/log/entries/3/request/url',
    );
    await expectError(
      {
        method: 'POST',
        url,
        body: {
          log: {
            entries: [{ request: { method: 'GET', url: 'http://a.test/' }, response: { status: 'ok' } }],
          },
        },
      },
      400,
      'validation_failed',
      '/log/entries/0/response/status',
    );
    assert.deepEqual(await data('GET', `/buckets/${key}/messages`), []);
  });

  test('more than 5,000 entries answer 422 and save nothing', async () => {
    const { data, expectError } = get();
    const key = await newBucket('HAR too big');
    const entries = Array.from({ length: 5_001 }, () => ({
      request: { method: 'GET', url: 'http://a.test/' },
    }));
    const error = await expectError(
      { method: 'POST', url: `/buckets/${key}/har`, body: { log: { entries } } },
      422,
      'limit_reached',
    );
    assert.match(error.message, /5000/);
    assert.deepEqual(await data('GET', `/buckets/${key}/messages`), []);
  });

  test("another account's bucket is not found; api:read can export but not import", async () => {
    const { alice, bob, expectError, call, tokenWith } = get();
    await expectError(
      { method: 'POST', url: `/buckets/${bob.bucketKey}/har`, body: fixture },
      404,
      'not_found',
    );
    await expectError({ method: 'GET', url: `/buckets/${bob.bucketKey}/messages.har` }, 404, 'not_found');
    await expectError(
      { method: 'GET', url: `/buckets/${alice.bucketKey}/messages.har`, as: null },
      401,
      'unauthorized',
    );

    const reader = await tokenWith(['api:read']);
    await expectError(
      { method: 'POST', url: `/buckets/${alice.bucketKey}/har`, body: fixture, as: reader },
      403,
      'forbidden',
    );
    const exported = await call({
      method: 'GET',
      url: `/buckets/${alice.bucketKey}/messages.har`,
      as: reader,
    });
    assert.equal(exported.statusCode, 200);

    const writer = await tokenWith(['message:write']);
    const imported = await call({
      method: 'POST',
      url: `/buckets/${alice.bucketKey}/har`,
      body: { log: { entries: [] } },
      as: writer,
    });
    assert.equal(imported.statusCode, 201, imported.body);
    assert.deepEqual(imported.json().data, { imported: 0, uuids: [] });
  });
});
