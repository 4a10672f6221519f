import { parse as parseQuery } from 'node:querystring';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, invalid } from '../../domain/errors.js';
import { MAX_BATCH } from '../../services/runs/launcher.js';
import { type ParameterSource, triggerParameters } from '../../services/runs/parameters.js';
import type { ApiContext } from '../context.js';
import { presentStartedRuns } from '../runs/present.js';
import { TriggerOut } from '../runs/schemas.js';
import { Envelope, ok } from '../shared/envelope.js';

const TriggerParams = Type.Object({ trigger_id: Type.String({ maxLength: 128 }) });

/**
 * The variables a trigger request carries: query parameters, then form or JSON body fields (the
 * body wins). Repeated names keep their last value.
 */
function requestParameters(request: FastifyRequest): Record<string, string> {
  const sources: ParameterSource[] = [
    { values: request.query as Record<string, unknown>, field: (name) => `query.${name}`, repeated: true },
  ];
  const body = request.body;
  if (body !== undefined && body !== null && body !== '') {
    if (typeof body !== 'object' || Array.isArray(body))
      throw invalid('body', 'must be an object of variables');
    sources.push({
      values: body as Record<string, unknown>,
      field: (name) => `body.${name}`,
      repeated: true,
    });
  }
  return triggerParameters(sources, 'query');
}

/**
 * Trigger URLs (DESIGN §4): no bearer token, the random trigger id is the credential. They accept
 * query parameters, form bodies and JSON bodies.
 */
export const triggerRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { launcher } = ctx.services;
    const tags = ['triggers'];
    const response = { 201: Envelope(TriggerOut) };

    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 1024 * 1024 },
      (_request, body, done) => done(null, parseQuery(body as string)),
    );

    const trigger = async (request: FastifyRequest) => {
      const { trigger_id } = request.params as { trigger_id: string };
      return presentStartedRuns(
        await launcher.triggerTest(trigger_id, requestParameters(request)),
        ctx.publicUrl,
      );
    };

    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: '/radar/:trigger_id/trigger',
        config: { scope: null, idempotent: true },
        schema: {
          tags,
          summary: 'Start a run of the test (query/form parameters become variables)',
          params: TriggerParams,
          response,
        },
        handler: async (request, reply) => {
          const data = await trigger(request);
          reply.code(201);
          return ok(data);
        },
      });
      app.route({
        method,
        url: '/radar/bucket/:trigger_id/trigger',
        config: { scope: null, idempotent: true },
        schema: {
          tags,
          summary: 'Run every test of the bucket with its default environment',
          params: TriggerParams,
          response,
        },
        handler: async (request, reply) => {
          const started = await launcher.triggerBucket(request.params.trigger_id, requestParameters(request));
          reply.code(201);
          return ok(presentStartedRuns(started, ctx.publicUrl));
        },
      });
    }

    app.post(
      '/radar/:trigger_id/batch',
      {
        config: { scope: null, idempotent: true },
        schema: {
          tags,
          summary: `Start one run per variable set (a JSON array of at most ${MAX_BATCH} objects)`,
          params: TriggerParams,
          response,
        },
      },
      async (request, reply) => {
        const body = request.body;
        if (!Array.isArray(body)) throw invalid('body', 'must be a JSON array of variable sets');
        if (body.length > MAX_BATCH) {
          throw new AppError(
            'limit_reached',
            `A batch holds at most ${MAX_BATCH} variable sets; got ${body.length}`,
          );
        }
        const sets = body.map((set: unknown, index) => {
          if (typeof set !== 'object' || set === null || Array.isArray(set)) {
            throw invalid(`/${index}`, 'must be an object of variables');
          }
          // Each variable set is checked as one trigger call's parameters are.
          const values = set as Record<string, unknown>;
          return triggerParameters(
            [{ values, field: (name) => `/${index}/${name}`, repeated: false }],
            `/${index}`,
          );
        });
        const started = await launcher.triggerBatch(request.params.trigger_id, sets);
        reply.code(201);
        return ok(presentStartedRuns(started, ctx.publicUrl));
      },
    );
  };
