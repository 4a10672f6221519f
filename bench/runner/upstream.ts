/**
 * The upstream of the runner benchmark: a bare `node:http` server, in its own process, that every
 * contender runs the same test against. Keep-alive is on, as on any real API.
 *
 * Routes (also under the prefix `/bad`, where only `GET /items/:id` differs: it answers `ok: false`,
 * so a run against `<base>/bad` must fail at its last step):
 * - `POST /login` with `{"user":"bench"}` → 200 `{"token", "user_id"}` (a new user id and a random token);
 * - `GET /users/:id` with `Authorization: Bearer <token>` → 200 `{"id", "name", "items": [{"id"}…]}`, or
 *   401 when the token is not the one issued for that user;
 * - `GET /items/:id` → 200 `{"id", "ok": true}`.
 *
 * It listens on a free port of 127.0.0.1 and sends `{type: "listening", port}` over IPC. On an IPC
 * `{type: "stats"}` it answers `{type: "stats", stats}` with the counters below, since it started.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpstreamMessage, UpstreamStats } from './protocol.js';

/** Tokens kept for checking; older ones are forgotten first, far beyond any run's lifetime. */
const MAX_TOKENS = 500_000;
const USER_PATH = /^\/users\/(\d+)$/;
const ITEM_PATH = /^\/items\/(\d+)$/;

const tokens = new Map<number, string>();
let nextUserId = 1;
const stats: UpstreamStats = { connections: 0, requests: 0, non2xx: 0 };

function send(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  if (status < 200 || status > 299) stats.non2xx++;
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

function login(text: string, response: http.ServerResponse): void {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return send(response, 400, { error: 'body is not JSON' });
  }
  if (typeof body !== 'object' || body === null || (body as { user?: unknown }).user !== 'bench') {
    return send(response, 400, { error: 'expected {"user":"bench"}' });
  }
  const userId = nextUserId++;
  const token = randomBytes(16).toString('hex');
  tokens.set(userId, token);
  if (tokens.size > MAX_TOKENS) tokens.delete(tokens.keys().next().value!);
  send(response, 200, { token, user_id: userId });
}

function user(id: number, authorization: string | undefined, response: http.ServerResponse): void {
  const issued = tokens.get(id);
  if (issued === undefined || authorization !== `Bearer ${issued}`) {
    return send(response, 401, { error: 'token does not match the one issued for this user' });
  }
  const items = [1, 2, 3].map((n) => ({ id: id * 10 + n }));
  send(response, 200, { id, name: `User ${id}`, items });
}

function route(request: http.IncomingMessage, text: string, response: http.ServerResponse): void {
  let path = request.url ?? '/';
  const bad = path.startsWith('/bad/');
  if (bad) path = path.slice('/bad'.length);

  if (request.method === 'POST' && path === '/login') return login(text, response);
  if (request.method === 'GET') {
    const userMatch = USER_PATH.exec(path);
    if (userMatch) return user(Number(userMatch[1]), request.headers.authorization, response);
    const itemMatch = ITEM_PATH.exec(path);
    if (itemMatch) return send(response, 200, { id: Number(itemMatch[1]), ok: !bad });
  }
  send(response, 404, { error: `no route for ${request.method} ${request.url}` });
}

const server = http.createServer((request, response) => {
  stats.requests++;
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => route(request, Buffer.concat(chunks).toString('utf8'), response));
});
// HTTP keep-alive is node:http's default; the timeout is set so that it is visible here.
server.keepAliveTimeout = 5_000;
server.on('connection', () => {
  stats.connections++;
});

process.on('message', (message: UpstreamMessage) => {
  if (message.type === 'get_stats') process.send?.({ type: 'stats', stats } satisfies UpstreamMessage);
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'listening', port } satisfies UpstreamMessage);
});
