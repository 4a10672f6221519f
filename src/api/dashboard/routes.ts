import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../../domain/html.js';
import { AppError } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import { sendError } from '../plugins/errors.js';

/** Where the dashboard lives; the single-page app routes everything below it on the client. */
export const DASHBOARD_PATH = '/app/';

/** The SPA loads only its own files; inline styles are allowed for its components. */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The placeholder of dashboard/index.html that the served page fills with PUBLIC_URL. */
const PUBLIC_URL_META = /<meta name="vigil-public-url" content="[^"]*"\s*\/?>/;

/** The Vite build of `dashboard/`, found from the package root whether this runs from src/ or dist/. */
const BUILT_DASHBOARD = fileURLToPath(new URL('../../../dist/dashboard/', import.meta.url));

export const dashboardDirectory = (ctx: Pick<ApiContext, 'dashboardDir'>): string =>
  path.resolve(ctx.dashboardDir ?? BUILT_DASHBOARD);

/** Whether the dashboard has been built (its index.html exists); checked per call, so a later build counts. */
export const isDashboardBuilt = (ctx: Pick<ApiContext, 'dashboardDir'>): boolean =>
  existsSync(path.join(dashboardDirectory(ctx), 'index.html'));

const NOT_BUILT_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built · Vigil</title>' +
  '</head><body><h1>The dashboard is not built</h1><p>This Vigil server has no dashboard files. ' +
  'Run <code>npm run build</code> and reload this page.</p>' +
  '<p><a href="/profile">Your account</a> · <a href="/docs">API documentation</a></p></body></html>';

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', DASHBOARD_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin');
}

/** A client-side route: the last path segment names no file (no extension). */
function isClientRoute(url: string): boolean {
  const pathname = url.split('?')[0] ?? '';
  const last = pathname.slice(pathname.lastIndexOf('/') + 1);
  return !last.includes('.');
}

/**
 * The web dashboard at `/app/` (a Vite build in `dist/dashboard/`). Hashed files under `assets/` are
 * cached for a year; `index.html`, which every client-side route (a path without an extension) gets,
 * is revalidated each time. Precompressed `.br`/`.gz` siblings are served when the browser accepts
 * them. Without a build, `/app/` answers 503 with a page that says so. All routes are public: the SPA
 * gets its token through the OAuth flow of the `vigil-dashboard` client (docs/oauth.md).
 */
export const dashboardRoutes =
  (ctx: Pick<ApiContext, 'publicUrl' | 'dashboardDir'>): FastifyPluginAsync =>
  async (app) => {
    const root = dashboardDirectory(ctx);
    const moreInfo = `${ctx.publicUrl}/errors`;

    async function sendIndex(reply: FastifyReply): Promise<FastifyReply> {
      securityHeaders(reply);
      let html: Buffer;
      try {
        html = await readFile(path.join(root, 'index.html'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        return reply
          .code(503)
          .header('Cache-Control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(NOT_BUILT_PAGE);
      }
      // The page learns PUBLIC_URL, so a browser that came by another name (127.0.0.1 for localhost)
      // moves there first: sign-in only returns to PUBLIC_URL/app/, and the token is kept per origin.
      const page = html
        .toString('utf8')
        .replace(PUBLIC_URL_META, `<meta name="vigil-public-url" content="${escapeHtml(ctx.publicUrl)}" />`);
      return reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(page);
    }

    await app.register(
      async (scoped) => {
        // The static plugin takes no route config: its routes (hidden from the docs by default) are
        // made public here, after the auth plugin's own onRoute hook gave GET routes api:read.
        scoped.addHook('onRoute', (route) => {
          route.config = { ...route.config, scope: null };
        });
        scoped.addHook('onRequest', async (_request, reply) => {
          securityHeaders(reply);
        });

        // Files that do not exist: a client-side route gets index.html, anything else the 404 envelope.
        scoped.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
          securityHeaders(reply);
          if ((request.method === 'GET' || request.method === 'HEAD') && isClientRoute(request.url)) {
            return sendIndex(reply);
          }
          const pathname = request.url.split('?')[0] ?? '';
          return sendError(reply, new AppError('not_found', `No resource at ${pathname}`), moreInfo);
        });

        // `/app` and `/app/` are one route (the router ignores trailing slashes); the first moves to the second.
        scoped.get('/', { config: { scope: null }, schema: { hide: true } }, async (request, reply) => {
          const [pathname, query] = request.url.split('?', 2);
          if (!pathname?.endsWith('/')) {
            return reply.redirect(`${DASHBOARD_PATH}${query === undefined ? '' : `?${query}`}`, 301);
          }
          return sendIndex(reply);
        });

        await scoped.register(fastifyStatic, {
          root,
          prefix: '/',
          decorateReply: false,
          preCompressed: true,
          dotfiles: 'ignore',
          cacheControl: false,
          // No build yet is a normal state (the 503 page), not a misconfiguration to warn about;
          // so is a request for a hashed asset, which needs no line in the log either.
          logLevel: 'error',
          setHeaders(response, file) {
            const relative = path.relative(root, file);
            const hashed = relative.startsWith(`assets${path.sep}`);
            response.setHeader('Cache-Control', hashed ? IMMUTABLE : 'no-cache');
            // A precompressed copy may answer instead: caches keep one per encoding.
            response.setHeader('Vary', 'Accept-Encoding');
          },
        });
      },
      { prefix: DASHBOARD_PATH.slice(0, -1) },
    );
  };
