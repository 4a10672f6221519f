import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { RegionSummary } from '../../services/workers.js';
import type { ApiContext } from '../context.js';
import { Envelope, errorResponses, ok } from '../shared/envelope.js';

const RegionOut = Type.Object({
  region_code: Type.String({ description: 'Region code; "*" is a worker that serves every region' }),
  location: Type.String(),
  service_provider: Type.String({ description: 'Always "self-hosted": the regions are your own workers' }),
  hostname: Type.String({ description: 'Host of the worker of the region heard from last' }),
  region: Type.String({ description: 'Same as region_code' }),
  workers: Type.Integer({ description: 'Live workers and serve processes announcing the region' }),
  concurrency: Type.Integer({ description: 'Runs those workers execute at once, together' }),
  last_seen_at: Type.Number({ description: 'Latest announcement, float Unix seconds' }),
});

/** A region in the original service's shape (`region_code`, `location`, …) with Vigil's live figures. */
function presentRegion(summary: RegionSummary) {
  return {
    region_code: summary.region,
    location: summary.region === '*' ? 'Every region' : `Self-hosted workers of region ${summary.region}`,
    service_provider: 'self-hosted',
    ...summary,
  };
}

/** `GET /regions`: the regions live workers have announced (remote agents are listed per team). */
export const regionRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/regions',
      {
        schema: {
          tags: ['regions'],
          summary: 'Regions served by live workers, as data.regions',
          response: { 200: Envelope(Type.Object({ regions: Type.Array(RegionOut) })), ...errorResponses },
        },
      },
      async () => ok({ regions: (await ctx.services.workers.regions()).map(presentRegion) }),
    );
  };
