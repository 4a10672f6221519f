import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { HAR_LIMITS, toHar } from '../../capture/har.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, ok } from '../shared/envelope.js';
import { VERSION } from '../../config/version.js';
import { MessageFilterQuery } from '../messages/schemas.js';
import { harCreator } from '../../domain/vocabulary.js';

const CREATOR = harCreator(VERSION);

const ExportQuery = Type.Object({
  ...MessageFilterQuery,
  since: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only messages after this Unix time (seconds)' }),
  ),
  before: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only messages before this Unix time (seconds)' }),
  ),
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `At most this many entries; default and upper bound ${HAR_LIMITS.exportEntries} (larger values are capped)`,
    }),
  ),
});

const ImportResult = Type.Object({
  imported: Type.Integer(),
  uuids: Type.Array(Type.String(), { description: 'The new messages, in the order of the entries' }),
});

export const harRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { messages } = ctx.services;
    const tags = ['messages'];
    const base = '/buckets/:bucket_key';

    app.get(
      `${base}/messages.har`,
      {
        schema: {
          tags,
          summary: 'The messages of a window as a HAR 1.2 file, oldest first',
          description:
            `At most ${HAR_LIMITS.exportEntries} entries (\`log.comment\` says when the window holds more). ` +
            'Binary request bodies are Base64 text marked `_encoding: "base64"` (HAR 1.2 has no encoding for ' +
            'postData); a message without a response has status 0; messages with only a response are left out.',
          params: BucketParams,
          querystring: ExportQuery,
          response: {
            200: Type.Unsafe<unknown>({
              type: 'object',
              additionalProperties: true,
              description: 'A HAR 1.2 document',
            }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const { bucket_key } = request.params;
        const { count, ...window } = request.query;
        const exported = await messages.exportWindow(principalOf(request), bucket_key, {
          ...window,
          limit: count,
        });
        const har = toHar(exported.messages, {
          creator: CREATOR,
          truncatedAt: exported.truncated ? exported.limit : undefined,
        });
        return reply
          .type('application/json; charset=utf-8')
          .header('content-disposition', `attachment; filename="${bucket_key}.har"`)
          .send(JSON.stringify(har));
      },
    );

    app.post(
      `${base}/har`,
      {
        config: { scope: 'message:write' },
        schema: {
          tags,
          summary: `Import a HAR file: each entry becomes a message (at most ${HAR_LIMITS.importEntries}, all or none)`,
          description:
            'The request method and URL of each entry are required; a field of the wrong type answers 400 ' +
            'naming its JSON pointer (e.g. /log/entries/3/request/url). A response with status 0 means no response.',
          params: BucketParams,
          body: Type.Unsafe<unknown>({
            description: 'A HAR 1.2 document ({"log": {"entries": [...]}})',
            // Checked by the service after the bucket, so that a foreign bucket answers 404 first.
            'x-optional-body': true,
          }),
          response: { 201: Envelope(ImportResult), 422: errorResponses[400], ...errorResponses },
        },
      },
      async (request, reply) => {
        const uuids = await messages.importHar(principalOf(request), request.params.bucket_key, request.body);
        reply.code(201);
        return ok({ imported: uuids.length, uuids });
      },
    );
  };
