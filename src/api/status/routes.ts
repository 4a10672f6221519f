import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../domain/errors.js';
import {
  type StatusPage,
  StatusPageGroup,
  StatusPageInput,
  StatusPagePatch,
} from '../../domain/status-pages.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { sendPage } from '../public/routes.js';
import {
  BucketParams,
  Envelope,
  ErrorEnvelope,
  errorResponses,
  noContent,
  Nullable,
  ok,
} from '../shared/envelope.js';
import { renderStatusNotFound, renderStatusPage } from './render.js';

const StatusPageOut = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  title: Type.String(),
  environment_id: Nullable(Type.String()),
  groups: Type.Array(StatusPageGroup),
  public_url: Type.String({ description: 'PUBLIC_URL/status/<slug>: no login' }),
  created_at: Type.Number(),
  updated_at: Type.Number(),
});
const StatusPageParams = Type.Object({ bucket_key: Type.String(), status_page_id: Type.String() });

/** How long browsers and proxies may keep a status page. */
const PUBLIC_MAX_AGE_SECONDS = 30;

/**
 * A bucket's public status pages (docs/alerting.md, "Status pages"): editors manage them under the
 * bucket; anyone reads `/status/<slug>`, as HTML or (Accept: application/json) as JSON.
 */
export const statusPageRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { statusPages } = ctx.services;
    const tags = ['status pages'];
    const write = { scope: 'bucket:write' as const };
    const base = '/buckets/:bucket_key/status-pages';
    const present = (page: StatusPage) => ({
      id: page.id,
      slug: page.slug,
      title: page.title,
      environment_id: page.environment_id,
      groups: page.groups,
      public_url: `${ctx.publicUrl}/status/${page.slug}`,
      created_at: page.created_at,
      updated_at: page.updated_at,
    });

    app.get(
      base,
      {
        schema: {
          tags,
          summary: 'The status pages of the bucket',
          params: BucketParams,
          response: { 200: Envelope(Type.Array(StatusPageOut)), ...errorResponses },
        },
      },
      async (request) =>
        ok((await statusPages.list(principalOf(request), request.params.bucket_key)).map(present)),
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary:
            'Create a status page: {slug, title, environment_id?, groups: [{name, tests: [{test_id, name}]}]}',
          params: BucketParams,
          body: StatusPageInput,
          response: { 201: Envelope(StatusPageOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const page = await statusPages.create(principalOf(request), request.params.bucket_key, request.body);
        reply.code(201);
        return ok(present(page));
      },
    );

    app.get(
      `${base}/:status_page_id`,
      {
        schema: {
          tags,
          summary: 'One status page',
          params: StatusPageParams,
          response: { 200: Envelope(StatusPageOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, status_page_id } = request.params;
        return ok(present(await statusPages.get(principalOf(request), bucket_key, status_page_id)));
      },
    );

    app.put(
      `${base}/:status_page_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a status page (the fields given)',
          params: StatusPageParams,
          body: StatusPagePatch,
          response: { 200: Envelope(StatusPageOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, status_page_id } = request.params;
        return ok(
          present(await statusPages.update(principalOf(request), bucket_key, status_page_id, request.body)),
        );
      },
    );

    app.delete(
      `${base}/:status_page_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a status page (its address answers 404 from then on)',
          params: StatusPageParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, status_page_id } = request.params;
        await statusPages.delete(principalOf(request), bucket_key, status_page_id);
        return noContent(reply);
      },
    );

    app.get(
      '/status/:slug',
      {
        config: { scope: null },
        schema: {
          tags,
          summary: 'A public status page (no auth): HTML, or JSON for Accept: application/json',
          params: Type.Object({ slug: Type.String() }),
          response: { 200: Envelope(Type.Unknown()), 404: Type.Ref(ErrorEnvelope) },
        },
      },
      async (request, reply) => {
        const accept = (request.headers.accept ?? '').toLowerCase();
        const wantsJson = accept.includes('application/json');
        reply.header('X-Content-Type-Options', 'nosniff').header('Vary', 'Accept');
        const status = await statusPages.publicView(request.params.slug);
        if (!status) {
          reply.header('Cache-Control', 'no-store');
          // A browser gets a page; any other client the error envelope every API path answers with.
          if (!wantsJson && accept.includes('text/html')) return sendPage(reply, 404, renderStatusNotFound());
          throw notFound('Status page');
        }
        reply.header('Cache-Control', `public, max-age=${PUBLIC_MAX_AGE_SECONDS}`);
        if (wantsJson) return ok(status);
        return sendPage(reply, 200, renderStatusPage(status));
      },
    );
  };
