import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { curlScript } from '../../services/exports/curl.js';
import { postmanCollection } from '../../services/exports/postman.js';
import type { ApiContext } from '../context.js';
import type { Principal } from '../../services/principal.js';
import { TestService } from '../../services/tests.js';
import { actorOf, principalOf } from '../plugins/auth.js';
import { AnswerCache } from '../shared/answer-cache.js';
import { BucketParams, Envelope, errorResponses, noContent, ok, TestParams } from '../shared/envelope.js';
import { presentRevision, presentTest, presentTestListItem, presentTestSummary } from './present.js';
import {
  RestoreOut,
  RevisionParams,
  RevisionsOut,
  SummariesQuery,
  TestCreateBody,
  TestCreateQuery,
  TestDetail,
  ExportQuery,
  TestExportOut,
  TestListItem,
  TestPatch,
  TestsQuery,
  TestSummaryOut,
} from './schemas.js';

export const testRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { tests } = ctx.services;
    // The list and the detail are what clients poll (Terraform refreshes, dashboards, scripts).
    const answers = new AnswerCache(ctx.storage, TestService.READ_TABLES);

    app.get(
      '/buckets/:bucket_key/tests',
      {
        schema: {
          tags: ['tests'],
          summary: 'List the tests of a bucket, newest first (?count=&offset= page)',
          params: BucketParams,
          querystring: TestsQuery,
          response: { 200: Envelope(Type.Array(TestListItem)), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { bucket_key } = request.params;
        const { count, offset } = request.query;
        return answers.send(reply, answerKey(principal, 'list', bucket_key, count, offset), async () => {
          const rows = await tests.list(principal, bucket_key, request.query);
          return ok(rows.map((row) => presentTestListItem(row, principal)));
        });
      },
    );

    app.get(
      '/buckets/:bucket_key/test-summaries',
      {
        schema: {
          tags: ['tests'],
          summary: 'The tests list of the dashboard: each test with its schedules, last run and recent runs',
          description:
            'Oldest first (GET …/tests lists newest first). `meta.total` is the number of tests in the bucket. `recent_runs` are up to ' +
            '20 newest finished (pass or fail) runs, oldest first; `response_time_ms` is the sum of the ' +
            "run's request response times.",
          params: BucketParams,
          querystring: SummariesQuery,
          response: {
            200: Type.Object({
              data: Type.Array(TestSummaryOut),
              meta: Type.Object({ status: Type.Literal('success'), total: Type.Integer() }),
              error: Type.Null(),
            }),
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const { summaries, total } = await tests.summaries(
          principalOf(request),
          request.params.bucket_key,
          request.query,
        );
        return {
          data: summaries.map(presentTestSummary),
          meta: { status: 'success' as const, total },
          error: null,
        };
      },
    );

    app.post(
      '/buckets/:bucket_key/tests',
      {
        config: { scope: 'test:write' },
        schema: {
          tags: ['tests'],
          summary: 'Create a test, several tests (array), or import an exported test',
          params: BucketParams,
          querystring: TestCreateQuery,
          body: TestCreateBody,
          response: { 201: Envelope(Type.Union([TestDetail, Type.Array(TestDetail)])), ...errorResponses },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request);
        const isArray = Array.isArray(request.body);
        const inputs = Array.isArray(request.body) ? request.body : [request.body];
        const created = await tests.create(actor, request.params.bucket_key, inputs, {
          isArray,
          restoredFrom: request.query.restored_from,
        });
        const data = created.map((aggregate) => presentTest(aggregate, actor, ctx.publicUrl));
        reply.code(201);
        return ok(isArray ? data : data[0]!);
      },
    );

    app.get(
      '/buckets/:bucket_key/tests/:test_id',
      {
        schema: {
          tags: ['tests'],
          summary: 'A test in its detail form',
          params: TestParams,
          response: { 200: Envelope(TestDetail), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { bucket_key, test_id } = request.params;
        return answers.send(reply, answerKey(principal, 'detail', bucket_key, test_id), async () => {
          const aggregate = await tests.get(principal, bucket_key, test_id);
          return ok(presentTest(aggregate, principal, ctx.publicUrl));
        });
      },
    );

    app.put(
      '/buckets/:bucket_key/tests/:test_id',
      {
        config: { scope: 'test:write' },
        schema: {
          tags: ['tests'],
          summary: 'Change name, description, default_environment_id or the steps; omitted properties stay',
          params: TestParams,
          body: TestPatch,
          response: { 200: Envelope(TestDetail), ...errorResponses },
        },
      },
      async (request) => {
        const actor = actorOf(request);
        const aggregate = await tests.update(
          actor,
          request.params.bucket_key,
          request.params.test_id,
          request.body,
        );
        return ok(presentTest(aggregate, actor, ctx.publicUrl));
      },
    );

    app.delete(
      '/buckets/:bucket_key/tests/:test_id',
      {
        config: { scope: 'test:write' },
        schema: {
          tags: ['tests'],
          summary: 'Delete a test with its steps, schedules, environments and results',
          params: TestParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        await tests.delete(actorOf(request), request.params.bucket_key, request.params.test_id);
        return noContent(reply);
      },
    );

    app.get(
      '/buckets/:bucket_key/tests/:test_id/export',
      {
        schema: {
          tags: ['tests'],
          summary:
            'The test as a portable JSON file (POST it to …/tests to recreate it; `vigil run` runs it), ' +
            'a Postman collection or a cURL script',
          description:
            'A download, with `Content-Disposition: attachment`. `format=vigil` (default): the bare test ' +
            'document, not wrapped in the envelope, named `<test name>.json`. `format=postman`: a Postman ' +
            'collection (v2.1) named `<test name>.postman_collection.json`. `format=curl`: a bash script ' +
            'with one curl command per request step, named `<test name>.sh`. Errors keep the envelope.',
          params: TestParams,
          querystring: ExportQuery,
          response: {
            200: Type.Union([
              TestExportOut,
              Type.Object({}, { additionalProperties: true, description: 'format=postman: the collection' }),
              Type.String({ description: 'format=curl: the bash script' }),
            ]),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const exported = await tests.export(
          principalOf(request),
          request.params.bucket_key,
          request.params.test_id,
        );
        const format = request.query.format ?? 'vigil';
        const base = exportFileName(exported.name).replace(/\.json$/, '');
        const names = {
          vigil: `${base}.json`,
          postman: `${base}.postman_collection.json`,
          curl: `${base}.sh`,
        };
        reply.header('content-disposition', `attachment; filename="${names[format]}"`);
        switch (format) {
          case 'vigil':
            return reply.type('application/json; charset=utf-8').send(JSON.stringify(exported));
          case 'postman':
            return reply
              .type('application/json; charset=utf-8')
              .send(JSON.stringify(postmanCollection(exported), null, 2));
          case 'curl':
            return reply.type('text/x-shellscript; charset=utf-8').send(curlScript(exported));
        }
      },
    );

    app.get(
      '/buckets/:bucket_key/tests/:test_id/revisions',
      {
        schema: {
          tags: ['tests'],
          summary: 'Edit history of the test and of its environments',
          params: TestParams,
          response: { 200: Envelope(RevisionsOut), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { test, environments } = await tests.revisions(
          principal,
          request.params.bucket_key,
          request.params.test_id,
        );
        const envRevisions: Record<string, ReturnType<typeof presentRevision>[]> = {};
        for (const [id, rows] of environments)
          envRevisions[id] = rows.map((row) => presentRevision(row, principal));
        return ok({
          test_revisions: test.map((row) => presentRevision(row, principal)),
          env_revisions: envRevisions,
        });
      },
    );

    app.post(
      '/buckets/:bucket_key/tests/:test_id/revisions/:revision_uuid/restore',
      {
        config: { scope: 'test:write' },
        schema: {
          tags: ['tests'],
          summary: 'Set the test (or one of its environments) back to a revision; answers the test',
          description:
            'A test revision restores name, description, default_environment_id, steps (with their ids) and ' +
            'schedules; an environment revision restores that environment, recreating it when deleted. ' +
            'Parts naming environments that no longer exist are left out and listed in `meta.skipped`. ' +
            'Writes a new revision. A revision recording the deletion of the test: 409.',
          params: RevisionParams,
          response: { 200: RestoreOut, ...errorResponses },
        },
      },
      async (request) => {
        const actor = actorOf(request);
        const { bucket_key, test_id, revision_uuid } = request.params;
        const { aggregate, skipped } = await ctx.services.restore.restore(
          actor,
          bucket_key,
          test_id,
          revision_uuid,
        );
        return {
          data: presentTest(aggregate, actor, ctx.publicUrl),
          meta: { status: 'success' as const, skipped },
          error: null,
        };
      },
    );
  };

/** A file name for an exported test: its name in safe characters, else `test`, with `.json`. */
export function exportFileName(name: string): string {
  const safe = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 100);
  return `${safe || 'test'}.json`;
}

/**
 * What a cached answer of these routes depends on besides the stored data: the caller's account
 * (membership decides what it may see) and whether its token may see e-mail addresses.
 */
function answerKey(principal: Principal, ...request: (string | number | undefined)[]): string {
  return JSON.stringify([principal.accountId, principal.scopes.has('account:email'), ...request]);
}
