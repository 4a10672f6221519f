import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import { MessageDetail, MessageParams } from '../messages/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { sendError } from '../plugins/errors.js';
import { Envelope, errorResponses, ok } from '../shared/envelope.js';
import { MESSAGE_ID_HEADER } from './recording.js';

/** Message ids are UUIDs, as in the other message routes. */
const MESSAGE_ID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * Capture and gateway URLs live on the traffic origin (TRAFFIC_PUBLIC_URL), never on the API's: on
 * this origin their paths answer 404 naming where they went.
 */
const movedRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const kind of ['capture', 'gateway'] as const) {
      // Answered before the body is read, whatever its type.
      const moved = async () => {
        throw new AppError(
          'not_found',
          `${kind === 'capture' ? 'Capture' : 'Gateway'} URLs are served on the traffic origin, not here: use ${ctx.trafficUrl}/${kind}/<bucket_key>/… (the bucket's ${kind}_url)`,
        );
      };
      for (const url of [`/${kind}`, `/${kind}/*`]) {
        app.all(url, { config: { scope: null }, schema: { hide: true }, onRequest: moved }, moved);
      }
    }
  };

/** `POST …/messages/<uuid>/replay`: sends a stored request again and stores the new exchange. */
const replayRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { traffic } = ctx.services;
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
        const { bucket_key, message_uuid } = request.params;
        const replay = await traffic.replay(principalOf(request), bucket_key, message_uuid);
        reply.header(MESSAGE_ID_HEADER, replay.id);
        if (replay.failure !== null) {
          return sendError(
            reply,
            new AppError('bad_gateway', `The replay could not reach the upstream: ${replay.failure}`),
            moreInfo,
          );
        }
        reply.code(201);
        return ok(replay.message);
      },
    );
  };

/** Replay, and the notice that capture and gateway URLs moved to the traffic origin. */
export const trafficRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(movedRoutes(ctx));
    await app.register(replayRoutes(ctx));
  };
