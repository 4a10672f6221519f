import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { InjectOptions } from 'fastify';
import { request as undiciRequest } from 'undici';
import { loadConfig } from '../../src/config/config.js';
import { createServer, type Server } from '../../src/main.js';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

/** A local upstream that records what it receives and answers per path. */
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const received: Received[] = [];
const BIG_BYTES = 5 * 1024 * 1024;
const GZIPPED = JSON.stringify({ compressed: true, filler: 'x'.repeat(2000) });
let upstream: http.Server;
let origin = '';
let closedPort = 0;
/** Lets the /stream answer finish; set by the test that reads it. */
let release: (() => void) | null = null;

/** Deterministic bytes for the big body, and its hash. */
function bigChunk(index: number): Buffer {
  const chunk = Buffer.alloc(64 * 1024);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (index * 7 + i) % 251;
  return chunk;
}
const bigHash = (() => {
  const hash = createHash('sha256');
  for (let i = 0; i < BIG_BYTES / (64 * 1024); i++) hash.update(bigChunk(i));
  return hash.digest('hex');
})();

before(async () => {
  upstream = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      if (path.startsWith('/echo')) {
        response.writeHead(201, {
          'content-type': 'application/json',
          'x-upstream': 'yes',
          'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
        });
        return response.end(JSON.stringify({ method: request.method, url: request.url }));
      }
      if (path === '/big') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        let index = 0;
        const pump = () => {
          while (index < BIG_BYTES / (64 * 1024)) {
            if (!response.write(bigChunk(index++))) return void response.once('drain', pump);
          }
          response.end();
        };
        return pump();
      }
      if (path === '/gzip') {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return response.end(gzipSync(GZIPPED));
      }
      if (path === '/stream') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('first;');
        const finish = () => response.end('last');
        if (release === null) return finish();
        const waiting = release;
        release = finish;
        return waiting();
      }
      if (path === '/empty') {
        response.writeHead(204, { 'x-empty': 'yes' });
        return response.end();
      }
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' });
      response.end(request.method === 'HEAD' ? undefined : 'plain');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;

  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});

after(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

await describeApi(
  'gateway and replay',
  (get) => {
    const key = () => get().alice.bucketKey;
    const gatewayPath = (rest: string) => `/gateway/${key()}/${rest}`;
    const send = (options: InjectOptions) => get().traffic.inject(options);
    const message = (uuid: string) => get().data('GET', `/buckets/${key()}/messages/${uuid}`);

    test('method, headers, query and body go upstream; the answer comes back with Vigil-Message-Id', async () => {
      const tag = `fwd${Date.now()}`;
      const body = Buffer.concat([Buffer.from([0, 255, 1]), randomBytes(1000)]);
      const response = await send({
        method: 'PUT',
        url: gatewayPath(`http/${origin}/echo/a%20b/${tag}?x=1&x=2&y=%2F`),
        headers: {
          'content-type': 'application/octet-stream',
          'x-custom': 'kept',
          connection: 'x-drop',
          'x-drop': 'dropped',
          'proxy-authorization': 'Basic eA==',
          authorization: 'Bearer upstream-token',
        },
        payload: body,
      });
      assert.equal(response.statusCode, 201, response.body);
      assert.equal(response.headers['x-upstream'], 'yes');
      assert.equal(
        response.headers['set-cookie'],
        undefined,
        'the upstream sets no cookie through the gateway',
      );
      assert.equal(response.headers['content-security-policy'], 'sandbox');
      const id = response.headers['vigil-message-id'] as string;
      assert.match(id, UUID);
      assert.deepEqual(response.json(), { method: 'PUT', url: `/echo/a%20b/${tag}?x=1&x=2&y=%2F` });

      const got = received.filter((r) => r.url.includes(tag));
      assert.equal(got.length, 1);
      const seen = got[0]!;
      assert.equal(seen.method, 'PUT');
      assert.equal(seen.headers.host, origin);
      assert.equal(seen.headers['x-custom'], 'kept');
      assert.equal(seen.headers.authorization, 'Bearer upstream-token');
      assert.equal(seen.headers['x-drop'], undefined);
      assert.equal(seen.headers['proxy-authorization'], undefined);
      assert.equal(seen.headers['content-type'], 'application/octet-stream');
      assert.ok(seen.body.equals(body), 'the body arrives byte for byte');

      const stored = await message(id);
      assert.equal(stored.uuid, id);
      assert.equal(stored.source, 'gateway');
      assert.equal(stored.note, null);
      assert.equal(stored.request.method, 'PUT');
      assert.equal(stored.request.url, `http://${origin}/echo/a%20b/${tag}?x=1&x=2&y=%2F`);
      assert.deepEqual(stored.request.params, { x: ['1', '2'], y: ['/'] });
      assert.deepEqual(stored.request.headers.host, [origin]);
      assert.deepEqual(stored.request.headers['x-custom'], ['kept']);
      assert.equal(stored.request.headers['x-drop'], undefined);
      assert.equal(stored.request.body_encoding, 'base64');
      assert.ok(Buffer.from(stored.request.body, 'base64').equals(body));
      assert.equal(stored.response.status, 201);
      assert.equal(stored.response.reason, 'Created');
      assert.deepEqual(stored.response.headers['x-upstream'], ['yes']);
      assert.deepEqual(stored.response.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
      assert.equal(stored.response.body, response.body);
      assert.ok(stored.response.response_time > 0 && stored.response.response_time < 30);
      assert.ok(stored.response.timestamp >= stored.request.timestamp);
      assert.ok(
        stored.request.timestamp <= Date.now() / 1000 && stored.request.timestamp > Date.now() / 1000 - 60,
      );
    });

    test('a 5 MB response streams back complete; the stored copy is cut at the limit and says so', async () => {
      const response = await send({ method: 'GET', url: gatewayPath(`http/${origin}/big`) });
      assert.equal(response.statusCode, 200);
      assert.equal(response.rawPayload.length, BIG_BYTES);
      assert.equal(createHash('sha256').update(response.rawPayload).digest('hex'), bigHash);
      const stored = await message(response.headers['vigil-message-id'] as string);
      assert.equal(stored.response.body_encoding, 'base64');
      assert.equal(stored.response.size_bytes, 1024 * 1024);
      assert.ok(
        Buffer.from(stored.response.body, 'base64').equals(response.rawPayload.subarray(0, 1024 * 1024)),
      );
      assert.match(stored.note, /longer than 1048576 bytes/);
    });

    test('the body reaches the client while the upstream is still sending', { timeout: 15_000 }, async () => {
      const address = await get().traffic.listen({ port: 0, host: '127.0.0.1' });
      // The upstream holds back the end of its body until this test has read the beginning.
      const upstreamWaiting = new Promise<void>((resolve) => (release = resolve));
      const response = await undiciRequest(`${address}${gatewayPath(`http/${origin}/stream`)}`);
      assert.equal(response.statusCode, 200);
      const id = response.headers['vigil-message-id'] as string;
      const reader = response.body[Symbol.asyncIterator]();
      const first = await reader.next();
      assert.equal(Buffer.from(first.value as Buffer).toString(), 'first;');
      await upstreamWaiting;
      const finish = release as (() => void) | null;
      release = null;
      finish?.();
      let rest = '';
      for (let next = await reader.next(); !next.done; next = await reader.next()) {
        rest += Buffer.from(next.value as Buffer).toString();
      }
      assert.equal(rest, 'last');
      const stored = await message(id);
      assert.equal(stored.response.body, 'first;last');
    });

    test('a gzip answer goes back as sent and is stored decoded', async () => {
      const response = await send({ method: 'GET', url: gatewayPath(`http/${origin}/gzip`) });
      assert.equal(response.headers['content-encoding'], 'gzip');
      assert.ok(
        response.rawPayload.equals(gzipSync(GZIPPED)),
        'the compressed bytes as the upstream sent them',
      );
      const stored = await message(response.headers['vigil-message-id'] as string);
      assert.equal(stored.response.body, GZIPPED);
      assert.deepEqual(stored.response.headers['content-encoding'], ['gzip']);
    });

    test('HEAD and 204 answers are passed on and stored', async () => {
      const head = await send({ method: 'HEAD', url: gatewayPath(`http/${origin}/plain`) });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-length'], '5');
      const headStored = await message(head.headers['vigil-message-id'] as string);
      assert.equal(headStored.request.method, 'HEAD');
      assert.equal(headStored.response.status, 200);
      assert.equal(headStored.response.body, '');

      const empty = await send({ method: 'DELETE', url: gatewayPath(`http/${origin}/empty`) });
      assert.equal(empty.statusCode, 204);
      assert.equal(empty.headers['x-empty'], 'yes');
      const emptyStored = await message(empty.headers['vigil-message-id'] as string);
      assert.equal(emptyStored.response.status, 204);
    });

    test('an upstream that refuses the connection is 502; the request is stored with the reason', async () => {
      const response = await send({
        method: 'POST',
        url: gatewayPath(`http/127.0.0.1:${closedPort}/nothing?q=1`),
        headers: { 'content-type': 'text/plain' },
        payload: 'lost',
      });
      assert.equal(response.statusCode, 502, response.body);
      const body = response.json();
      assert.equal(body.data, null);
      assert.equal(body.error.code, 'bad_gateway');
      assert.match(body.error.message, /connection refused by 127\.0\.0\.1:\d+/);
      const stored = await message(response.headers['vigil-message-id'] as string);
      assert.equal(stored.source, 'gateway');
      assert.equal(stored.response, null);
      assert.equal(stored.request.body, 'lost');
      assert.match(stored.note, /connection refused/);
      const errors = await get().data('GET', `/buckets/${key()}/errors?count=1000`);
      assert.ok(errors.some((m: { uuid: string }) => m.uuid === stored.uuid));
    });

    test('a scheme other than http(s), a bad host, or no host is 400; an unknown bucket 404', async () => {
      for (const rest of ['ftp/example.com/x', 'file/etc/passwd', `http/user@${origin}/x`, 'http', 'http/']) {
        const response = await send({ method: 'GET', url: gatewayPath(rest) });
        assert.equal(response.statusCode, 400, `${rest}: ${response.body}`);
        assert.equal(response.json().error.code, 'validation_failed');
      }
      await get().expectError(
        { method: 'GET', url: `/gateway/zzzzzzzzzzzz/http/${origin}/x`, as: null, on: 'traffic' },
        404,
        'not_found',
      );
    });

    test('by default (GATEWAY_EGRESS_POLICY=public-only), private and local upstreams are refused with 502 and stored', async () => {
      const server: Server = await createServer(
        {
          ...loadConfig({ PUBLIC_URL, LOG_LEVEL: 'silent', DATA_DIR: os.tmpdir() }),
        },
        { store: get().store, worker: false },
      );
      try {
        const port = origin.split(':')[1];
        const before = received.length;
        for (const [host, reason] of [
          [`127.0.0.1:${port}`, /127\.0\.0\.1 is a loopback address/],
          [`localhost:${port}`, /localhost resolves to .*loopback address/],
          ['10.0.0.1', /10\.0\.0\.1 is a private address/],
          ['169.254.169.254', /169\.254\.169\.254 is a cloud metadata address/],
          [`[::1]:${port}`, /::1 is a loopback address/],
        ] as const) {
          const response = await server.traffic.inject({
            method: 'GET',
            url: `/gateway/${key()}/http/${host}/x`,
          });
          assert.equal(response.statusCode, 502, `${host}: ${response.body}`);
          assert.equal(response.json().error.code, 'bad_gateway');
          assert.match(response.json().error.message, /refused by the egress policy/);
          const stored = await message(response.headers['vigil-message-id'] as string);
          assert.equal(stored.response, null);
          assert.match(stored.note, reason);
        }
        assert.equal(received.length, before, 'nothing reached the upstream');

        // Replay goes through the same policy.
        const allowed = await send({ method: 'GET', url: gatewayPath(`http/${origin}/echo/policy`) });
        const original = allowed.headers['vigil-message-id'] as string;
        const replay = await server.app.inject({
          method: 'POST',
          url: `/buckets/${key()}/messages/${original}/replay`,
          headers: { authorization: `Bearer ${get().alice.token}` },
        });
        assert.equal(replay.statusCode, 502, replay.body);
        const failed = await message(replay.headers['vigil-message-id'] as string);
        assert.equal(failed.source, 'replay');
        assert.equal(failed.response, null);
        assert.match(failed.note, new RegExp(`^replay of ${original}: refused by the egress policy`));
      } finally {
        await server.stop();
      }
    });

    test('replay sends a gateway message again and stores the answer as a new message', async () => {
      const tag = `replay${Date.now()}`;
      const first = await send({
        method: 'POST',
        url: gatewayPath(`http/${origin}/echo/${tag}?n=1`),
        headers: { 'content-type': 'application/json', 'x-custom': 'again' },
        payload: '{"once": true}',
      });
      const original = first.headers['vigil-message-id'] as string;
      const response = await get().call({
        method: 'POST',
        url: `/buckets/${key()}/messages/${original}/replay`,
      });
      assert.equal(response.statusCode, 201, response.body);
      const replayed = response.json().data;
      assert.match(replayed.uuid, UUID);
      assert.notEqual(replayed.uuid, original);
      assert.equal(response.headers['vigil-message-id'], replayed.uuid);
      assert.equal(replayed.source, 'replay');
      assert.equal(replayed.note, `replay of ${original}`);
      assert.equal(replayed.request.method, 'POST');
      assert.equal(replayed.request.url, `http://${origin}/echo/${tag}?n=1`);
      assert.equal(replayed.request.body, '{"once": true}');
      assert.equal(replayed.response.status, 201);
      assert.deepEqual(JSON.parse(replayed.response.body), { method: 'POST', url: `/echo/${tag}?n=1` });
      assert.ok(replayed.response.response_time > 0);

      const got = received.filter((r) => r.url.includes(tag));
      assert.equal(got.length, 2, 'the upstream saw the request twice');
      assert.equal(got[1]!.headers['x-custom'], 'again');
      assert.equal(got[1]!.headers.host, origin);
      assert.equal(got[1]!.body.toString(), '{"once": true}');

      const list = await get().data('GET', `/buckets/${key()}/messages?count=1000`);
      assert.ok(list.some((m: { uuid: string }) => m.uuid === original));
      assert.ok(list.some((m: { uuid: string }) => m.uuid === replayed.uuid));
    });

    test('replay decodes a Base64 body; a message without a request is 409', async () => {
      const tag = `b64${Date.now()}`;
      const bytes = Buffer.concat([Buffer.from([0xff, 0x00]), randomBytes(64)]);
      const [created] = await get().data('POST', `/buckets/${key()}/messages`, {
        request: {
          method: 'PATCH',
          url: `http://${origin}/echo/${tag}`,
          headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': '999', Host: 'elsewhere' },
          body: bytes.toString('base64'),
          body_encoding: 'base64',
        },
      });
      const replay = await get().call({
        method: 'POST',
        url: `/buckets/${key()}/messages/${created.uuid}/replay`,
      });
      assert.equal(replay.statusCode, 201, replay.body);
      const seen = received.filter((r) => r.url.includes(tag));
      assert.equal(seen.length, 1);
      assert.ok(seen[0]!.body.equals(bytes));
      assert.equal(seen[0]!.headers.host, origin);
      assert.equal(seen[0]!.headers['content-length'], String(bytes.length));

      const [responseOnly] = await get().data('POST', `/buckets/${key()}/messages`, {
        response: { status: 200, body: 'orphan' },
      });
      await get().expectError(
        { method: 'POST', url: `/buckets/${key()}/messages/${responseOnly.uuid}/replay` },
        409,
        'conflict',
      );
    });

    test('replay to an unreachable upstream is 502 and stores the failed attempt', async () => {
      const [created] = await get().data('POST', `/buckets/${key()}/messages`, {
        request: { method: 'GET', url: `http://127.0.0.1:${closedPort}/gone` },
      });
      const response = await get().call({
        method: 'POST',
        url: `/buckets/${key()}/messages/${created.uuid}/replay`,
      });
      assert.equal(response.statusCode, 502, response.body);
      assert.equal(response.json().error.code, 'bad_gateway');
      const failed = await message(response.headers['vigil-message-id'] as string);
      assert.equal(failed.source, 'replay');
      assert.equal(failed.response, null);
      assert.equal(failed.request.url, `http://127.0.0.1:${closedPort}/gone`);
      assert.match(failed.note, new RegExp(`^replay of ${created.uuid}: connection refused`));
    });

    test("replay of another account's message is 404; a token without message:write is 403", async () => {
      const { bob, alice } = get();
      const [bobs] = (
        await get().call({
          method: 'POST',
          url: `/buckets/${bob.bucketKey}/messages`,
          as: bob,
          body: { request: { method: 'GET', url: `http://${origin}/echo/bob` } },
        })
      ).json().data;
      await get().expectError(
        { method: 'POST', url: `/buckets/${bob.bucketKey}/messages/${bobs.uuid}/replay` },
        404,
        'not_found',
      );
      await get().expectError(
        { method: 'POST', url: `/buckets/${alice.bucketKey}/messages/${bobs.uuid}/replay` },
        404,
        'not_found',
      );
      await get().expectError(
        { method: 'POST', url: `/buckets/${alice.bucketKey}/messages/not-a-uuid/replay` },
        404,
        'not_found',
      );
      const reader = await get().tokenWith(['api:read']);
      await get().expectError(
        { method: 'POST', url: `/buckets/${bob.bucketKey}/messages/${bobs.uuid}/replay`, as: reader },
        403,
        'forbidden',
      );
      await get().expectError(
        { method: 'POST', url: `/buckets/${alice.bucketKey}/messages/${bobs.uuid}/replay`, as: null },
        401,
        'unauthorized',
      );
      assert.equal(received.filter((r) => r.url === '/echo/bob').length, 0, 'nothing was sent for bob');
    });
  },
  { env: { GATEWAY_EGRESS_POLICY: 'allow-all' } },
);
