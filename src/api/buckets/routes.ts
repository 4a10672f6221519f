import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../domain/errors.js';
import type { BucketWithTeam } from '../../store/repositories/buckets.js';
import type { ApiContext } from '../context.js';
import { actorOf, principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';

const BucketOut = Type.Object({
  key: Type.String(),
  name: Type.String(),
  default: Type.Boolean(),
  verify_ssl: Type.Boolean(),
  trigger_url: Type.String({ description: 'Runs every test of the bucket with its default environment' }),
  tests_url: Type.String(),
  messages_url: Type.String(),
  capture_url: Type.String(),
  team: Type.Object({ id: Type.String(), name: Type.String() }),
  retention_days: Type.Integer({
    description: 'Captured messages older than this are deleted, shared ones excepted',
  }),
  created_at: Type.Integer(),
});

const BucketPatch = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  verify_ssl: Type.Optional(Type.Boolean()),
  retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
});

const BucketCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    team_uuid: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { 'x-optional-body': true, description: 'May be left out when ?name= is given' },
);

export function presentBucket(bucket: BucketWithTeam, publicUrl: string) {
  return {
    key: bucket.key,
    name: bucket.name,
    default: bucket.is_default === 1,
    verify_ssl: bucket.verify_ssl === 1,
    trigger_url: `${publicUrl}/radar/bucket/${bucket.trigger_id}/trigger`,
    tests_url: `${publicUrl}/buckets/${bucket.key}/tests`,
    messages_url: `${publicUrl}/buckets/${bucket.key}/messages`,
    capture_url: `${publicUrl}/capture/${bucket.key}`,
    team: { id: bucket.team_id, name: bucket.team_name },
    retention_days: bucket.retention_days,
    created_at: bucket.created_at,
  };
}

export const bucketRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { buckets } = ctx.services;
    const tags = ['buckets'];

    app.get(
      '/buckets',
      {
        schema: {
          tags,
          summary: 'Buckets of your teams',
          response: { 200: Envelope(Type.Array(BucketOut)), ...errorResponses },
        },
      },
      async (request) =>
        ok((await buckets.list(principalOf(request))).map((b) => presentBucket(b, ctx.publicUrl))),
    );

    app.post(
      '/buckets',
      {
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: 'Create a bucket: JSON {name, team_uuid?} or ?name=',
          querystring: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
          body: Type.Optional(BucketCreate),
          response: { 201: Envelope(BucketOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const name = request.body?.name ?? request.query.name;
        if (!name)
          throw new AppError(
            'validation_failed',
            '/name is required (in the JSON body or as ?name=)',
            '/name',
          );
        const bucket = await buckets.create(actorOf(request), { name, teamId: request.body?.team_uuid });
        reply.code(201);
        return ok(presentBucket(bucket, ctx.publicUrl));
      },
    );

    app.get(
      '/buckets/:bucket_key',
      {
        schema: {
          tags,
          summary: 'One bucket',
          params: BucketParams,
          response: { 200: Envelope(BucketOut), ...errorResponses },
        },
      },
      async (request) =>
        ok(
          presentBucket(
            await buckets.require(principalOf(request), request.params.bucket_key),
            ctx.publicUrl,
          ),
        ),
    );

    app.put(
      '/buckets/:bucket_key',
      {
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: 'Change a bucket: name, verify_ssl, retention_days (1–3650)',
          params: BucketParams,
          body: BucketPatch,
          response: { 200: Envelope(BucketOut), ...errorResponses },
        },
      },
      async (request) =>
        ok(
          presentBucket(
            await buckets.update(actorOf(request), request.params.bucket_key, request.body),
            ctx.publicUrl,
          ),
        ),
    );

    app.delete(
      '/buckets/:bucket_key',
      {
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: 'Delete a bucket with everything in it (the default bucket stays: 409)',
          params: BucketParams,
          response: {
            204: Type.Null({ description: 'No body' }),
            ...errorResponses,
            409: errorResponses[400],
          },
        },
      },
      async (request, reply) => {
        await buckets.delete(actorOf(request), request.params.bucket_key);
        return noContent(reply);
      },
    );
  };
