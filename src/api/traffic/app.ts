import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { parseTrafficHost } from '../../domain/gateway-urls.js';
import { type AppOptions, serverOptions } from '../app.js';
import type { ApiContext } from '../context.js';
import { registerErrorHandling } from '../plugins/errors.js';
import { registerRequestMetrics } from '../plugins/metrics.js';
import { registerStorageGuard } from '../plugins/storage.js';
import { recordingRoutes, senderScheme } from './recording.js';

/**
 * Every answer of the traffic origin is a sandboxed document: whatever an upstream relays or a
 * sender captures, a browser that opens it runs no script, gets an opaque origin (no cookies, no
 * storage, no service worker) and sniffs no type.
 */
export const TRAFFIC_CSP = 'sandbox';

/**
 * The path a request under the gateway domain stands for: `<key>.<domain>/…` is the bucket's capture
 * URL, `<encoded host>-<key>.<domain>/…` its gateway to that host (the port from Vigil-Request-Port).
 */
function hostRoute(domain: string, headers: Record<string, string | string[] | undefined>, url: string) {
  const host = typeof headers.host === 'string' ? parseTrafficHost(headers.host, domain) : null;
  if (!host) return url;
  if (host.kind === 'capture') return `/capture/${host.bucketKey}${url === '/' ? '' : url}`;
  const portHeader = headers['vigil-request-port'] ?? headers['runscope-request-port'];
  const port =
    typeof portHeader === 'string' && /^\d{1,5}$/.test(portHeader.trim()) ? `:${portHeader.trim()}` : '';
  return `/gateway/${host.bucketKey}/${senderScheme(headers)}/${host.upstreamHost}${port}${url}`;
}

/**
 * The traffic origin (docs/security.md): capture and gateway URLs on a listener of their own, so
 * that nothing an upstream answers or a sender captures is ever served from the API's and the
 * dashboard's origin. Nothing else is served here.
 */
export async function buildTrafficApp(ctx: ApiContext, options: AppOptions): Promise<FastifyInstance> {
  const moreInfo = `${ctx.publicUrl}/errors`;
  const domain = ctx.gatewayDomain;
  const app = Fastify({
    ...serverOptions(options, moreInfo),
    ...(domain && {
      rewriteUrl: (request: IncomingMessage) => hostRoute(domain, request.headers, request.url ?? '/'),
    }),
  });
  registerErrorHandling(
    app,
    moreInfo,
    (path) =>
      `No traffic URL at ${path}: send requests to ${ctx.trafficUrl}/capture/<bucket_key>/… or ${ctx.trafficUrl}/gateway/<bucket_key>/<scheme>/<host>/…`,
  );
  if (ctx.metrics) registerRequestMetrics(app, ctx.metrics.metrics);
  // A full store refuses traffic before it is forwarded or read: every request here would be recorded.
  registerStorageGuard(app, ctx.storage, 'all');
  app.addHook('onSend', async (_request, reply, payload) => {
    const upstream = reply.getHeader('content-security-policy');
    const policies = upstream === undefined ? [] : Array.isArray(upstream) ? upstream : [String(upstream)];
    reply.header('content-security-policy', policies.length === 0 ? TRAFFIC_CSP : [...policies, TRAFFIC_CSP]);
    reply.header('x-content-type-options', 'nosniff');
    return payload;
  });
  await app.register(recordingRoutes(ctx));
  await app.ready();
  return app;
}
