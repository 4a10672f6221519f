import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IdempotencyService } from '../../services/idempotency.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours `Idempotency-Key`: its first answer is replayed to retries for 24 h. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: { scope: string; key: string } | null;
  }
}

const HEADER = 'idempotency-key';

/** The body as the fingerprint sees it: what was parsed, in a stable text form. */
function bodyText(request: FastifyRequest): string {
  const body = request.body;
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('base64');
  return JSON.stringify(body);
}

/**
 * `Idempotency-Key` on the routes marked `config.idempotent` (message creation, run triggers): the
 * first answer is stored and replayed, with `Idempotent-Replayed: true`, to retries with that key.
 */
export function registerIdempotency(app: FastifyInstance, service: IdempotencyService): void {
  app.decorateRequest('idempotency', null);

  app.addHook('preHandler', async (request, reply) => {
    if (!request.routeOptions.config.idempotent) return;
    const header = request.headers[HEADER];
    if (header === undefined) return;
    const key = Array.isArray(header) ? (header[0] ?? '') : header;
    const path = request.url.split('?')[0] ?? request.url;
    const scope = `${request.principal?.accountId ?? 'public'} ${request.method} ${path}`;
    const start = await service.start(scope, key, {
      method: request.method,
      url: request.url,
      body: bodyText(request),
    });
    if (start.kind === 'first') {
      request.idempotency = { scope, key };
      return;
    }
    const { answer } = start;
    reply.code(answer.status).header('Idempotent-Replayed', 'true');
    if (answer.contentType) reply.type(answer.contentType);
    return reply.send(answer.body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const held = request.idempotency;
    if (!held) return payload;
    request.idempotency = null;
    const contentType = reply.getHeader('content-type');
    await service
      .finish(held.scope, held.key, {
        status: reply.statusCode,
        contentType: typeof contentType === 'string' ? contentType : null,
        body: typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '',
      })
      .catch((err: unknown) => request.log.warn({ err }, 'could not keep the answer of an Idempotency-Key'));
    return payload;
  });
}
