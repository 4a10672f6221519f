import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import { presentView } from './present.js';
import { ViewBody, ViewOut, ViewParams } from './schemas.js';

/** Saved stream views of the dashboard (docs/capture.md). */
export const viewRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { views } = ctx.services;
    const tags = ['messages'];
    const write = { scope: 'message:write' as const };
    const base = '/buckets/:bucket_key/views';

    app.get(
      base,
      {
        schema: {
          tags,
          summary: 'The saved stream views of the bucket, oldest first',
          params: BucketParams,
          response: { 200: Envelope(Type.Array(ViewOut)), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const list = await views.list(principal, request.params.bucket_key);
        return ok(list.map((view) => presentView(view, principal)));
      },
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary: 'Save a stream view: a name, a list (stream) and its filters; at most 100 per bucket',
          params: BucketParams,
          body: ViewBody,
          response: { 201: Envelope(ViewOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const view = await views.create(principal, request.params.bucket_key, request.body);
        reply.code(201);
        return ok(presentView(view, principal));
      },
    );

    app.get(
      `${base}/:view_id`,
      {
        schema: {
          tags,
          summary: 'A saved stream view',
          params: ViewParams,
          response: { 200: Envelope(ViewOut), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const view = await views.get(principal, request.params.bucket_key, request.params.view_id);
        return ok(presentView(view, principal));
      },
    );

    app.put(
      `${base}/:view_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace the name, stream and filters of a saved view',
          params: ViewParams,
          body: ViewBody,
          response: { 200: Envelope(ViewOut), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { bucket_key, view_id } = request.params;
        const view = await views.update(principal, bucket_key, view_id, request.body);
        return ok(presentView(view, principal));
      },
    );

    app.delete(
      `${base}/:view_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a saved view',
          params: ViewParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, view_id } = request.params;
        await views.delete(principalOf(request), bucket_key, view_id);
        return noContent(reply);
      },
    );
  };
