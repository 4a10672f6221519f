import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { Metrics } from '../../observability/metrics.js';
import { bearerMatches, type MetricsEndpoint } from '../../observability/scrape.js';

/**
 * Counts every answered request by its route pattern (never the URL: `/buckets/:bucket_key/…`),
 * method and status, with its latency.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * `GET /metrics` on the API origin: public (no session or API token), left out of the OpenAPI
 * document and of rate limits; METRICS_TOKEN, when set, is the only credential it takes.
 */
export function registerMetricsRoute(app: FastifyInstance, endpoint: MetricsEndpoint): void {
  app.get('/metrics', { config: { scope: null }, schema: { hide: true } }, async (request, reply) => {
    if (endpoint.token !== undefined && !bearerMatches(request.headers.authorization, endpoint.token)) {
      throw new AppError('unauthorized', 'A valid METRICS_TOKEN bearer token is required to read /metrics');
    }
    const { contentType, body } = await endpoint.metrics.exposition();
    return reply.type(contentType).send(body);
  });
}
