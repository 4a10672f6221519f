import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';

/** Public routes: health, the OpenAPI document and the error catalog. */
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
        schema: { tags: ['service'], summary: 'The error catalog: code → HTTP status' },
      },
      async () => ({ data: ERROR_CODES, meta: { status: 'success' }, error: null }),
    );
  };
