import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { BATCH_ROW_LIMIT } from '../../services/runs/launcher.js';
import { DEFAULT_TIMEFRAME } from '../../services/runs/results.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, ok, TestParams } from '../shared/envelope.js';
import { AppError } from '../../domain/errors.js';
import { nowFloat } from '../../domain/ids.js';
import { renderHtmlReport } from '../../reports/html.js';
import { presentRun, presentStartedRuns, reportOfRun } from './present.js';
import {
  BatchQuery,
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

/** The size of a data-driven batch's file. */
export const BATCH_BODY_LIMIT = 1024 * 1024;

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

    // A data-driven batch is the one route that takes a CSV body.
    app.addContentTypeParser(
      'text/csv',
      { parseAs: 'string', bodyLimit: BATCH_BODY_LIMIT },
      (request, body, done) =>
        request.routeOptions.url === `${base}/batch`
          ? done(null, body)
          : done(
              new AppError(
                'unsupported_media_type',
                'A body needs the header Content-Type: application/json',
              ),
            ),
    );

    app.post(
      `${base}/batch`,
      {
        config: { scope: 'test:write' },
        bodyLimit: BATCH_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Run the test once per row of a CSV or JSON file (data-driven batch)',
          description:
            'The body is a CSV file with a header row (`Content-Type: text/csv`) or a JSON array of flat ' +
            `objects (\`application/json\`); each row's columns become the initial variables of one run, ` +
            `over the environment's. At most ${BATCH_ROW_LIMIT} rows and ${BATCH_BODY_LIMIT / 1024} KiB. ` +
            'Answers the runs queued, as a trigger does.',
          params: TestParams,
          querystring: BatchQuery,
          response: { 201: Envelope(TriggerOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const started = await launcher.runBatch(
          principalOf(request),
          request.params.bucket_key,
          request.params.test_id,
          // A CSV body arrives as its text; a JSON body parsed.
          typeof request.body === 'string' ? { csv: request.body } : { json: request.body },
          request.query,
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

    app.get(
      `${base}/results/:test_run_id(${RUN_ID})/report.html`,
      {
        schema: {
          tags,
          summary: 'The run as a self-contained HTML report (a download)',
          description:
            'One HTML file with inline CSS and no scripts: every step with its request and response, ' +
            'assertions with expected and actual values, variables and timings. Answered with ' +
            '`Content-Disposition: attachment`. Errors keep the envelope.',
          params: RunParams,
          produces: ['text/html'],
          response: { 200: Type.String({ description: 'The HTML document' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, test_id, test_run_id } = request.params;
        const { testName, run, steps } = await results.withSteps(
          principalOf(request),
          bucket_key,
          test_id,
          test_run_id,
        );
        const html = renderHtmlReport(reportOfRun(testName, run, steps, ctx.publicUrl, nowFloat()));
        reply
          .type('text/html; charset=utf-8')
          .header('content-disposition', `attachment; filename="vigil-report-${run.id}.html"`)
          .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
        return html;
      },
    );

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
