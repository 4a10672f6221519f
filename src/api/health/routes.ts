import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import { MESSAGE_CODES } from '../../capture/normalize.js';

/** Public routes: health, the OpenAPI document and the error catalog. */
/** The per-item codes of message creation (spec §7), as `more_info` links name them. */
const MESSAGE_CODE_MEANINGS = {
  [MESSAGE_CODES.invalidField]:
    'error: a field has the wrong type or an impossible value; the item is not saved',
  [MESSAGE_CODES.noExchange]: 'error: the message has neither a request nor a response; it is not saved',
  [MESSAGE_CODES.unexpectedFields]: 'warning: the message has unexpected fields; it is saved without them',
};

export const publicRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/health',
      {
        config: { scope: null },
        schema: {
          tags: ['service'],
          summary: 'Liveness and storage check (no auth)',
          response: {
            200: Type.Object({ status: Type.Literal('ok') }),
            503: Type.Object({ status: Type.String() }),
          },
        },
      },
      async (_request, reply) => {
        if (await ctx.store.ping()) return { status: 'ok' as const };
        return reply.code(503).send({ status: 'storage unavailable' });
      },
    );

    app.get('/openapi.json', { config: { scope: null }, schema: { hide: true } }, async () => app.swagger());

    app.get(
      '/errors',
      {
        config: { scope: null },
        schema: {
          tags: ['service'],
          summary:
            'The error catalog: code → HTTP status; meta.message_codes: the per-item codes of message creation',
        },
      },
      async () => ({
        data: ERROR_CODES,
        meta: { status: 'success', message_codes: MESSAGE_CODE_MEANINGS },
        error: null,
      }),
    );
  };
