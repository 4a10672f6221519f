import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { describeApi, TRAFFIC_URL } from '../helpers/api.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

await describeApi('request capture', (get) => {
  const key = () => get().alice.bucketKey;

  /** The traffic origin on a real port, listening from the first test that needs it on. */
  async function trafficAddress(): Promise<string> {
    const { traffic } = get();
    if (!traffic.server.listening) await traffic.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(traffic.server.address() as AddressInfo).port}`;
  }

  /** Sends a request to the capture URL (no token) and answers the stored message. */
  async function capture(options: {
    method: InjectOptions['method'];
    path: string;
    headers?: Record<string, string | string[]>;
    payload?: string | Buffer;
  }) {
    const response = await get().traffic.inject({
      method: options.method,
      url: `/capture/${key()}${options.path}`,
      headers: options.headers ?? {},
      ...(options.payload !== undefined && { payload: options.payload }),
    });
    assert.equal(response.statusCode, 200, response.body);
    if (options.method === 'HEAD') return { response, message: null };
    const body = response.json();
    assert.deepEqual(Object.keys(body), ['captured'], 'plain JSON, not the envelope');
    assert.match(body.captured, UUID);
    const message = await get().data('GET', `/buckets/${key()}/messages/${body.captured}`);
    return { response, message };
  }

  test('a JSON POST is stored byte for byte with the URL the sender called, its headers and query', async () => {
    const json = '{ "b": [1, 2.50],\n  "a": "é" }';
    const before = Date.now() / 1000;
    const { response, message } = await capture({
      method: 'POST',
      path: '/hooks/github?x=1&x=2&y=%20z',
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-signature': 'sha1=abc' },
      payload: json,
    });
    assert.match(response.headers['content-type'] as string, /^application\/json/);
    assert.equal(message.source, 'capture');
    assert.equal(message.response.status, 200);
    assert.equal(message.response.body, response.body, 'the answer the sender got is the response');
    assert.equal(message.note, null);
    const request = message.request;
    assert.equal(request.method, 'POST');
    assert.equal(request.url, `${TRAFFIC_URL}/capture/${key()}/hooks/github?x=1&x=2&y=%20z`);
    assert.equal(request.scheme, 'http');
    assert.equal(request.host, 'traffic.vigil.test');
    assert.equal(request.path, `/capture/${key()}/hooks/github`);
    assert.deepEqual(request.params, { x: ['1', '2'], y: [' z'] });
    assert.equal(request.body, json);
    assert.equal(request.body_encoding, 'plaintext');
    assert.equal(request.size_bytes, Buffer.byteLength(json));
    assert.deepEqual(request.headers['content-type'], ['application/json; charset=utf-8']);
    assert.deepEqual(request.headers['x-signature'], ['sha1=abc']);
    assert.equal(request.form, null);
    assert.ok(request.timestamp >= before - 1 && request.timestamp <= Date.now() / 1000 + 1);
  });

  test('a form body keeps its bytes and its fields', async () => {
    const form = 'name=Ada+Lovelace&tag=a&tag=b&empty=';
    const { message } = await capture({
      method: 'PUT',
      path: '/form',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form,
    });
    assert.equal(message.request.method, 'PUT');
    assert.equal(message.request.body, form);
    assert.deepEqual(message.request.form, { name: ['Ada Lovelace'], tag: ['a', 'b'], empty: [''] });
  });

  test('random binary bytes come back exactly, with or without a Content-Type', async () => {
    const kinds: Record<string, string>[] = [{ 'content-type': 'application/octet-stream' }, {}];
    for (const headers of kinds) {
      const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), randomBytes(4096)]);
      const { message } = await capture({ method: 'PATCH', path: '/upload.bin', headers, payload: bytes });
      assert.equal(message.request.body_encoding, 'base64');
      assert.equal(message.request.size_bytes, bytes.length);
      assert.ok(Buffer.from(message.request.body, 'base64').equals(bytes), 'byte-exact');
    }
  });

  test('any method, with or without a path and a body', async () => {
    for (const method of ['GET', 'DELETE', 'OPTIONS', 'POST'] as const) {
      const { message } = await capture({ method, path: '', headers: { 'User-Agent': 'probe/1.0' } });
      assert.equal(message.request.method, method);
      assert.equal(message.request.url, `${TRAFFIC_URL}/capture/${key()}`);
      assert.equal(message.request.body, '');
      assert.equal(message.request.size_bytes, 0);
      assert.deepEqual(message.request.headers['user-agent'], ['probe/1.0']);
    }
    const tag = `head${Date.now()}`;
    await capture({ method: 'HEAD', path: `/${tag}` });
    const captures = await get().data('GET', `/buckets/${key()}/captures?count=1000`);
    const head = captures.find((m: { request: { path: string } }) => m.request.path.endsWith(tag));
    assert.equal(head?.request.method, 'HEAD');
  });

  test('over a real connection, every header line is kept, repeated ones as arrays in order', async () => {
    const address = await trafficAddress();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = http.request(`${address}/capture/${key()}/lines?q=1`, {
        method: 'POST',
        headers: { 'X-Repeat': ['one', 'two'], 'Content-Type': 'text/plain', Cookie: 'a=1' },
      });
      outgoing.on('error', reject);
      outgoing.on('response', (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      outgoing.write('chunked ');
      outgoing.end('body');
    });
    assert.equal(answer.status, 200, answer.body);
    const message = await get().data('GET', `/buckets/${key()}/messages/${JSON.parse(answer.body).captured}`);
    assert.deepEqual(message.request.headers['x-repeat'], ['one', 'two']);
    assert.deepEqual(message.request.headers.cookie, ['a=1']);
    assert.deepEqual(message.request.headers['transfer-encoding'], ['chunked']);
    assert.equal(message.request.body, 'chunked body');
    assert.equal(message.request.url, `${TRAFFIC_URL}/capture/${key()}/lines?q=1`);
  });

  test('over a real connection, the stored response is the answer the client got: status, headers, body', async () => {
    const address = await trafficAddress();
    for (const method of ['POST', 'HEAD'] as const) {
      const tag = `answer${method}${Date.now()}`;
      const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
        (resolve, reject) => {
          const outgoing = http.request(`${address}/capture/${key()}/${tag}`, { method });
          outgoing.on('error', reject);
          outgoing.on('response', (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (body += chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
            );
          });
          outgoing.end(method === 'POST' ? 'ping' : undefined);
        },
      );
      assert.equal(answer.status, 200);
      const captures = await get().data('GET', `/buckets/${key()}/captures?count=1000`);
      const listed = captures.find((m: { request: { path: string } }) => m.request.path.endsWith(tag));
      const message = await get().data('GET', `/buckets/${key()}/messages/${listed.uuid}`);
      if (method === 'POST') assert.equal(JSON.parse(answer.body).captured, message.uuid);
      const { response } = message;
      assert.equal(response.status, answer.status);
      assert.equal(response.reason, 'OK');
      assert.equal(response.body, answer.body, method);
      assert.equal(response.size_bytes, Buffer.byteLength(answer.body));
      // Every header the client got, as sent, but those of the connection (Connection, Keep-Alive).
      const got = Object.fromEntries(
        Object.entries(answer.headers)
          .filter(([name]) => name !== 'connection' && name !== 'keep-alive')
          .map(([name, value]) => [name, Array.isArray(value) ? value : [String(value)]]),
      );
      assert.deepEqual(response.headers, got, method);
      assert.ok(response.headers.date && response.headers['content-length'], 'dated and sized');
      assert.ok(response.timestamp >= message.request.timestamp);
    }
  });

  test('captured requests are listed in the captures view, newest first, and count as received', async () => {
    const tag = `view${Date.now()}`;
    const first = (await capture({ method: 'POST', path: `/${tag}/1`, payload: 'one' })).message;
    const second = (await capture({ method: 'POST', path: `/${tag}/2`, payload: 'two' })).message;
    const captures = await get().data('GET', `/buckets/${key()}/captures?count=1000`);
    const ours = captures.filter((m: { request: { path: string } }) => m.request.path.includes(tag));
    assert.deepEqual(
      ours.map((m: { uuid: string }) => m.uuid),
      [second.uuid, first.uuid],
    );
    assert.ok(
      ours.every(
        (m: { source: string; response: { status: number } | null }) =>
          m.source === 'capture' && m.response?.status === 200,
      ),
    );
    const errors = await get().data('GET', `/buckets/${key()}/errors?count=1000`);
    assert.ok(
      !errors.some((m: { uuid: string }) => m.uuid === first.uuid || m.uuid === second.uuid),
      'a capture was answered by the service: it is not in the error view',
    );
    const answered = await get().data('GET', `/buckets/${key()}/messages?status=200&count=1000`);
    assert.ok(answered.some((m: { uuid: string }) => m.uuid === first.uuid));
  });

  test('an unreachable gateway upstream (502) is in the error view; the capture beside it is not', async () => {
    const tag = `beside${Date.now()}`;
    const captured = (await capture({ method: 'POST', path: `/${tag}`, payload: 'x' })).message;
    // Port 9 on loopback: nothing listens there, so the gateway answers 502 and stores the request alone.
    const failed = await get().call({
      method: 'GET',
      url: `/gateway/${key()}/http/127.0.0.1:9/${tag}`,
      on: 'traffic',
      as: null,
    });
    assert.equal(failed.statusCode, 502, failed.body);
    const errors = await get().data('GET', `/buckets/${key()}/errors?count=1000`);
    const uuids = errors.map((m: { uuid: string }) => m.uuid);
    assert.ok(uuids.includes(failed.headers['vigil-message-id']), 'the 502 exchange is an error');
    assert.ok(!uuids.includes(captured.uuid), 'the capture is not');
  });

  test('an unknown bucket is 404 with the envelope, for any method', async () => {
    for (const [method, url] of [
      ['POST', '/capture/zzzzzzzzzzzz/x'],
      ['GET', '/capture/zzzzzzzzzzzz'],
      ['PUT', '/capture/not-a-key/x'],
    ] as const) {
      await get().expectError({ method, url, as: null, body: { a: 1 }, on: 'traffic' }, 404, 'not_found');
    }
  });

  test('a body over BODY_LIMIT is 413 with the envelope and is not stored', async () => {
    const before = await get().data('GET', `/buckets/${key()}/usage`);
    const response = await get().traffic.inject({
      method: 'POST',
      url: `/capture/${key()}/big`,
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(1024 * 1024 + 1, 0x61),
    });
    assert.equal(response.statusCode, 413, response.body);
    const body = response.json();
    assert.equal(body.data, null);
    assert.equal(body.error.code, 'payload_too_large');
    const after = await get().data('GET', `/buckets/${key()}/usage`);
    assert.equal(after.messages_received, before.messages_received);
  });

  test('capture needs no token and ignores one', async () => {
    const { message } = await capture({
      method: 'POST',
      path: '/auth',
      headers: { authorization: 'Bearer not-a-token', 'content-type': 'text/plain' },
      payload: 'hi',
    });
    assert.deepEqual(message.request.headers.authorization, ['Bearer not-a-token']);
    assert.equal(message.request.body, 'hi');
  });
});
