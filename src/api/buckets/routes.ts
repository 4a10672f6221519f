import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../domain/errors.js';
import type { BucketWithTeam } from '../../services/buckets.js';
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
  capture_url: Type.String({ description: 'Records anything sent below it (on the traffic origin)' }),
  gateway_url: Type.String({
    description: 'Forwards <gateway_url>/<scheme>/<host[:port]>/<path> and records the exchange',
  }),
  gateway_domain: Type.Union([Type.String(), Type.Null()], {
    description: 'Host-form gateway URLs: <host with . as - and - as -->-<key>.<gateway_domain>',
  }),
  auth_token: Type.Union([Type.String(), Type.Null()], {
    description: 'When set, capture and gateway requests must send it as Vigil-Bucket-Auth (header or query)',
  }),
  collections_url: Type.String({
    description: "The bucket's saved stream views (Vigil has no message collections)",
  }),
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

const BucketName = Type.String({ minLength: 1, maxLength: 255 });
const TeamRef = Type.String({ maxLength: 64, description: 'A team of the account (default: the first)' });

const BucketCreate = Type.Object(
  {
    name: BucketName,
    team_uuid: Type.Optional(TeamRef),
    team_id: Type.Optional(TeamRef),
  },
  {
    'x-optional-body': true,
    'x-empty-body': true,
    description:
      'JSON or a form body; may be left out (or sent empty) when ?name= is given. team_id is a synonym of team_uuid',
  },
);

/** A form body as an object of strings; a repeated field keeps its last value. */
function formFields(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) out[name] = value;
  return out;
}

export function presentBucket(
  bucket: BucketWithTeam,
  { publicUrl, trafficUrl, gatewayDomain }: Pick<ApiContext, 'publicUrl' | 'trafficUrl' | 'gatewayDomain'>,
) {
  return {
    key: bucket.key,
    name: bucket.name,
    default: bucket.is_default === 1,
    verify_ssl: bucket.verify_ssl === 1,
    trigger_url: `${publicUrl}/radar/bucket/${bucket.trigger_id}/trigger`,
    tests_url: `${publicUrl}/buckets/${bucket.key}/tests`,
    messages_url: `${publicUrl}/buckets/${bucket.key}/messages`,
    capture_url: `${trafficUrl}/capture/${bucket.key}`,
    gateway_url: `${trafficUrl}/gateway/${bucket.key}`,
    gateway_domain: gatewayDomain ?? null,
    auth_token: bucket.auth_token,
    collections_url: `${publicUrl}/buckets/${bucket.key}/views`,
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

    // go-runscope sends `name` and `team_uuid` of a new bucket as a form body; no other route here takes one.
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (request, body, done) =>
        request.method === 'POST' && request.routeOptions.url === '/buckets'
          ? done(null, formFields(body as string))
          : done(
              new AppError(
                'unsupported_media_type',
                'A body needs the header Content-Type: application/json',
              ),
            ),
    );

    app.get(
      '/buckets',
      {
        schema: {
          tags,
          summary: 'Buckets of your teams',
          response: { 200: Envelope(Type.Array(BucketOut)), ...errorResponses },
        },
      },
      async (request) => ok((await buckets.list(principalOf(request))).map((b) => presentBucket(b, ctx))),
    );

    app.post(
      '/buckets',
      {
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: 'Create a bucket: JSON or form {name, team_uuid?} or ?name=&team_uuid=',
          consumes: ['application/json', 'application/x-www-form-urlencoded'],
          querystring: Type.Object({
            name: Type.Optional(BucketName),
            team_uuid: Type.Optional(TeamRef),
          }),
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
        const teamId = request.body?.team_uuid ?? request.body?.team_id ?? request.query.team_uuid;
        const bucket = await buckets.create(actorOf(request), { name, teamId });
        reply.code(201);
        return ok(presentBucket(bucket, ctx));
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
        ok(presentBucket(await buckets.require(principalOf(request), request.params.bucket_key), ctx)),
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
          presentBucket(await buckets.update(actorOf(request), request.params.bucket_key, request.body), ctx),
        ),
    );

    for (const [method, require] of [
      ['POST', true],
      ['DELETE', false],
    ] as const) {
      app.route({
        method,
        url: '/buckets/:bucket_key/auth-token',
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: require
            ? 'Require a new random token on the capture and gateway URLs (the old one stops working)'
            : 'Let the bucket key alone reach the capture and gateway URLs again',
          params: BucketParams,
          response: { 200: Envelope(BucketOut), ...errorResponses },
        },
        handler: async (request) =>
          ok(
            presentBucket(
              await buckets.setAuthToken(actorOf(request), request.params.bucket_key, require),
              ctx,
            ),
          ),
      });
    }

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
