import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { Scope } from '../../domain/scopes.js';
import type { Actor, Principal } from '../../services/principal.js';
import type { TokenService } from '../../services/tokens.js';
import type { RouteConfig } from '../shared/route.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    scope?: Scope | null;
  }
}

const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;

/** The authenticated caller of a protected route; the auth hook guarantees it is set. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new AppError('unauthorized', 'This endpoint needs Authorization: Bearer <access token>');
  return request.principal;
}

/** The caller as the author of an edit; the dashboard marks its requests with `X-Vigil-Source: dashboard`. */
export function actorOf(request: FastifyRequest): Actor {
  const source = request.headers['x-vigil-source'] === 'dashboard' ? 'dashboard' : 'api';
  return { ...principalOf(request), source };
}

/**
 * Bearer authentication and scope checks (DESIGN §2) on every route. Each route states the scope it
 * needs in `config.scope` (GET routes default to api:read; any other route must say, or boot fails);
 * `scope: null` marks a public route.
 */
export function registerAuth(app: FastifyInstance, tokens: TokenService): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as RouteConfig;
    if (config.scope !== undefined) return;
    // The API docs page and its assets are public.
    if (route.url === '/docs' || route.url.startsWith('/docs/')) {
      route.config = { ...config, scope: null };
      return;
    }
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => m === 'GET' || m === 'HEAD')) {
      route.config = { ...config, scope: 'api:read' };
      return;
    }
    throw new Error(`Route ${methods.join(',')} ${route.url} must declare config.scope`);
  });

  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope === null || scope === undefined) return;
    const header = request.headers.authorization;
    const match = header ? BEARER.exec(header) : null;
    if (!match)
      throw new AppError('unauthorized', 'This endpoint needs Authorization: Bearer <access token>');
    const principal = await tokens.authenticate(match[1]!);
    if (!principal) throw new AppError('unauthorized', 'The access token is unknown or has been revoked');
    if (!principal.scopes.has(scope)) {
      throw new AppError('forbidden', `The access token lacks the scope ${scope}, which this endpoint needs`);
    }
    request.principal = principal;
  });
}
