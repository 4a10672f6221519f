/**
 * The ingest floor: a bare node:http server that takes the same `POST /buckets/<key>/messages`
 * batches as Vigil, parses them and writes one row per message (id, bucket, the message as JSON
 * text) into SQLite in one transaction per batch, with nothing else: no authentication, no
 * validation, no normalisation. WAL and the `synchronous` setting of FLOOR_SYNCHRONOUS, as Vigil.
 *
 * Env: FLOOR_DB (file to create), FLOOR_SYNCHRONOUS (NORMAL or FULL), PORT, HOST.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { openFloorDb } from '../sqlite.js';

const file = process.env.FLOOR_DB;
if (!file) throw new Error('FLOOR_DB is required');
const synchronous = process.env.FLOOR_SYNCHRONOUS === 'FULL' ? 'FULL' : 'NORMAL';
const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const MESSAGES_PATH = /^\/buckets\/([^/]+)\/messages$/;

const db = openFloorDb(file);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous}`);
db.exec(
  'CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, bucket TEXT NOT NULL, body TEXT NOT NULL)',
);
const insert = db.prepare<[string, string, string]>(
  'INSERT INTO messages (id, bucket, body) VALUES (?, ?, ?)',
);

const store = db.transaction((bucket: string, items: readonly unknown[]) =>
  items.map((item) => {
    const id = randomUUID();
    insert.run(id, bucket, JSON.stringify(item));
    return { status: 'success', uuid: id };
  }),
);

function send(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

const server = http.createServer((request, response) => {
  if (request.url === '/health') return send(response, 200, '{"status":"ok"}');
  const match = request.method === 'POST' ? MESSAGES_PATH.exec(request.url ?? '') : null;
  if (!match) return send(response, 404, '{"error":"not found"}');
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      const results = store(match[1]!, Array.isArray(body) ? body : [body]);
      send(
        response,
        201,
        JSON.stringify({
          data: results,
          meta: { status: 'success', success_count: results.length, warning_count: 0, error_count: 0 },
          error: null,
        }),
      );
    } catch (error) {
      send(response, 400, JSON.stringify({ error: String(error) }));
    }
  });
});

function shutdown(): void {
  server.close();
  server.closeAllConnections();
  db.close();
  process.exit(0);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

server.listen(port, host, () => {
  process.stdout.write(`ingest floor listening on http://${host}:${port} (synchronous=${synchronous})\n`);
});
