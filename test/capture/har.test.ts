import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  HAR_LIMITS,
  harEntry,
  isoTime,
  messagesFromHar,
  parseIsoTime,
  toHar,
} from '../../src/capture/har.js';
import type { MessageRequest, StoredMessage } from '../../src/domain/messages.js';
import { AppError } from '../../src/domain/errors.js';

const CREATOR = { name: 'Vigil', version: '0.0.0-test' };
const RECEIVED = 1_790_000_000.5;

function stored(overrides: Partial<StoredMessage> = {}): StoredMessage & { request: MessageRequest } {
  const request: MessageRequest = {
    method: 'POST',
    url: 'https://api.example.test/items?tag=a&tag=b',
    scheme: 'https',
    host: 'api.example.test',
    path: '/items',
    params: { tag: ['a', 'b'] },
    headers: {
      'Content-Type': ['application/x-www-form-urlencoded'],
      Cookie: ['sid=abc; theme=dark'],
      'X-Multi': ['one', 'two'],
    },
    form: { name: ['Zoë'], color: ['blue', 'green'] },
    timestamp: 1_790_000_000.123456,
    body: 'name=Zo%C3%AB&color=blue&color=green',
    body_encoding: 'plaintext',
    size_bytes: 36,
  };
  return {
    uuid: '6f1d2c3b-0000-4000-8000-000000000001',
    bucket_key: 'abcdefghijkl',
    source: 'gateway',
    unique_identifier: null,
    received_at: RECEIVED,
    timestamp: request.timestamp,
    shared: false,
    note: null,
    request,
    response: {
      status: 201,
      reason: 'Created',
      headers: { 'content-type': ['application/json'], 'set-cookie': ['a=1; Path=/', 'b=2'] },
      timestamp: 1_790_000_000.373456,
      response_time: 0.25,
      body: '{"ok":true}',
      body_encoding: 'plaintext',
      size_bytes: 11,
    },
    ...overrides,
  } as StoredMessage & { request: MessageRequest };
}

function expectInvalid(input: unknown, field: string, code = 'validation_failed'): AppError {
  let caught: unknown;
  try {
    messagesFromHar(input, RECEIVED);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof AppError, `expected an AppError, got ${String(caught)}`);
  assert.equal(caught.code, code);
  if (code === 'validation_failed') {
    assert.equal(caught.field, field);
    assert.ok(caught.message.includes(field), caught.message);
  }
  return caught;
}

describe('HAR times', () => {
  test('ISO times keep microseconds both ways', () => {
    assert.equal(isoTime(1_790_000_000.123456), '2026-09-21T14:13:20.123456Z');
    assert.equal(parseIsoTime('2026-09-21T14:13:20.123456Z'), 1_790_000_000.123456);
    assert.equal(parseIsoTime('2026-09-21T16:13:20.5+02:00'), 1_790_000_000.5);
    assert.equal(parseIsoTime('2026-09-21T16:13:20.5+0200'), 1_790_000_000.5);
    assert.equal(parseIsoTime('not a date'), undefined);
    assert.equal(parseIsoTime('1969-12-31T23:59:59Z'), undefined);
  });
});

describe('HAR export', () => {
  test('an entry carries request, response, timings and the message id', () => {
    const entry = harEntry(stored());
    assert.equal(entry.startedDateTime, '2026-09-21T14:13:20.123456Z');
    assert.equal(entry.time, 250);
    assert.deepEqual(entry.timings, { send: 0, wait: 250, receive: 0 });
    assert.deepEqual(entry.cache, {});
    assert.equal(entry._vigil_message_id, '6f1d2c3b-0000-4000-8000-000000000001');
    assert.equal(entry.request.method, 'POST');
    assert.equal(entry.request.url, 'https://api.example.test/items?tag=a&tag=b');
    assert.equal(entry.request.httpVersion, 'HTTP/1.1');
    assert.deepEqual(entry.request.headers, [
      { name: 'Content-Type', value: 'application/x-www-form-urlencoded' },
      { name: 'Cookie', value: 'sid=abc; theme=dark' },
      { name: 'X-Multi', value: 'one' },
      { name: 'X-Multi', value: 'two' },
    ]);
    assert.deepEqual(entry.request.cookies, [
      { name: 'sid', value: 'abc' },
      { name: 'theme', value: 'dark' },
    ]);
    assert.deepEqual(entry.request.queryString, [
      { name: 'tag', value: 'a' },
      { name: 'tag', value: 'b' },
    ]);
    assert.deepEqual(entry.request.postData, {
      mimeType: 'application/x-www-form-urlencoded',
      text: 'name=Zo%C3%AB&color=blue&color=green',
      params: [
        { name: 'name', value: 'Zoë' },
        { name: 'color', value: 'blue' },
        { name: 'color', value: 'green' },
      ],
    });
    assert.equal(entry.request.headersSize, -1);
    assert.equal(entry.request.bodySize, 36);
    assert.deepEqual(entry.response, {
      status: 201,
      statusText: 'Created',
      httpVersion: 'HTTP/1.1',
      cookies: [
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ],
      headers: [
        { name: 'content-type', value: 'application/json' },
        { name: 'set-cookie', value: 'a=1; Path=/' },
        { name: 'set-cookie', value: 'b=2' },
      ],
      content: { size: 11, mimeType: 'application/json', text: '{"ok":true}' },
      redirectURL: '',
      headersSize: -1,
      bodySize: 11,
    });
  });

  test('binary bodies are Base64: content.encoding for responses, _encoding and a comment for requests', () => {
    const message = stored();
    const entry = harEntry({
      ...message,
      request: { ...message.request, form: null, body: '/wD+', body_encoding: 'base64', size_bytes: 3 },
      response: { ...message.response!, body: 'iVBORw==', body_encoding: 'base64', size_bytes: 5 },
    });
    assert.equal(entry.request.postData?.text, '/wD+');
    assert.equal(entry.request.postData?._encoding, 'base64');
    assert.match(entry.request.postData?.comment ?? '', /Base64/);
    assert.equal(entry.request.postData?.params, undefined);
    assert.deepEqual(entry.response.content, {
      size: 5,
      mimeType: 'application/json',
      text: 'iVBORw==',
      encoding: 'base64',
    });
  });

  test('a message without a response gets status 0 and its note as _error', () => {
    const entry = harEntry(stored({ response: null, note: 'upstream unreachable' }));
    assert.equal(entry.response.status, 0);
    assert.equal(entry.response.statusText, '');
    assert.equal(entry.response.bodySize, -1);
    assert.equal(entry.response._error, 'upstream unreachable');
    assert.equal(entry.time, 0);
  });

  test('an unknown response time falls back to the gap between the timestamps', () => {
    const message = stored();
    const entry = harEntry({ ...message, response: { ...message.response!, response_time: null } });
    assert.equal(entry.time, 250);
  });

  test('a document: version, creator, entries in order; response-only messages left out and counted', () => {
    const first = stored();
    const second = stored({ uuid: '6f1d2c3b-0000-4000-8000-000000000002' });
    const halfOnly = stored({ uuid: '6f1d2c3b-0000-4000-8000-000000000003', request: null });
    const har = toHar([first, halfOnly, second], { creator: CREATOR });
    assert.equal(har.log.version, '1.2');
    assert.deepEqual(har.log.creator, CREATOR);
    assert.deepEqual(
      har.log.entries.map((e) => e._vigil_message_id),
      [first.uuid, second.uuid],
    );
    assert.equal(har.log.comment, '1 message without a request is left out');
    assert.equal(toHar([first], { creator: CREATOR }).log.comment, undefined);
    assert.match(toHar([first], { creator: CREATOR, truncatedAt: 1 }).log.comment ?? '', /more than 1 /);
  });
});

describe('HAR import', () => {
  test('export then import gives the same exchange back', () => {
    const message = stored();
    const [back] = messagesFromHar(JSON.parse(JSON.stringify(toHar([message], { creator: CREATOR }))), 0);
    assert.deepEqual(back, {
      source: 'har',
      unique_identifier: null,
      request: message.request,
      response: { ...message.response!, timestamp: 1_790_000_000.373456 },
      note: null,
    });
  });

  test('binary bodies come back byte-exact; UTF-8 sent as Base64 is kept as text', () => {
    const message = stored();
    const har = toHar(
      [
        {
          ...message,
          request: { ...message.request, form: null, body: '/wD+', body_encoding: 'base64', size_bytes: 3 },
          response: { ...message.response!, body: 'aGk=', body_encoding: 'base64', size_bytes: 2 },
        },
      ],
      { creator: CREATOR },
    );
    const [back] = messagesFromHar(har, 0);
    assert.equal(back?.request?.body, '/wD+');
    assert.equal(back?.request?.body_encoding, 'base64');
    assert.equal(back?.request?.size_bytes, 3);
    assert.equal(back?.request?.form, null);
    assert.equal(back?.response?.body, 'hi');
    assert.equal(back?.response?.body_encoding, 'plaintext');
  });

  test('a minimal entry: defaults for everything but method and URL', () => {
    const [message] = messagesFromHar(
      { log: { entries: [{ request: { method: 'get', url: 'http://a.test/x?q=1' } }] } },
      RECEIVED,
    );
    assert.deepEqual(message, {
      source: 'har',
      unique_identifier: null,
      request: {
        method: 'GET',
        url: 'http://a.test/x?q=1',
        scheme: 'http',
        host: 'a.test',
        path: '/x',
        params: { q: ['1'] },
        headers: {},
        form: null,
        timestamp: RECEIVED,
        body: '',
        body_encoding: 'plaintext',
        size_bytes: 0,
      },
      response: null,
      note: null,
    });
  });

  test('form fields from an url-encoded body when params are empty (as Chromium writes them)', () => {
    const [message] = messagesFromHar(
      {
        log: {
          entries: [
            {
              request: {
                method: 'POST',
                url: 'http://a.test/form',
                headers: [
                  { name: 'Accept', value: 'a' },
                  { name: 'Accept', value: 'b' },
                ],
                postData: {
                  mimeType: 'application/x-www-form-urlencoded;charset=UTF-8',
                  text: 'x=1&x=2&y=%C3%A9',
                  params: [],
                },
              },
              response: { status: 204, statusText: '', headers: [], content: { size: 0, mimeType: '' } },
              timings: { blocked: -1, send: 1, wait: 10, receive: 2 },
            },
          ],
        },
      },
      RECEIVED,
    );
    assert.deepEqual(message?.request?.form, { x: ['1', '2'], y: ['é'] });
    assert.deepEqual(message?.request?.headers, { Accept: ['a', 'b'] });
    assert.equal(message?.response?.reason, 'No Content');
    assert.equal(message?.response?.response_time, 0.013);
  });

  test('status 0 means no response; its _error becomes the note', () => {
    const [message] = messagesFromHar(
      {
        log: {
          entries: [
            {
              startedDateTime: '2026-09-21T14:13:20.000Z',
              time: 12,
              request: { method: 'GET', url: 'https://a.test/' },
              response: { status: 0, statusText: '', _error: 'net::ERR_CONNECTION_REFUSED' },
            },
          ],
        },
      },
      RECEIVED,
    );
    assert.equal(message?.response, null);
    assert.equal(message?.note, 'net::ERR_CONNECTION_REFUSED');
    assert.equal(message?.request?.timestamp, 1_790_000_000);
  });

  test('the real Chromium recording converts entry by entry', () => {
    const har = JSON.parse(readFileSync(new URL('../fixtures/har/chromium.har', import.meta.url), 'utf8'));
    const messages = messagesFromHar(har, RECEIVED);
    assert.equal(messages.length, har.log.entries.length);
    const png = messages.find((m) => m.request?.path === '/pixel.png');
    assert.equal(png?.response?.body_encoding, 'base64');
    assert.equal(png?.response?.size_bytes, 81);
    const form = messages.find((m) => m.request?.method === 'POST');
    assert.deepEqual(form?.request?.form, { name: ['Zoë'], color: ['blue', 'green'] });
  });

  test('bad input names the JSON pointer of the field at fault', () => {
    expectInvalid([], '/');
    expectInvalid({}, '/log');
    expectInvalid({ log: { entries: {} } }, '/log/entries');
    const entry = (request: unknown, rest: Record<string, unknown> = {}) => ({
      log: { entries: [{ request: { method: 'GET', url: 'http://a.test/' } }, { request, ...rest }] },
    });
    expectInvalid(
      { log: { entries: [{ request: { method: 'GET', url: 'http://a.test/' } }, 7] } },
      '/log/entries/1',
    );
    expectInvalid(entry(undefined), '/log/entries/1/request');
    expectInvalid(entry({ method: 'GET' }), '/log/entries/1/request/url');
    expectInvalid(entry({ method: 'GET', url: 'ftp://a.test/' }), '/log/entries/1/request/url');
    expectInvalid(entry({ url: 'http://a.test/' }), '/log/entries/1/request/method');
    expectInvalid(entry({ method: 'GE T', url: 'http://a.test/' }), '/log/entries/1/request/method');
    expectInvalid(
      entry({ method: 'GET', url: 'http://a.test/', headers: [{ name: 'A', value: 1 }] }),
      '/log/entries/1/request/headers/0/value',
    );
    expectInvalid(
      entry({ method: 'POST', url: 'http://a.test/', postData: { text: '***', _encoding: 'base64' } }),
      '/log/entries/1/request/postData/text',
    );
    expectInvalid(
      entry({ method: 'GET', url: 'http://a.test/' }, { response: { status: 42 } }),
      '/log/entries/1/response/status',
    );
    expectInvalid(
      entry(
        { method: 'GET', url: 'http://a.test/' },
        { response: { status: 200, content: { text: 'x', encoding: 'gzip' } } },
      ),
      '/log/entries/1/response/content/encoding',
    );
    expectInvalid(
      entry({ method: 'GET', url: 'http://a.test/' }, { startedDateTime: 'yesterday' }),
      '/log/entries/1/startedDateTime',
    );
  });

  test(`more than ${HAR_LIMITS.importEntries} entries are refused whole`, () => {
    const entries = Array.from({ length: HAR_LIMITS.importEntries + 1 }, () => ({
      request: { method: 'GET', url: 'http://a.test/' },
    }));
    const error = expectInvalid({ log: { entries } }, '', 'limit_reached');
    assert.equal(error.status, 422);
    assert.equal(messagesFromHar({ log: { entries: entries.slice(1) } }, 0).length, HAR_LIMITS.importEntries);
  });
});
