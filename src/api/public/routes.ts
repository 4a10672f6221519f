import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { renderMessagePage, renderNotFoundPage } from '../../capture/render.js';
import { notFound } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import { dashboardDirectory } from '../dashboard/routes.js';
import { PublicMessage } from '../messages/schemas.js';
import { Envelope, ErrorEnvelope, ok } from '../shared/envelope.js';

/** The page may style itself inline and show data: images; nothing else loads, runs, frames or posts. */
export const PUBLIC_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The dashboard's build of the page (`public.html`): it loads the dashboard's own script and styles
 * from `/app/assets/` and reads this same address as JSON; nothing else loads, frames or posts.
 */
export const PUBLIC_APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The built public page, or undefined when the dashboard is not built (the server renders the page then). */
async function builtPage(ctx: Pick<ApiContext, 'dashboardDir'>): Promise<Buffer | undefined> {
  try {
    return await readFile(path.join(dashboardDirectory(ctx), 'public.html'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Headers of every answer of a public link, whichever representation it takes. */
function guard(reply: FastifyReply): void {
  reply
    .header('Cache-Control', 'no-store')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Robots-Tag', 'noindex, nofollow')
    .header('Vary', 'Accept');
}

export function sendPage(
  reply: FastifyReply,
  status: number,
  html: string | Buffer,
  csp = PUBLIC_PAGE_CSP,
): FastifyReply {
  return reply
    .code(status)
    .header('Content-Security-Policy', csp)
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * The public link of a shared message (DESIGN §6): no auth; the share token is the credential.
 * JSON clients get the message detail in the envelope, browsers the dashboard's public page (the
 * dashboard's message renderer, which reads the JSON) or, without a dashboard build, a self-contained
 * server-rendered HTML page. An unknown
 * or revoked token answers a small HTML page to browsers and the 404 envelope to everyone else.
 */
export const publicMessageRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { messages } = ctx.services;

    app.get(
      '/public/messages/:token',
      {
        config: { scope: null },
        schema: {
          tags: ['messages'],
          summary:
            'A shared message (no auth): HTML for browsers, the message detail for Accept: application/json',
          params: Type.Object({ token: Type.String() }),
          response: {
            200: Envelope(PublicMessage),
            404: Type.Ref(ErrorEnvelope),
          },
        },
      },
      async (request, reply) => {
        guard(reply);
        const message = await messages.byShareToken(request.params.token);
        const accept = (request.headers.accept ?? '').toLowerCase();
        const wantsJson = accept.includes('application/json');
        if (message) {
          if (wantsJson) return ok(message);
          const built = await builtPage(ctx);
          return built
            ? sendPage(reply, 200, built, PUBLIC_APP_CSP)
            : sendPage(reply, 200, renderMessagePage(message));
        }
        // A browser gets a page; any other client the error envelope every API path answers with.
        if (!wantsJson && accept.includes('text/html')) return sendPage(reply, 404, renderNotFoundPage());
        throw notFound('Shared message');
      },
    );
  };
