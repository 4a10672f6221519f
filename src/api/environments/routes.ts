import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { presentEnvironment } from './present.js';
import { actorOf, principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, noContent, ok, TestParams } from '../shared/envelope.js';
import {
  EnvironmentInput,
  EnvironmentOut,
  EnvironmentParams,
  EnvironmentPatch,
  SharedEnvironmentParams,
} from './schemas.js';

const limitResponse = { 422: errorResponses[400], 409: errorResponses[400] };

/** Test environments under …/tests/<t>/environments and shared ones under /buckets/<key>/environments. */
export const environmentRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { environments } = ctx.services;
    const write = { scope: 'test:write' as const };

    for (const scope of ['test', 'shared'] as const) {
      const base =
        scope === 'test'
          ? '/buckets/:bucket_key/tests/:test_id/environments'
          : '/buckets/:bucket_key/environments';
      const tags = ['environments'];
      const what = scope === 'test' ? 'of the test' : 'shared in the bucket';
      // One environment by its id under the bucket: a shared one or, as the original service allowed, a test's.
      const whatOne = scope === 'test' ? what : 'of the bucket (shared, or a test environment)';
      const testIdOf = (params: { test_id?: string }) => (scope === 'test' ? params.test_id! : null);
      const params = scope === 'test' ? TestParams : BucketParams;
      const itemParams = scope === 'test' ? EnvironmentParams : SharedEnvironmentParams;

      app.get(
        base,
        {
          schema: {
            tags,
            summary: `The environments ${what}`,
            params,
            response: { 200: Envelope(Type.Array(EnvironmentOut)), ...errorResponses },
          },
        },
        async (request) => {
          const p = request.params as { bucket_key: string; test_id?: string };
          const rows = await environments.list(principalOf(request), p.bucket_key, testIdOf(p));
          return ok(rows.map(presentEnvironment));
        },
      );

      app.post(
        base,
        {
          config: write,
          schema: {
            tags,
            summary: `Create an environment ${what}`,
            params,
            body: EnvironmentInput,
            response: { 201: Envelope(EnvironmentOut), ...errorResponses, ...limitResponse },
          },
        },
        async (request, reply) => {
          const p = request.params as { bucket_key: string; test_id?: string };
          const row = await environments.create(actorOf(request), p.bucket_key, testIdOf(p), request.body);
          reply.code(201);
          return ok(presentEnvironment(row));
        },
      );

      app.get(
        `${base}/:environment_id`,
        {
          schema: {
            tags,
            summary: `One environment ${whatOne}`,
            params: itemParams,
            response: { 200: Envelope(EnvironmentOut), ...errorResponses },
          },
        },
        async (request) => {
          const p = request.params as { bucket_key: string; test_id?: string; environment_id: string };
          return ok(
            presentEnvironment(
              await environments.get(principalOf(request), p.bucket_key, testIdOf(p), p.environment_id),
            ),
          );
        },
      );

      app.put(
        `${base}/:environment_id`,
        {
          config: write,
          schema: {
            tags,
            summary: `Change an environment ${whatOne}; omitted properties stay`,
            params: itemParams,
            body: EnvironmentPatch,
            response: { 200: Envelope(EnvironmentOut), ...errorResponses },
          },
        },
        async (request) => {
          const p = request.params as { bucket_key: string; test_id?: string; environment_id: string };
          const row = await environments.update(
            actorOf(request),
            p.bucket_key,
            testIdOf(p),
            p.environment_id,
            request.body,
          );
          return ok(presentEnvironment(row));
        },
      );

      app.delete(
        `${base}/:environment_id`,
        {
          config: write,
          schema: {
            tags,
            summary: `Delete an environment ${whatOne} (409 while it is a default or a parent)`,
            params: itemParams,
            response: { 204: Type.Null({ description: 'No body' }), ...errorResponses, ...limitResponse },
          },
        },
        async (request, reply) => {
          const p = request.params as { bucket_key: string; test_id?: string; environment_id: string };
          await environments.delete(actorOf(request), p.bucket_key, testIdOf(p), p.environment_id);
          return noContent(reply);
        },
      );
    }
  };
