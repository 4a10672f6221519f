import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { Envelope, errorResponses, ok } from '../shared/envelope.js';

const RegionOut = Type.Object({
  region: Type.String({ description: 'Region code; "*" is a worker that serves every region' }),
  workers: Type.Integer({ description: 'Live workers and serve processes announcing the region' }),
  concurrency: Type.Integer({ description: 'Runs those workers execute at once, together' }),
  last_seen_at: Type.Number({ description: 'Latest announcement, float Unix seconds' }),
});

/** `GET /regions`: the regions live workers have announced (remote agents are listed per team). */
export const regionRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/regions',
      {
        schema: {
          tags: ['regions'],
          summary: 'Regions served by live workers',
          response: { 200: Envelope(Type.Array(RegionOut)), ...errorResponses },
        },
      },
      async () => ok(await ctx.services.workers.regions()),
    );
  };
