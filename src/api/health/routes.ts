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

/** What /health says the service runs on, beside its status. */
const RUNTIME = {
  node: Type.String({ description: 'The Node.js version, as `process.version` (v24.11.0)' }),
  store: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  driver: Type.Union([Type.Literal('node:sqlite'), Type.Literal('better-sqlite3'), Type.Literal('pg')], {
    description: 'The database client library the store runs on',
  }),
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
          summary:
            'Liveness and storage check (no auth): ok; degraded with the reason when writes cannot succeed; 503 when storage does not answer',
          response: {
            200: Type.Object({
              status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
              reason: Type.Optional(Type.String()),
              ...RUNTIME,
            }),
            503: Type.Object({ status: Type.String(), ...RUNTIME }),
          },
        },
      },
      async (_request, reply) => {
        const health = await ctx.storage.ping();
        const runtime = { node: process.version, store: health.dialect, driver: health.driver };
        if (!health.reachable) return reply.code(503).send({ status: 'storage unavailable', ...runtime });
        // Reads and deletes still work; writes that add data answer 507 until room is made.
        if (health.writeBlocker)
          return { status: 'degraded' as const, reason: health.writeBlocker, ...runtime };
        return { status: 'ok' as const, ...runtime };
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
