import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CSRF_COOKIE, SESSION_COOKIE } from '../../auth/sessions.js';
import {
  headerLists,
  recordedRequest,
  recordedResponse,
  sentHeaders,
  withoutCookies,
} from '../../capture/exchange.js';
import { gatewayTarget } from '../../capture/gateway.js';
import type { MessageRequest } from '../../domain/messages.js';
import { AppError } from '../../domain/errors.js';
import { REQUEST_PORT_HEADERS } from '../../domain/gateway-urls.js';
import { newTimeOrderedId } from '../../domain/ids.js';
import type { ApiContext } from '../context.js';
import { sendError } from '../plugins/errors.js';

/** Names the response header that carries the id of the message an exchange was stored as. */
export const MESSAGE_ID_HEADER = 'Vigil-Message-Id';

/** Where a bucket that requires a token finds it: a header, or a query parameter of the same name. */
export const BUCKET_AUTH_NAMES = ['Vigil-Bucket-Auth', 'Runscope-Bucket-Auth'] as const;

const AUTH_NAMES = BUCKET_AUTH_NAMES.map((name) => name.toLowerCase());

/** The service's own cookies: a browser sends them to the traffic origin too, but they go no further. */
const SERVICE_COOKIES = new Set([SESSION_COOKIE, CSRF_COOKIE]);

/** Headers meant for the service, never recorded or passed upstream. */
const CONTROL_HEADERS = [...AUTH_NAMES, ...REQUEST_PORT_HEADERS];

const BucketKeyParams = Type.Object({ bucket_key: Type.String() });
const tags = ['traffic'];

/** When the request arrived, Unix seconds: now less the time Fastify has spent on it. */
function receivedAt(reply: FastifyReply): number {
  return (Date.now() - reply.elapsedTime) / 1000;
}

function bodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/** The bucket token the request presents: a header first, else a query parameter (names in any case). */
function presentedToken(request: FastifyRequest): string | undefined {
  for (const name of AUTH_NAMES) {
    const header = request.headers[name];
    if (typeof header === 'string') return header;
  }
  const query = request.url.indexOf('?');
  if (query < 0) return undefined;
  for (const [name, value] of new URLSearchParams(request.url.slice(query + 1))) {
    if (AUTH_NAMES.includes(name.toLowerCase())) return value;
  }
  return undefined;
}

/** A path and query without the bucket-token parameters, which are for the service alone; the rest stays as sent. */
function withoutTokenParams(pathAndQuery: string): string {
  const query = pathAndQuery.indexOf('?');
  if (query < 0) return pathAndQuery;
  const kept = pathAndQuery
    .slice(query + 1)
    .split('&')
    .filter((pair) => !AUTH_NAMES.includes(decodedName(pair).toLowerCase()));
  return `${pathAndQuery.slice(0, query)}${kept.length === 0 ? '' : `?${kept.join('&')}`}`;
}

function decodedName(pair: string): string {
  const name = pair.split('=', 1)[0]!.replaceAll('+', ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * The scheme the sender used: the listener speaks plain HTTP, so a TLS-terminating proxy in front
 * of it says which in X-Forwarded-Proto.
 */
export function senderScheme(headers: FastifyRequest['headers']): 'http' | 'https' {
  const forwarded = headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https' ? 'https' : 'http';
}

/** The headers of the request as they are recorded and passed on: no control headers, no service cookies. */
function trafficHeaders(request: FastifyRequest) {
  const headers = headerLists(request.raw.rawHeaders);
  for (const name of CONTROL_HEADERS) delete headers[name];
  return withoutCookies(headers, SERVICE_COOKIES);
}

/** The URL the sender called: the traffic base and path, or the host it used under the gateway domain. */
function calledUrl(ctx: ApiContext, request: FastifyRequest): string {
  const original = withoutTokenParams(request.originalUrl);
  if (request.originalUrl !== request.url)
    return `${senderScheme(request.headers)}://${request.host}${original}`;
  return `${ctx.trafficUrl}${original}`;
}

/**
 * The capture and gateway URLs (docs/capture.md), served on the traffic origin: no access token, the
 * bucket key names where the traffic goes (and the bucket's own token, when it requires one). Any
 * method and any body: bodies are read as raw bytes (up to BODY_LIMIT) whatever their type.
 */
export const recordingRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { traffic } = ctx.services;
    const moreInfo = `${ctx.publicUrl}/errors`;
    const gateway = traffic.openGateway();
    app.addHook('onClose', () => gateway.close());

    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    // An unknown bucket (or a missing or wrong bucket token) answers before the body is read.
    const requireBucket = async (request: FastifyRequest) => {
      const { bucket_key } = request.params as { bucket_key: string };
      await traffic.admit(bucket_key, presentedToken(request));
    };

    // A capture is stored once its answer is ready, with that answer as its response: the handler
    // leaves the request here, the route's last onSend hook (after the origin's own headers) stores it.
    const pending = new WeakMap<FastifyRequest, { id: string; request: MessageRequest; arrived: number }>();

    const storeCapture = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const capture = pending.get(request);
      if (!capture) return payload; // refused before the handler: nothing to store
      pending.delete(request);
      const sent =
        request.method === 'HEAD' || payload === null || payload === undefined
          ? Buffer.alloc(0)
          : Buffer.from(payload as string | Buffer);
      // The length a client is told is that of the whole answer, also for HEAD, which sends no body.
      const length =
        payload === null || payload === undefined ? 0 : Buffer.byteLength(payload as string | Buffer);
      const answeredAt = Date.now() / 1000;
      const { bucket_key } = request.params as { bucket_key: string };
      await traffic.capture(
        bucket_key,
        {
          source: 'capture',
          unique_identifier: null,
          request: capture.request,
          response: recordedResponse({
            status: reply.statusCode,
            headers: sentHeaders({ ...reply.getHeaders(), 'content-length': length }),
            body: sent,
            timestamp: answeredAt,
            responseTime: Math.max(0, answeredAt - capture.arrived),
          }),
          note: null,
        },
        capture.id,
      );
      reply.header('content-length', length);
      return payload;
    };

    for (const url of ['/capture/:bucket_key', '/capture/:bucket_key/*']) {
      app.all(
        url,
        {
          onRequest: requireBucket,
          onSend: storeCapture,
          schema: {
            tags,
            summary:
              'Record the request, with this answer as its response, as a message of the bucket (any method, any body; no token)',
            params: BucketKeyParams,
            response: { 200: Type.Object({ captured: Type.String() }) },
          },
        },
        async (request, reply) => {
          const id = newTimeOrderedId();
          const arrived = receivedAt(reply);
          pending.set(request, {
            id,
            arrived,
            request: recordedRequest({
              method: request.method,
              url: calledUrl(ctx, request),
              headers: trafficHeaders(request),
              body: bodyOf(request),
              timestamp: arrived,
            }),
          });
          // Dated here rather than by Node, so the stored answer has every header the client gets.
          reply.header('date', new Date().toUTCString());
          return { captured: id };
        },
      );
    }

    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      const arrived = receivedAt(reply);
      const { bucket_key } = request.params as { bucket_key: string };
      const rest = /^\/gateway\/[^/?]*\/?(.*)$/s.exec(withoutTokenParams(request.url))?.[1] ?? '';
      const target = gatewayTarget(rest);
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      const { id, outcome } = await gateway.forward(
        bucket_key,
        {
          method: request.method,
          url: target,
          headers: trafficHeaders(request),
          body: bodyOf(request),
          receivedAt: arrived,
        },
        gone.signal,
        // A storage failure is logged; the client's exchange goes on.
        (error, messageId) =>
          request.log.error({ err: error, message_uuid: messageId }, 'the exchange could not be stored'),
      );
      reply.header(MESSAGE_ID_HEADER, id);
      if (!outcome.ok) {
        return sendError(
          reply,
          new AppError('bad_gateway', `The upstream could not be reached: ${outcome.reason}`),
          moreInfo,
        );
      }
      reply.code(outcome.status);
      for (const [name, values] of Object.entries(outcome.headers)) {
        reply.header(name, values.length === 1 ? values[0] : values);
      }
      return reply.send(outcome.body ?? undefined);
    };

    for (const url of ['/gateway/:bucket_key', '/gateway/:bucket_key/*']) {
      app.all(
        url,
        {
          onRequest: requireBucket,
          schema: {
            tags,
            summary:
              'Forward the request to <scheme>://<host[:port]>/<path>?<query>, stream the answer back with Vigil-Message-Id, store the exchange',
            params: BucketKeyParams,
          },
        },
        forward,
      );
    }
  };
