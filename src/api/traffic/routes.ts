import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { headerLists, recordedRequest } from '../../capture/exchange.js';
import { Gateway, gatewayTarget } from '../../capture/gateway.js';
import type { NewMessage } from '../../capture/message.js';
import { replayRequest } from '../../capture/replay.js';
import { AppError, conflict, notFound } from '../../domain/errors.js';
import { newTimeOrderedId } from '../../domain/ids.js';
import { BUCKET_KEY_PATTERN } from '../../services/buckets.js';
import { bucketsRepo } from '../../store/repositories/buckets.js';
import type { ApiContext } from '../context.js';
import { MessageDetail, MessageParams } from '../messages/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { sendError } from '../plugins/errors.js';
import { Envelope, errorResponses, ok } from '../shared/envelope.js';

/** Message ids are UUIDs, as in the other message routes. */
const MESSAGE_ID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** Names the response header that carries the id of the message an exchange was stored as. */
export const MESSAGE_ID_HEADER = 'Vigil-Message-Id';

const BucketKeyParams = Type.Object({ bucket_key: Type.String() });
const tags = ['traffic'];

/** When the request arrived, Unix seconds: now less the time Fastify has spent on it. */
function receivedAt(reply: FastifyReply): number {
  return (Date.now() - reply.elapsedTime) / 1000;
}

function bodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/** Stores a recorded exchange; a storage failure is logged, the client's exchange goes on. */
function recorder(ctx: ApiContext, bucketKey: string, id: string, log: FastifyBaseLogger) {
  return async (message: NewMessage): Promise<void> => {
    try {
      await ctx.services.messages.record(bucketKey, message, id);
    } catch (error) {
      log.error({ err: error, message_uuid: id }, 'the exchange could not be stored');
    }
  };
}

/**
 * The capture and gateway URLs (DESIGN §6): no token, the bucket key names where the traffic goes.
 * Any method and any body: bodies are read as raw bytes (up to BODY_LIMIT) whatever their type.
 */
const recordingRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const moreInfo = `${ctx.publicUrl}/errors`;
    const gateway = new Gateway({ egress: ctx.egressPolicy, maxBodyBytes: ctx.responseBodyLimit });
    app.addHook('onClose', () => gateway.close());

    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    // An unknown bucket answers 404 before the body is read.
    const requireBucket = async (request: FastifyRequest) => {
      const { bucket_key } = request.params as { bucket_key: string };
      const bucket = BUCKET_KEY_PATTERN.test(bucket_key)
        ? await bucketsRepo.byKey(ctx.store.db, bucket_key)
        : undefined;
      if (!bucket) throw notFound(`Bucket ${bucket_key}`);
    };
    const config = { scope: null, rawBody: true };

    for (const url of ['/capture/:bucket_key', '/capture/:bucket_key/*']) {
      app.all(
        url,
        {
          config,
          onRequest: requireBucket,
          schema: {
            // Public URLs, not API endpoints: no token, any method, no envelope (docs/capture.md).
            hide: true,
            tags,
            summary: 'Record the request as a message of the bucket (any method, any body; no token)',
            params: BucketKeyParams,
            response: { 200: Type.Object({ captured: Type.String() }) },
          },
        },
        async (request, reply) => {
          const { bucket_key } = request.params;
          const message: NewMessage = {
            source: 'capture',
            unique_identifier: null,
            request: recordedRequest({
              method: request.method,
              // The URL the sender called, as it reached the service, on the public base.
              url: `${ctx.publicUrl}${request.url}`,
              headers: headerLists(request.raw.rawHeaders),
              body: bodyOf(request),
              timestamp: receivedAt(reply),
            }),
            response: null,
            note: null,
          };
          return { captured: await ctx.services.messages.record(bucket_key, message) };
        },
      );
    }

    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      const arrived = receivedAt(reply);
      const { bucket_key } = request.params as { bucket_key: string };
      const rest = /^\/gateway\/[^/?]*\/?(.*)$/s.exec(request.url)?.[1] ?? '';
      const target = gatewayTarget(rest);
      const id = newTimeOrderedId();
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      const outcome = await gateway.forward(
        {
          method: request.method,
          url: target,
          headers: headerLists(request.raw.rawHeaders),
          body: bodyOf(request),
          receivedAt: arrived,
        },
        recorder(ctx, bucket_key, id, request.log),
        gone.signal,
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
          config,
          onRequest: requireBucket,
          schema: {
            // Public URLs, not API endpoints: no token, any method, no envelope (docs/capture.md).
            hide: true,
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

/** `POST …/messages/<uuid>/replay`: sends a stored request again and stores the new exchange. */
const replayRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { messages } = ctx.services;
    const moreInfo = `${ctx.publicUrl}/errors`;

    app.post(
      `/buckets/:bucket_key/messages/:message_uuid(${MESSAGE_ID})/replay`,
      {
        config: { scope: 'message:write' },
        schema: {
          tags: ['messages'],
          summary:
            'Send the stored request again (through the egress policy) and store the exchange as a new message',
          params: MessageParams,
          response: { 201: Envelope(MessageDetail), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { bucket_key, message_uuid } = request.params;
        const original = await messages.detail(principal, bucket_key, message_uuid);
        if (!original.request) throw conflict(`Message ${message_uuid} has no request to replay`);
        const { message, failure } = await replayRequest(
          { uuid: original.uuid, request: original.request },
          { egress: ctx.egressPolicy, maxBodyBytes: ctx.responseBodyLimit },
        );
        const id = await messages.record(bucket_key, message);
        reply.header(MESSAGE_ID_HEADER, id);
        if (failure !== null) {
          return sendError(
            reply,
            new AppError('bad_gateway', `The replay could not reach the upstream: ${failure}`),
            moreInfo,
          );
        }
        reply.code(201);
        return ok(await messages.detail(principal, bucket_key, id));
      },
    );
  };

/** Request capture, the gateway and replay. */
export const trafficRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(recordingRoutes(ctx));
    await app.register(replayRoutes(ctx));
  };
