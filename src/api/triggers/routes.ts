import { parse as parseQuery } from 'node:querystring';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, invalid } from '../../domain/errors.js';
import { MAX_BATCH } from '../../services/runs.js';
import type { ApiContext } from '../context.js';
import { presentStartedRuns } from '../runs/present.js';
import { TriggerOut } from '../runs/schemas.js';
import { Envelope, ok } from '../shared/envelope.js';

const TriggerParams = Type.Object({ trigger_id: Type.String({ maxLength: 128 }) });
const MAX_PARAMETERS = 500;
const MAX_VALUE_LENGTH = 100_000;
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

/**
 * The variables a trigger request carries: query parameters, then form or JSON body fields (the
 * body wins). Repeated names keep their last value; names must be variable names.
 */
function triggerParameters(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (source: string, values: Record<string, unknown>) => {
    for (const [name, raw] of Object.entries(values)) {
      const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
      if (value === undefined) continue;
      if (!PARAMETER_NAME.test(name))
        throw invalid(`${source}.${name}`, 'is not a valid variable name (letters, digits, _ . -)');
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw invalid(`${source}.${name}`, 'must be a string, number or boolean');
      }
      const text = String(value);
      if (text.length > MAX_VALUE_LENGTH)
        throw invalid(`${source}.${name}`, `is longer than ${MAX_VALUE_LENGTH} characters`);
      if (text.includes('\u0000')) throw invalid(`${source}.${name}`, 'contains a NUL character');
      out[name] = text;
    }
  };
  add('query', request.query as Record<string, unknown>);
  const body = request.body;
  if (body !== undefined && body !== null && body !== '') {
    if (typeof body !== 'object' || Array.isArray(body))
      throw invalid('body', 'must be an object of variables');
    add('body', body as Record<string, unknown>);
  }
  if (Object.keys(out).length > MAX_PARAMETERS)
    throw invalid('query', `carries more than ${MAX_PARAMETERS} parameters`);
  return out;
}

/**
 * Trigger URLs (DESIGN §4): no bearer token, the random trigger id is the credential. They accept
 * query parameters, form bodies and JSON bodies.
 */
export const triggerRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { runs } = ctx.services;
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
        await runs.triggerTest(trigger_id, triggerParameters(request)),
        ctx.publicUrl,
      );
    };

    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: '/radar/:trigger_id/trigger',
        config: { scope: null },
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
        config: { scope: null },
        schema: {
          tags,
          summary: 'Run every test of the bucket with its default environment',
          params: TriggerParams,
          response,
        },
        handler: async (request, reply) => {
          const started = await runs.triggerBucket(request.params.trigger_id, triggerParameters(request));
          reply.code(201);
          return ok(presentStartedRuns(started, ctx.publicUrl));
        },
      });
    }

    app.post(
      '/radar/:trigger_id/batch',
      {
        config: { scope: null },
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
          const out: Record<string, string> = {};
          for (const [name, value] of Object.entries(set)) {
            if (!PARAMETER_NAME.test(name))
              throw invalid(`/${index}/${name}`, 'is not a valid variable name');
            if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
              throw invalid(`/${index}/${name}`, 'must be a string, number or boolean');
            }
            out[name] = String(value);
          }
          return out;
        });
        const started = await runs.triggerBatch(request.params.trigger_id, sets);
        reply.code(201);
        return ok(presentStartedRuns(started, ctx.publicUrl));
      },
    );
  };
