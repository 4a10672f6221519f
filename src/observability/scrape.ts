import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/**
 * Serving the metrics: the check of METRICS_TOKEN and a listener of their own (METRICS_PORT). This
 * file does not load prom-client; only a process that counts (metrics.ts) does.
 */

/** Whether an Authorization header carries this bearer token; compared in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  // Digests have one length whatever was sent, so the comparison takes the same time.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

/** Where metrics are served, and to whom (METRICS_TOKEN). */
export interface MetricsEndpoint {
  metrics: Metrics;
  /** With it, a scrape must send `Authorization: Bearer <token>`. */
  token: string | undefined;
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * `/metrics` on a port of its own (METRICS_PORT): a bare HTTP listener with no other route, no
 * session, no rate limit; 401 without the token when one is set, 404 for any other path.
 */
export async function listenForMetrics(
  endpoint: MetricsEndpoint,
  options: { port: number; host: string },
): Promise<MetricsListener> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end();
      return;
    }
    if (endpoint.token !== undefined && !bearerMatches(request.headers.authorization, endpoint.token)) {
      response
        .writeHead(401, {
          'www-authenticate': 'Bearer realm="vigil-metrics"',
          'content-type': 'text/plain; charset=utf-8',
        })
        .end('a valid METRICS_TOKEN is required\n');
      return;
    }
    endpoint.metrics.exposition().then(
      ({ contentType, body }) => {
        response.writeHead(200, { 'content-type': contentType });
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
