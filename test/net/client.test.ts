import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import zlib from 'node:zlib';
import {
  HttpFailure,
  type HttpFailureKind,
  type HttpSession,
  type HttpSessionOptions,
  type InboundResponse,
  openHttpSession,
  type OutboundRequest,
  USER_AGENT,
} from '../../src/net/client.js';

const fixture = (name: string): string => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
const SERVER_CERT = fixture('server-cert.pem');
const SERVER_KEY = fixture('server-key.pem');
const CLIENT_PEM = fixture('client.pem');
const CLIENT_CERT = fixture('client-cert.pem');

interface Served {
  /** Base URL on 127.0.0.1. */
  url: string;
  port: number;
  /** Connections the server accepted. */
  connections: () => number;
  /** Connections still open. */
  open: () => number;
}

const servers: (http.Server | net.Server)[] = [];
const sessions: HttpSession[] = [];

after(async () => {
  await Promise.all(sessions.map((session) => session.close()));
  for (const server of servers) {
    if (server instanceof http.Server) server.closeAllConnections();
    server.close();
  }
});

async function listen(server: http.Server | net.Server, scheme: string, event: string): Promise<Served> {
  servers.push(server);
  let connections = 0;
  const sockets = new Set<net.Socket>();
  server.on(event, (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    connections: () => connections,
    open: () => sockets.size,
  };
}

function serve(handler: http.RequestListener): Promise<Served> {
  return listen(http.createServer({ keepAliveTimeout: 30_000 }, handler), 'http', 'connection');
}

function serveTls(handler: http.RequestListener, options: https.ServerOptions = {}): Promise<Served> {
  const server = https.createServer(
    { cert: SERVER_CERT, key: SERVER_KEY, keepAliveTimeout: 30_000, ...options },
    handler,
  );
  return listen(server, 'https', 'secureConnection');
}

/** A server that answers every connection with `raw` bytes, then closes. */
function serveRaw(raw: string): Promise<Served> {
  const server = net.createServer((socket) => {
    socket.once('data', () => socket.end(raw));
  });
  return listen(server, 'http', 'connection');
}

function session(options: Partial<HttpSessionOptions> = {}): HttpSession {
  const opened = openHttpSession({
    egress: 'allow-all',
    verifySsl: true,
    cookies: false,
    maxBodyBytes: 1024 * 1024,
    ...options,
  });
  sessions.push(opened);
  return opened;
}

function request(url: string, extra: Partial<OutboundRequest> = {}): OutboundRequest {
  return { method: 'GET', url, headers: {}, body: null, timeoutMs: 5000, ...extra };
}

async function fails(
  sent: Promise<InboundResponse>,
  kind: HttpFailureKind,
  message?: RegExp,
): Promise<HttpFailure> {
  try {
    await sent;
  } catch (error) {
    assert.ok(error instanceof HttpFailure, `expected an HttpFailure, got ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail(`expected a ${kind} failure`);
}

/** The phases run back to back, so they add up to the response time. */
function phaseSum(response: InboundResponse): number {
  return Object.values(response.timings).reduce((sum, value) => sum + value, 0);
}

/** Echoes the request as JSON: method, url, raw header lines, body as base64. */
function echo(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        method: req.method,
        url: req.url,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('base64'),
      }),
    );
  });
}

interface Echoed {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

function echoed(response: InboundResponse): Echoed {
  return JSON.parse(response.body.toString('utf8')) as Echoed;
}

describe('responses', () => {
  test('status, reason and headers: lower-case names, every value in order', async () => {
    const server = await serve((_req, res) => {
      res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2']);
      res.setHeader('X-Multi', ['one', 'two']);
      res.writeHead(418, 'Short And Stout', { 'X-Case': 'Kept' });
      res.end('teapot');
    });
    const response = await session().send(request(`${server.url}/tea`));
    assert.equal(response.status, 418);
    assert.equal(response.reason, 'Short And Stout');
    assert.deepEqual(response.headers['set-cookie'], ['a=1; Path=/', 'b=2']);
    assert.deepEqual(response.headers['x-multi'], ['one', 'two']);
    assert.deepEqual(response.headers['x-case'], ['Kept']);
    assert.ok(Object.keys(response.headers).every((name) => name === name.toLowerCase()));
    assert.equal(response.body.toString(), 'teapot');
    assert.equal(response.sizeBytes, 6);
    assert.equal(response.truncated, false);
    assert.equal(response.remoteAddress, '127.0.0.1');
    assert.equal(response.url, `${server.url}/tea`);
  });

  test('without a reason in the status line, the standard phrase', async () => {
    const server = await serveRaw('HTTP/1.1 404 \r\ncontent-length: 2\r\nconnection: close\r\n\r\nno');
    const response = await session().send(request(server.url));
    assert.equal(response.status, 404);
    assert.equal(response.reason, 'Not Found');
    assert.equal(response.body.toString(), 'no');
  });

  test('HEAD and 204 responses have no body', async () => {
    const server = await serve((req, res) => {
      res.writeHead(req.method === 'HEAD' ? 200 : 204, {
        'content-length': req.method === 'HEAD' ? '1234' : '0',
      });
      res.end();
    });
    const client = session();
    const head = await client.send(request(server.url, { method: 'HEAD' }));
    assert.equal(head.status, 200);
    assert.deepEqual(head.headers['content-length'], ['1234']);
    assert.equal(head.body.length, 0);
    assert.equal(head.sizeBytes, 0);
    const empty = await client.send(request(server.url, { method: 'DELETE' }));
    assert.equal(empty.status, 204);
    assert.equal(empty.reason, 'No Content');
    assert.equal(empty.body.length, 0);
  });

  test('a binary body arrives byte for byte', async () => {
    const payload = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      randomBytes(200_000),
    ]);
    const server = await serve((_req, res) => res.end(payload));
    const response = await session().send(request(server.url));
    assert.ok(response.body.equals(payload));
    assert.equal(response.sizeBytes, payload.length);
  });

  test('gzip, deflate (wrapped and raw) and br bodies are decoded', async () => {
    const text = 'squeeze me '.repeat(1000);
    const encoded: Record<string, [string, Buffer]> = {
      '/gzip': ['gzip', zlib.gzipSync(text)],
      '/deflate': ['deflate', zlib.deflateSync(text)],
      '/raw-deflate': ['deflate', zlib.deflateRawSync(text)],
      '/br': ['br', zlib.brotliCompressSync(text)],
      '/both': ['gzip, br', zlib.brotliCompressSync(zlib.gzipSync(text))],
    };
    const server = await serve((req, res) => {
      const [coding, body] = encoded[req.url ?? ''] ?? ['identity', Buffer.alloc(0)];
      res.writeHead(200, { 'content-encoding': coding });
      res.end(body);
    });
    const client = session();
    for (const path of Object.keys(encoded)) {
      const response = await client.send(request(`${server.url}${path}`));
      assert.equal(response.body.toString(), text, path);
      assert.equal(response.sizeBytes, text.length, path);
    }
  });

  test('an unknown content-encoding leaves the body as sent; a corrupt one fails', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-encoding': req.url === '/odd' ? 'compress' : 'gzip' });
      res.end('not compressed at all');
    });
    const client = session();
    assert.equal((await client.send(request(`${server.url}/odd`))).body.toString(), 'not compressed at all');
    await fails(client.send(request(`${server.url}/bad`)), 'protocol', /could not be decoded/);
  });

  test('the body is cut at maxBodyBytes and counted whole', async () => {
    const payload = randomBytes(300_000);
    const server = await serve((_req, res) => res.end(payload));
    const response = await session({ maxBodyBytes: 1000 }).send(request(server.url));
    assert.equal(response.truncated, true);
    assert.equal(response.body.length, 1000);
    assert.ok(response.body.equals(payload.subarray(0, 1000)));
    assert.equal(response.sizeBytes, payload.length);
  });

  test('the decoded size counts past the cap too', async () => {
    const text = 'a'.repeat(500_000);
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(text));
    });
    const response = await session({ maxBodyBytes: 10 }).send(request(server.url));
    assert.equal(response.body.toString(), 'aaaaaaaaaa');
    assert.equal(response.truncated, true);
    assert.equal(response.sizeBytes, text.length);
  });

  test('past maxDrainBytes reading stops and the response is marked truncated', async () => {
    const server = await serve((_req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 7);
      let sent = 0;
      const pump = (): void => {
        while (sent < 200 && res.write(chunk)) sent++;
        if (sent < 200) res.once('drain', pump);
        else res.end();
      };
      pump();
    });
    const response = await session({ maxBodyBytes: 100, maxDrainBytes: 1024 * 1024 }).send(
      request(server.url),
    );
    assert.equal(response.truncated, true);
    assert.equal(response.body.length, 100);
    assert.ok(
      response.sizeBytes > 1024 * 1024 && response.sizeBytes < 200 * 64 * 1024,
      String(response.sizeBytes),
    );
  });
});

describe('requests', () => {
  test('sends only the headers given, plus Host, framing and a default user agent', async () => {
    const server = await serve(echo);
    const body = Buffer.from([0, 1, 2, 255, 254]);
    const response = await session().send(
      request(`${server.url}/p?q=1`, {
        method: 'POST',
        headers: { 'X-Custom': ['a', 'b'], 'Content-Type': ['application/octet-stream'] },
        body,
      }),
    );
    const sent = echoed(response);
    assert.equal(sent.method, 'POST');
    assert.equal(sent.url, '/p?q=1');
    assert.equal(Buffer.from(sent.body, 'base64').compare(body), 0);
    const names = sent.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
    assert.deepEqual(names.sort(), [
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-custom',
      'x-custom',
    ]);
    const value = (name: string): string[] =>
      sent.rawHeaders.filter((_, i) => i % 2 === 1 && sent.rawHeaders[i - 1]?.toLowerCase() === name);
    assert.deepEqual(value('x-custom'), ['a', 'b']);
    assert.deepEqual(value('user-agent'), [USER_AGENT]);
    assert.deepEqual(value('content-length'), ['5']);
    assert.match(USER_AGENT, /^Vigil\/\d+\.\d+\.\d+/);
    assert.equal(value('accept-encoding').length, 0);
  });

  test("the request's own user agent and a string body are sent as given", async () => {
    const server = await serve(echo);
    const sent = echoed(
      await session().send(
        request(server.url, { method: 'PUT', headers: { 'user-agent': ['mine/1'] }, body: 'héllo' }),
      ),
    );
    assert.deepEqual(
      sent.rawHeaders.filter((_, i) => sent.rawHeaders[i - 1]?.toLowerCase() === 'user-agent'),
      ['mine/1'],
    );
    assert.equal(Buffer.from(sent.body, 'base64').toString('utf8'), 'héllo');
  });

  test('only http and https URLs are accepted', async () => {
    const client = session();
    await fails(client.send(request('ftp://127.0.0.1/file')), 'invalid_url', /http or https/);
    await fails(client.send(request('not a url')), 'invalid_url', /not a valid URL/);
    await fails(client.send(request('file:///etc/passwd')), 'invalid_url');
  });

  test('a header undici cannot send is an invalid request, not a crash', async () => {
    const server = await serve(echo);
    await fails(
      session().send(request(server.url, { headers: { 'x-bad': ['line\r\nbreak'] } })),
      'invalid_request',
    );
  });
});

describe('failures', () => {
  test('connection refused', async () => {
    const closed = await serve(echo);
    const port = closed.port;
    await new Promise<void>((resolve) => (servers.pop() as http.Server).close(() => resolve()));
    const failure = await fails(
      session().send(request(`http://127.0.0.1:${port}/`)),
      'connect',
      new RegExp(`^connection refused by 127\\.0\\.0\\.1:${port}$`),
    );
    assert.ok(failure.timings.dial_ms > 0);
  });

  test('an unknown host is a dns failure', async () => {
    const resolve = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
    };
    await fails(
      session({ resolve }).send(request('http://nowhere.test/')),
      'dns',
      /could not resolve nowhere\.test/,
    );
  });

  test('a broken response is a protocol failure', async () => {
    const short = await serveRaw('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort');
    await fails(session().send(request(short.url)), 'protocol');
    const garbage = await serveRaw('SMTP ready\r\n\r\n');
    await fails(session().send(request(garbage.url)), 'protocol', /not valid HTTP/);
  });

  test('the timeout covers the whole exchange', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/slow-body') {
        res.writeHead(200);
        res.write('partial');
      }
    });
    const client = session();
    const failure = await fails(
      client.send(request(server.url, { timeoutMs: 150 })),
      'timeout',
      /^no response within 150 ms$/,
    );
    assert.ok(failure.timings.wait_for_response_ms >= 100, JSON.stringify(failure.timings));
    await fails(
      client.send(request(`${server.url}/slow-body`, { timeoutMs: 150 })),
      'timeout',
      /not complete within 150 ms/,
    );
  });

  test('a timeout while connecting gives up the connection attempt', async () => {
    const resolve = (): Promise<LookupAddress[]> => new Promise(() => undefined);
    await fails(
      session({ resolve }).send(request('http://hangs.test/', { timeoutMs: 100 })),
      'timeout',
      /no response within 100 ms/,
    );
  });

  test('an abort signal stops the request', async () => {
    const controller = new AbortController();
    const server = await serve(() => controller.abort());
    const failure = await fails(session().send(request(server.url), controller.signal), 'aborted', /aborted/);
    assert.ok(failure.timings.send_headers_ms > 0);
    await fails(session().send(request(server.url), AbortSignal.abort()), 'aborted');
  });
});

describe('connections and timings', () => {
  test('a fresh connection measures dns and dial, a reused one does not', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const client = session();
    const first = await client.send(request(`http://localhost:${server.port}/`));
    assert.ok(first.timings.dns_lookup_ms > 0, JSON.stringify(first.timings));
    assert.ok(first.timings.dial_ms > 0, JSON.stringify(first.timings));
    assert.equal(first.timings.tls_handshake_ms, 0);
    assert.ok(first.timings.wait_for_response_ms > 0);
    for (let i = 0; i < 3; i++) {
      const again = await client.send(request(`http://localhost:${server.port}/`));
      assert.equal(again.timings.dns_lookup_ms, 0);
      assert.equal(again.timings.dial_ms, 0);
      assert.equal(again.timings.tls_handshake_ms, 0);
      assert.ok(again.timings.wait_for_response_ms > 0);
      assert.ok(Math.abs(phaseSum(again) - again.timeMs) < 0.01, JSON.stringify(again));
    }
    assert.equal(server.connections(), 1, 'one kept-alive connection');
    assert.ok(Math.abs(phaseSum(first) - first.timeMs) < 0.01, JSON.stringify(first));
  });

  test('each session opens its own connections and close() ends them', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const one = session();
    const two = session();
    await one.send(request(server.url));
    await two.send(request(server.url));
    assert.equal(server.connections(), 2);
    await one.close();
    await two.close();
    for (let i = 0; i < 50 && server.open() > 0; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(server.open(), 0);
    await assert.rejects(one.send(request(server.url)), /closed/);
  });
});

describe('TLS', () => {
  test('verifySsl rejects a self-signed certificate; without it the request goes through', async () => {
    const server = await serveTls((_req, res) => res.end('secret'));
    await fails(session().send(request(server.url)), 'tls', /self-signed certificate/);
    const response = await session({ verifySsl: false }).send(request(`https://localhost:${server.port}/`));
    assert.equal(response.body.toString(), 'secret');
    assert.ok(response.timings.tls_handshake_ms > 0, JSON.stringify(response.timings));
    assert.ok(Math.abs(phaseSum(response) - response.timeMs) < 0.01, JSON.stringify(response));
    assert.ok(response.timings.dns_lookup_ms > 0);
    assert.ok(response.timings.dial_ms > 0);
  });

  test('the client certificate is presented', async () => {
    const server = await serveTls(
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(String(peer.subject?.CN));
      },
      { requestCert: true, rejectUnauthorized: true, ca: CLIENT_CERT },
    );
    const response = await session({ verifySsl: false, clientCertificate: CLIENT_PEM }).send(
      request(server.url),
    );
    assert.equal(response.body.toString(), 'vigil-client');
    const without = session({ verifySsl: false }).send(request(server.url));
    await assert.rejects(without, HttpFailure);
  });
  test('a client certificate that cannot be read is a tls failure', async () => {
    const server = await serveTls((_req, res) => res.end('never'));
    await fails(
      session({ verifySsl: false, clientCertificate: 'not a PEM' }).send(request(server.url)),
      'tls',
      /client certificate cannot be used/,
    );
  });
});

describe('redirects', () => {
  async function redirecting(): Promise<Served> {
    return serve((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: '/middle' });
        res.end('moved');
      } else if (req.url === '/middle') {
        res.writeHead(307, { location: '/end?x=1' });
        res.end();
      } else {
        echo(req, res);
      }
    });
  }

  test('are not followed by default', async () => {
    const server = await redirecting();
    const response = await session().send(request(`${server.url}/start`));
    assert.equal(response.status, 302);
    assert.deepEqual(response.headers.location, ['/middle']);
    assert.equal(response.body.toString(), 'moved');
    assert.equal(response.redirects, 0);
  });

  test('are followed when asked, with POST turning into GET on 302', async () => {
    const server = await redirecting();
    const response = await session({ followRedirects: true }).send(
      request(`${server.url}/start`, {
        method: 'POST',
        body: 'data',
        headers: { 'content-type': ['text/plain'] },
      }),
    );
    assert.equal(response.status, 200);
    assert.equal(response.redirects, 2);
    assert.equal(response.url, `${server.url}/end?x=1`);
    const sent = echoed(response);
    assert.equal(sent.method, 'GET');
    assert.equal(sent.url, '/end?x=1');
    assert.equal(sent.body, '');
    assert.ok(!sent.rawHeaders.some((name) => name.toLowerCase() === 'content-type'));
    assert.ok(Math.abs(phaseSum(response) - response.timeMs) < 0.01, JSON.stringify(response.timings));
  });

  test('credentials are not carried to another origin', async () => {
    const target = await serve(echo);
    const server = await serve((_req, res) => {
      res.writeHead(308, { location: `http://localhost:${target.port}/elsewhere` });
      res.end();
    });
    const response = await session({ followRedirects: true }).send(
      request(server.url, { headers: { Authorization: ['Bearer secret'], 'X-Keep': ['yes'] } }),
    );
    const names = echoed(response).rawHeaders.map((name) => name.toLowerCase());
    assert.ok(!names.includes('authorization'));
    assert.ok(names.includes('x-keep'));
  });

  test('stop after 10', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(301, { location: '/again' });
      res.end();
    });
    await fails(
      session({ followRedirects: true }).send(request(server.url)),
      'protocol',
      /more than 10 redirects/,
    );
  });
});

describe('cookies', () => {
  test('the jar sends back what the server set, across requests', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/login') res.setHeader('set-cookie', ['session=abc; Path=/; HttpOnly', 'theme=dark']);
      res.end(req.headers.cookie ?? '');
    });
    const client = session({ cookies: true });
    assert.equal((await client.send(request(`${server.url}/login`))).body.toString(), '');
    assert.equal((await client.send(request(`${server.url}/me`))).body.toString(), 'session=abc; theme=dark');
    const own = await client.send(request(`${server.url}/me`, { headers: { Cookie: ['mine=1'] } }));
    assert.equal(own.body.toString(), 'mine=1; session=abc; theme=dark');
  });

  test('without the jar nothing is kept', async () => {
    const server = await serve((req, res) => {
      res.setHeader('set-cookie', 'session=abc');
      res.end(req.headers.cookie ?? '');
    });
    const client = session();
    await client.send(request(server.url));
    assert.equal((await client.send(request(server.url))).body.toString(), '');
  });
});

describe('egress policy', () => {
  const resolverOf =
    (answers: Record<string, string[]>) =>
    async (hostname: string): Promise<LookupAddress[]> =>
      (answers[hostname] ?? []).map((address) => ({ address, family: net.isIP(address) }));

  test('public-only refuses loopback, private, link-local, metadata and mapped addresses', async () => {
    const server = await serve((_req, res) => res.end('reached'));
    const client = session({ egress: 'public-only' });
    const targets: [string, RegExp][] = [
      [`http://127.0.0.1:${server.port}/`, /127\.0\.0\.1 is a loopback address/],
      [
        `http://localhost:${server.port}/`,
        /localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/,
      ],
      [`http://[::1]:${server.port}/`, /::1 is a loopback address/],
      ['http://10.0.0.1/', /10\.0\.0\.1 is a private address/],
      ['https://192.168.1.1/', /192\.168\.1\.1 is a private address/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address/],
      [`http://[::ffff:127.0.0.1]:${server.port}/`, /::ffff:7f00:1 is a loopback address/],
    ];
    for (const [url, message] of targets) {
      await fails(client.send(request(url)), 'egress_refused', message);
    }
    assert.equal(server.connections(), 0);
  });

  test('public-only checks what the name resolves to, every address of it', async () => {
    const server = await serve((_req, res) => res.end('reached'));
    const resolve = resolverOf({
      'sneaky.test': ['127.0.0.1'],
      'mixed.test': ['93.184.215.14', '127.0.0.1'],
    });
    const client = session({ egress: 'public-only', resolve });
    await fails(
      client.send(request(`http://sneaky.test:${server.port}/`)),
      'egress_refused',
      /sneaky\.test resolves to 127\.0\.0\.1/,
    );
    await fails(client.send(request(`http://mixed.test:${server.port}/`)), 'egress_refused', /mixed\.test/);
    assert.equal(server.connections(), 0);
  });

  test('the connection goes to the address that was checked', async () => {
    const server = await serve((req, res) => res.end(req.headers.host));
    const resolve = resolverOf({ 'service.test': ['127.0.0.1'] });
    const response = await session({ resolve }).send(request(`http://service.test:${server.port}/`));
    assert.equal(response.body.toString(), `service.test:${server.port}`);
    assert.equal(response.remoteAddress, '127.0.0.1');
  });

  test('a redirect to a private address is refused', async () => {
    const server = await serve((req, res) => {
      const target = req.url === '/to-private' ? 'http://10.0.0.1/admin' : `http://127.0.0.2:${server.port}/`;
      res.writeHead(302, { location: target });
      res.end();
    });
    const client = session({ egress: 'public-only', egressAllow: ['127.0.0.1'], followRedirects: true });
    await fails(
      client.send(request(`${server.url}/to-private`)),
      'egress_refused',
      /10\.0\.0\.1 is a private address/,
    );
    await fails(client.send(request(`${server.url}/to-loopback`)), 'egress_refused', /127\.0\.0\.2/);
  });

  test('allow-all permits loopback', async () => {
    const server = await serve((_req, res) => res.end('reached'));
    const response = await session({ egress: 'allow-all' }).send(request(`http://localhost:${server.port}/`));
    assert.equal(response.body.toString(), 'reached');
  });
});
