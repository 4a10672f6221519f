import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { actorOf, principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, noContent, ok, TestParams } from '../shared/envelope.js';
import { presentRevision, presentTest, presentTestListItem } from './present.js';
import {
  RevisionsOut,
  TestCreateBody,
  TestDetail,
  TestExportOut,
  TestListItem,
  TestPatch,
  TestsQuery,
} from './schemas.js';

export const testRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { tests } = ctx.services;

    app.get(
      '/buckets/:bucket_key/tests',
      {
        schema: {
          tags: ['tests'],
          summary: 'List the tests of a bucket',
          params: BucketParams,
          querystring: TestsQuery,
          response: { 200: Envelope(Type.Array(TestListItem)), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await tests.list(principal, request.params.bucket_key, request.query);
        return ok(rows.map((row) => presentTestListItem(row, principal)));
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
          body: TestCreateBody,
          response: { 201: Envelope(Type.Union([TestDetail, Type.Array(TestDetail)])), ...errorResponses },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request);
        const isArray = Array.isArray(request.body);
        const inputs = Array.isArray(request.body) ? request.body : [request.body];
        const created = await tests.create(actor, request.params.bucket_key, inputs, isArray);
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
      async (request) => {
        const principal = principalOf(request);
        const aggregate = await tests.get(principal, request.params.bucket_key, request.params.test_id);
        return ok(presentTest(aggregate, principal, ctx.publicUrl));
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
          summary: 'The test as portable JSON (POST it to …/tests to recreate it; `vigil run` runs it)',
          params: TestParams,
          response: { 200: Envelope(TestExportOut), ...errorResponses },
        },
      },
      async (request) =>
        ok(await tests.export(principalOf(request), request.params.bucket_key, request.params.test_id)),
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
  };
