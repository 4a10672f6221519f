import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DEFAULT_TIMEFRAME } from '../../services/runs/results.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, ok, TestParams } from '../shared/envelope.js';
import { presentRun, presentStartedRuns } from './present.js';
import {
  ManualRunBody,
  MetricsAnswer,
  MetricsQuery,
  ResultsQuery,
  RunOut,
  RunParams,
  StepDetailOut,
  StepResultParams,
  TriggerOut,
} from './schemas.js';

/** Run ids are UUIDs; the pattern keeps `…/results/latest` from also naming a run. */
const RUN_ID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const runRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { launcher, results } = ctx.services;
    const tags = ['results'];
    const base = '/buckets/:bucket_key/tests/:test_id';

    app.post(
      `${base}/runs`,
      {
        config: { scope: 'test:write' },
        schema: {
          tags,
          summary: 'Run the test now (its default environment unless environment_id is given)',
          params: TestParams,
          body: Type.Unsafe<typeof ManualRunBody.static | undefined>({
            ...ManualRunBody,
            'x-optional-body': true,
          }),
          response: { 201: Envelope(TriggerOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const started = await launcher.runManually(
          principalOf(request),
          request.params.bucket_key,
          request.params.test_id,
          request.body ?? {},
        );
        reply.code(201);
        return ok(presentStartedRuns(started, ctx.publicUrl));
      },
    );

    // The reads of results also answer at the original service's legacy path …/radar/<test_id>/results,
    // where its Jenkins plugin and older scripts look for them.
    for (const prefix of [base, '/buckets/:bucket_key/radar/:test_id']) {
      const legacy = prefix === base ? '' : ' (legacy path of the original service)';
      app.get(
        `${prefix}/results`,
        {
          schema: {
            tags,
            summary: `Runs of the test, newest first${legacy}`,
            params: TestParams,
            querystring: ResultsQuery,
            response: { 200: Envelope(Type.Array(RunOut)), ...errorResponses },
          },
        },
        async (request) => {
          const rows = await results.list(
            principalOf(request),
            request.params.bucket_key,
            request.params.test_id,
            request.query,
          );
          return ok(rows.map((row) => presentRun(row, ctx.publicUrl)));
        },
      );

      app.get(
        `${prefix}/results/latest`,
        {
          schema: {
            tags,
            summary: `The newest run of the test; null when it never ran${legacy}`,
            params: TestParams,
            response: { 200: Envelope(Type.Union([RunOut, Type.Null()])), ...errorResponses },
          },
        },
        async (request) => {
          const row = await results.latest(
            principalOf(request),
            request.params.bucket_key,
            request.params.test_id,
          );
          return ok(row ? presentRun(row, ctx.publicUrl) : null);
        },
      );

      app.get(
        `${prefix}/results/:test_run_id(${RUN_ID})`,
        {
          schema: {
            tags,
            summary: `One run with its step results${legacy}`,
            params: RunParams,
            response: { 200: Envelope(RunOut), ...errorResponses },
          },
        },
        async (request) => {
          const { bucket_key, test_id, test_run_id } = request.params;
          const row = await results.get(principalOf(request), bucket_key, test_id, test_run_id);
          return ok(presentRun(row, ctx.publicUrl));
        },
      );
    }

    app.delete(
      `${base}/results/:test_run_id(${RUN_ID})`,
      {
        config: { scope: 'test:write' },
        schema: {
          tags,
          summary: 'Cancel a queued or working run',
          params: RunParams,
          response: { 200: Envelope(RunOut), 409: Type.Ref('ErrorEnvelope'), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, test_run_id } = request.params;
        const row = await results.cancel(principalOf(request), bucket_key, test_id, test_run_id);
        return ok(presentRun(row, ctx.publicUrl));
      },
    );

    app.get(
      `${base}/results/:test_run_id(${RUN_ID})/steps/:step_id`,
      {
        schema: {
          tags,
          summary: 'One step of a run with the full request sent and response received',
          params: StepResultParams,
          response: { 200: Envelope(StepDetailOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, test_run_id, step_id } = request.params;
        return ok(await results.step(principalOf(request), bucket_key, test_id, test_run_id, step_id));
      },
    );

    app.get(
      `${base}/metrics`,
      {
        schema: {
          tags,
          summary: 'Response-time percentiles and success ratio over a timeframe',
          description:
            'The metrics object is answered at the top level (as the original service did) and again in `data`.',
          params: TestParams,
          querystring: MetricsQuery,
          response: { 200: MetricsAnswer, ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id } = request.params;
        const { query } = request;
        const metrics = {
          ...(await results.metrics(principalOf(request), bucket_key, test_id, query)),
          region: query.region ?? 'all',
          timeframe: query.timeframe ?? DEFAULT_TIMEFRAME,
          environment_uuid: query.environment_uuid ?? 'all',
        };
        return { ...metrics, ...ok(metrics) };
      },
    );
  };
