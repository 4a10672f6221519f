import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
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
    personalToken?: boolean;
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
 * `scope: null` marks a public route. `personalToken: true` also refuses OAuth tokens granted to
 * applications (routes that manage credentials). The OpenAPI document shows both on each operation as
 * `x-vigil-scope` and `x-vigil-personal-token`.
 */
export function registerAuth(app: FastifyInstance, tokens: TokenService): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as RouteConfig;
    const scope = config.scope !== undefined ? config.scope : defaultScope(route);
    route.config = { ...config, scope };
    if (scope === null) return;
    route.schema = Object.assign({}, route.schema, {
      'x-vigil-scope': scope,
      ...(config.personalToken && { 'x-vigil-personal-token': true }),
    });
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
    if (request.routeOptions.config.personalToken && !(await tokens.isPersonal(principal))) {
      throw new AppError(
        'forbidden',
        'This endpoint manages credentials and needs a personal access token; tokens granted to applications may not use it',
      );
    }
    request.principal = principal;
  });
}

/** The scope of a route that does not name one: none for the docs pages, api:read for reads. */
function defaultScope(route: RouteOptions): Scope | null {
  // The API docs page and its assets are public.
  if (route.url === '/docs' || route.url.startsWith('/docs/')) return null;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.every((m) => m === 'GET' || m === 'HEAD')) return 'api:read';
  throw new Error(`Route ${methods.join(',')} ${route.url} must declare config.scope`);
}
