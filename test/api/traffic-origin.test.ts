import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loggedUrl } from '../../src/api/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createServer } from '../../src/main.js';
import { describeApi, PUBLIC_URL, TRAFFIC_URL } from '../helpers/api.js';

/** A local upstream that answers like a hostile site would, and records what reaches it. */
interface Received {
  url: string;
  headers: http.IncomingHttpHeaders;
}
const received: Received[] = [];
let upstream: http.Server;
let origin = '';
let port = '';

before(async () => {
  upstream = http.createServer((request, response) => {
    received.push({ url: request.url ?? '', headers: request.headers });
    request.resume();
    response.writeHead(200, {
      'content-type': 'text/html',
      'set-cookie': ['vigil_session=forged; Path=/', 'tracker=1; Path=/'],
      'service-worker-allowed': '/',
      'clear-site-data': '"*"',
      'content-security-policy': "default-src 'self'",
      'x-upstream': 'yes',
    });
    response.end('<script>navigator.serviceWorker.register("/sw.js", { scope: "/" })</script>');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = String((upstream.address() as AddressInfo).port);
  origin = `127.0.0.1:${port}`;
});

after(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const lastReceived = (tag: string) => received.filter((r) => r.url.includes(tag)).at(-1);

await describeApi(
  'the traffic origin',
  (get) => {
    const key = () => get().alice.bucketKey;
    const message = (uuid: string) => get().data('GET', `/buckets/${key()}/messages/${uuid}`);

    test('capture and gateway paths on the API origin answer 404 naming the traffic URL', async () => {
      const before = received.length;
      for (const url of [`/capture/${key()}/x`, `/gateway/${key()}/http/${origin}/x`, '/capture']) {
        for (const method of ['GET', 'POST'] as const) {
          const error = await get().expectError(
            {
              method,
              url,
              as: null,
              ...(method === 'POST' && { body: 'x=1' }),
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
            },
            404,
            'not_found',
          );
          assert.match(error.message, new RegExp(`${TRAFFIC_URL}/(capture|gateway)/<bucket_key>`));
        }
      }
      assert.equal(received.length, before, 'nothing went upstream from the API origin');
    });

    test('the traffic origin serves nothing but capture and gateway URLs', async () => {
      for (const url of ['/', '/app/', '/signin', '/buckets', `/public/messages/x`, '/docs', '/health']) {
        const error = await get().expectError(
          { method: 'GET', url, as: null, on: 'traffic' },
          404,
          'not_found',
        );
        assert.match(error.message, /No traffic URL/);
      }
    });

    test('a relayed answer is sandboxed and sets no cookie, service worker scope or site-data wipe', async () => {
      const response = await get().traffic.inject({
        method: 'GET',
        url: `/gateway/${key()}/http/${origin}/page-relay`,
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['x-upstream'], 'yes');
      for (const header of ['set-cookie', 'service-worker-allowed', 'clear-site-data']) {
        assert.equal(response.headers[header], undefined, header);
      }
      assert.deepEqual(response.headers['content-security-policy'], ["default-src 'self'", 'sandbox']);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      // The stored message keeps what the upstream really answered.
      const stored = await message(response.headers['vigil-message-id'] as string);
      assert.deepEqual(stored.response.headers['set-cookie'], [
        'vigil_session=forged; Path=/',
        'tracker=1; Path=/',
      ]);
      assert.deepEqual(stored.response.headers['service-worker-allowed'], ['/']);
    });

    test("the service's cookies never reach an upstream nor a stored capture; others do", async () => {
      const cookie = 'vigil_session=SECRET-SESSION; app=1; vigil_csrf=SECRET-CSRF; other=2';
      const relayed = await get().traffic.inject({
        method: 'GET',
        url: `/gateway/${key()}/http/${origin}/cookie-relay`,
        headers: { cookie },
      });
      assert.equal(relayed.statusCode, 200);
      assert.equal(lastReceived('cookie-relay')?.headers.cookie, 'app=1; other=2');
      const sent = await message(relayed.headers['vigil-message-id'] as string);
      assert.doesNotMatch(JSON.stringify(sent), /SECRET/);

      const captured = await get().traffic.inject({
        method: 'POST',
        url: `/capture/${key()}/cookie-capture`,
        headers: { cookie: 'vigil_session=SECRET-SESSION' },
        payload: 'x',
      });
      assert.equal(captured.statusCode, 200);
      assert.equal(captured.headers['content-security-policy'], 'sandbox');
      const stored = await message(captured.json().captured);
      assert.equal(stored.request.headers.cookie, undefined, 'an emptied Cookie header is dropped');
    });

    test('a bucket can require its own token on capture and gateway; the token goes nowhere else', async () => {
      const reader = await get().tokenWith(['api:read']);
      await get().expectError(
        { method: 'POST', url: `/buckets/${key()}/auth-token`, as: reader },
        403,
        'forbidden',
      );
      await get().expectError(
        { method: 'POST', url: `/buckets/${key()}/auth-token`, as: get().bob },
        404,
        'not_found',
      );
      const bucket = await get().data('POST', `/buckets/${key()}/auth-token`, undefined, 200);
      const token: string = bucket.auth_token;
      assert.match(token, /^vgl_ba_/);
      try {
        const capture = (headers: Record<string, string>, query = '') =>
          get().traffic.inject({
            method: 'POST',
            url: `/capture/${key()}/guarded${query}`,
            headers,
            payload: 'x',
          });
        const missing = await capture({});
        assert.equal(missing.statusCode, 401);
        assert.match(missing.json().error.message, /Vigil-Bucket-Auth/);
        assert.equal((await capture({ 'vigil-bucket-auth': `${token}x` })).statusCode, 401);
        assert.equal((await capture({ 'Vigil-Bucket-Auth': token })).statusCode, 200);
        assert.equal((await capture({ 'Runscope-Bucket-Auth': token })).statusCode, 200);
        const byQuery = await capture({}, `?a=1&Vigil-Bucket-Auth=${token}&b=%20`);
        assert.equal(byQuery.statusCode, 200);
        const stored = await message(byQuery.json().captured);
        assert.equal(stored.request.url, `${TRAFFIC_URL}/capture/${key()}/guarded?a=1&b=%20`);
        assert.equal(stored.request.headers['vigil-bucket-auth'], undefined);

        const gateway = await get().traffic.inject({
          method: 'GET',
          url: `/gateway/${key()}/http/${origin}/guarded-relay?runscope-bucket-auth=${token}&q=1`,
        });
        assert.equal(gateway.statusCode, 200);
        const seen = lastReceived('guarded-relay')!;
        assert.equal(seen.url, '/guarded-relay?q=1', 'the token parameter is not passed upstream');
        assert.doesNotMatch(JSON.stringify(seen.headers), new RegExp(token));
        const refused = await get().traffic.inject({
          method: 'GET',
          url: `/gateway/${key()}/http/${origin}/x`,
        });
        assert.equal(refused.statusCode, 401);

        const rotated = await get().data('POST', `/buckets/${key()}/auth-token`, undefined, 200);
        assert.notEqual(rotated.auth_token, token);
        assert.equal(
          (await capture({ 'vigil-bucket-auth': token })).statusCode,
          401,
          'the old token is void',
        );
      } finally {
        const cleared = await get().data('DELETE', `/buckets/${key()}/auth-token`, undefined, 200);
        assert.equal(cleared.auth_token, null);
      }
      const open = await get().traffic.inject({
        method: 'POST',
        url: `/capture/${key()}/open`,
        payload: 'x',
      });
      assert.equal(open.statusCode, 200, 'the key alone works again');
    });

    test('public share JSON does not carry the bucket key', async () => {
      const captured = await get().traffic.inject({
        method: 'POST',
        url: `/capture/${key()}/shared`,
        payload: 'x',
      });
      const uuid = captured.json().captured;
      const shared = await get().data('PUT', `/buckets/${key()}/shared/${uuid}`, undefined, 200);
      const token = new URL(shared.public_url).pathname.split('/').at(-1);
      const page = await get().call({
        method: 'GET',
        url: `/public/messages/${token}`,
        as: null,
        headers: { accept: 'application/json' },
      });
      assert.equal(page.statusCode, 200, page.body);
      assert.equal(page.json().data.uuid, uuid);
      assert.equal('bucket_key' in page.json().data, false);
      assert.doesNotMatch(page.body, new RegExp(key()), 'not even in the captured URL');
      assert.equal(page.json().data.request.path, '/capture/[bucket-key]/shared');
      const html = await get().call({
        method: 'GET',
        url: `/public/messages/${token}`,
        as: null,
        headers: { accept: 'text/html' },
      });
      assert.equal(html.statusCode, 200);
      assert.doesNotMatch(html.body, new RegExp(key()));
      // The owner still sees the message as it was.
      assert.equal(
        (await get().data('GET', `/buckets/${key()}/messages/${uuid}`)).request.path,
        `/capture/${key()}/shared`,
      );
    });

    test('API answers are not sniffed or framed; the docs page has a policy of its own', async () => {
      const json = await get().call({ method: 'GET', url: '/buckets' });
      assert.equal(json.headers['x-content-type-options'], 'nosniff');
      assert.equal(json.headers['x-frame-options'], 'DENY');
      const docs = await get().call({ method: 'GET', url: '/docs', as: null });
      assert.equal(docs.statusCode, 200);
      const csp = String(docs.headers['content-security-policy']);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /upgrade-insecure-requests|validator\.swagger\.io/);
      assert.equal(docs.headers['x-frame-options'], 'DENY');
    });
  },
  { env: { GATEWAY_EGRESS_POLICY: 'allow-all' } },
);

await describeApi('the gateway with its default egress policy', (get) => {
  const key = () => get().alice.bucketKey;

  test('loopback, private, link-local and metadata upstreams are refused in every spelling', async () => {
    const before = received.length;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `127.1:${port}`,
      `2130706433:${port}`,
      `0x7f000001:${port}`,
      `0177.0.0.1:${port}`,
      `[::1]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `[::ffff:7f00:1]:${port}`,
      `0.0.0.0:${port}`,
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '[fd00:ec2::254]',
      '[fe80::1]',
      '[fc00::1]',
      'metadata.google.internal',
    ]) {
      const response = await get().traffic.inject({
        method: 'GET',
        url: `/gateway/${key()}/http/${host}/latest/meta-data`,
      });
      assert.ok([400, 502].includes(response.statusCode), `${host}: ${response.statusCode} ${response.body}`);
      if (response.statusCode === 502) {
        assert.match(response.json().error.message, /refused by the egress policy|could not resolve/, host);
      }
    }
    assert.equal(received.length, before, 'nothing reached the local upstream');
  });

  test('replay of a stored request to a private address is refused too', async () => {
    const [stored] = await get().data('POST', `/buckets/${key()}/messages`, {
      request: { method: 'GET', url: `http://127.0.0.1:${port}/replayed`, headers: {}, body: '' },
    });
    const replay = await get().call({
      method: 'POST',
      url: `/buckets/${key()}/messages/${stored.uuid}/replay`,
    });
    assert.equal(replay.statusCode, 502, replay.body);
    assert.match(replay.json().error.message, /refused by the egress policy/);
    assert.equal(lastReceived('replayed'), undefined);
  });
});

await describeApi(
  'host-form gateway URLs',
  (get) => {
    const key = () => get().alice.bucketKey;

    test('<host with dashes>-<key>.<domain> forwards to the host, the port from Vigil-Request-Port', async () => {
      const response = await get().traffic.inject({
        method: 'GET',
        url: '/by-host?x=1',
        headers: { host: `127-0-0-1-${key()}.gw.vigil.test`, 'vigil-request-port': port },
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-security-policy'] !== undefined, true);
      const seen = lastReceived('by-host')!;
      assert.equal(seen.url, '/by-host?x=1');
      assert.equal(seen.headers.host, origin);
      assert.equal(seen.headers['vigil-request-port'], undefined, 'the port header is not passed on');
      const stored = await get().data(
        'GET',
        `/buckets/${key()}/messages/${response.headers['vigil-message-id']}`,
      );
      assert.equal(stored.request.url, `http://${origin}/by-host?x=1`);

      const legacy = await get().traffic.inject({
        method: 'GET',
        url: '/by-host-legacy',
        headers: { host: `127-0-0-1-${key()}.gw.vigil.test:8443`, 'runscope-request-port': port },
      });
      assert.equal(legacy.statusCode, 200, legacy.body);
      assert.equal(lastReceived('by-host-legacy')?.url, '/by-host-legacy');
    });

    test('<key>.<domain> is the capture URL; other hosts under the domain are 404', async () => {
      const captured = await get().traffic.inject({
        method: 'POST',
        url: '/hook?y=2',
        headers: { host: `${key()}.gw.vigil.test` },
        payload: 'x',
      });
      assert.equal(captured.statusCode, 200, captured.body);
      const stored = await get().data('GET', `/buckets/${key()}/messages/${captured.json().captured}`);
      assert.equal(stored.request.url, `http://${key()}.gw.vigil.test/hook?y=2`);
      const unknown = await get().traffic.inject({
        method: 'GET',
        url: '/x',
        headers: { host: 'example-com-zzzzzzzzzzzz.gw.vigil.test' },
      });
      assert.equal(unknown.statusCode, 404);
    });

    test('buckets name the domain of their host-form URLs', async () => {
      const bucket = await get().data('GET', `/buckets/${key()}`);
      assert.equal(bucket.gateway_domain, 'gw.vigil.test');
    });
  },
  { env: { GATEWAY_DOMAIN: 'gw.vigil.test', GATEWAY_EGRESS_POLICY: 'allow-all' } },
);

test('capture and gateway query strings are masked in logs', () => {
  assert.equal(
    loggedUrl('/capture/abcdefabcdef/hook?api_key=secret'),
    '/capture/abcdefabcdef/hook?[parameters]',
  );
  assert.equal(
    loggedUrl('/gateway/abcdefabcdef/https/example.com/x?token=1'),
    '/gateway/abcdefabcdef/https/example.com/x?[parameters]',
  );
  assert.equal(loggedUrl('/capture/abcdefabcdef/hook'), '/capture/abcdefabcdef/hook');
});

test('the SQLite data directory and database are private to their owner', async () => {
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-perm-')), 'data');
  const server = await createServer(loadConfig({ PUBLIC_URL, LOG_LEVEL: 'silent', DATA_DIR: dataDir }), {
    worker: false,
    scheduler: false,
  });
  try {
    assert.equal(fs.statSync(dataDir).mode & 0o777, 0o700);
    for (const name of fs.readdirSync(dataDir).filter((n) => n.startsWith('vigil.db'))) {
      assert.equal(fs.statSync(path.join(dataDir, name)).mode & 0o777, 0o600, name);
    }
  } finally {
    await server.close();
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }
});
