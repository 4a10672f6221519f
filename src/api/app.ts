import type { IncomingMessage } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ValidateFunction } from 'ajv';
import fastJson from 'fast-json-stringify';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { AppError } from '../domain/errors.js';
import { SCOPES } from '../domain/scopes.js';
import { storeFailureOf } from '../store/errors.js';
import { compileBodySchema, createParamsAjv, toValidationError } from '../services/validation.js';
import { accountRoutes } from './account/routes.js';
import { agentProtocolRoutes } from './agents/protocol.js';
import { agentRoutes } from './agents/routes.js';
import { applicationRoutes } from './applications/routes.js';
import { bucketRoutes } from './buckets/routes.js';
import type { ApiContext } from './context.js';
import { environmentRoutes } from './environments/routes.js';
import { harRoutes } from './har/routes.js';
import { integrationRoutes } from './integrations/routes.js';
import { notificationRoutes } from './notifications/routes.js';
import { publicRoutes } from './health/routes.js';
import { registerAuth } from './plugins/auth.js';
import { registerJsonBody } from './plugins/body.js';
import { registerMetricsRoute, registerRequestMetrics } from './plugins/metrics.js';
import { registerIdempotency } from './plugins/idempotency.js';
import { registerStorageGuard } from './plugins/storage.js';
import { registerPermissions } from './plugins/permissions.js';
import { ROUTER_OPTIONS, registerErrorHandling, sendError, toAppError } from './plugins/errors.js';
import { messageRoutes } from './messages/routes.js';
import { publicMessageRoutes } from './public/routes.js';
import { regionRoutes } from './regions/routes.js';
import { runRoutes } from './runs/routes.js';
import { maintenanceRoutes } from './maintenance/routes.js';
import { scheduleRoutes } from './schedules/routes.js';
import { serializerSchema } from './shared/serializer-schema.js';
import { ErrorEnvelope } from './shared/envelope.js';
import { statusPageRoutes } from './status/routes.js';
import { stepRoutes } from './steps/routes.js';
import { teamRoutes } from './teams/routes.js';
import { testRoutes } from './tests/routes.js';
import { importRoutes } from './imports/routes.js';
import { trafficRoutes } from './traffic/routes.js';
import { triggerRoutes } from './triggers/routes.js';
import { viewRoutes } from './views/routes.js';
import { webRoutes } from './web/routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { checkCsrf } from '../auth/sessions.js';
import { dashboardRoutes } from './dashboard/routes.js';

export interface AppOptions {
  bodyLimit: number;
  logger: FastifyServerOptions['logger'];
}

/** Headers that carry credentials never reach the log. */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

/**
 * A request URL as logs show it. Trigger URLs carry their credential (the trigger id) in the path
 * and often secrets as variables in the query, so both are left out; so is the share token of a
 * public message and of an invitation link, and the query of the dashboard's page, where the OAuth flow brings its code.
 */
export function loggedUrl(url: string): string {
  const trigger = /^\/radar\/(bucket\/)?[^/?]+(\/[^?]*)?/.exec(url);
  if (trigger) {
    return `/radar/${trigger[1] ?? ''}[trigger id]${trigger[2] ?? ''}${url.includes('?') ? '?[parameters]' : ''}`;
  }
  // The dashboard's query carries the OAuth code; capture and gateway queries carry whatever the
  // sender put there (API keys, tokens, the bucket's own token).
  if (/^\/(app\/?|capture\/|gateway\/)[^?]*\?/.test(url))
    return `${url.slice(0, url.indexOf('?'))}?[parameters]`;
  const invitation = /^\/invitations\/[^/?]+/.exec(url);
  if (invitation) return `/invitations/[invitation token]${url.slice(invitation[0].length)}`;
  const shared = /^\/public\/messages\/[^/?]+/.exec(url);
  if (shared) return `/public/messages/[share token]${url.slice(shared[0].length)}`;
  return url;
}

/**
 * An error as the log shows it: its type, message and codes, the stack of unexpected ones, and its
 * cause; never the objects a driver hangs on it (a `pg` client, a pool), which run to kilobytes.
 */
export function compactError(err: unknown, depth = 0): Record<string, unknown> {
  if (typeof err !== 'object' || err === null) return { type: typeof err, message: String(err) };
  const e = err as Record<string, unknown> & { message?: unknown; stack?: unknown; cause?: unknown };
  const out: Record<string, unknown> = {
    type: (err as { constructor?: { name?: string } }).constructor?.name ?? 'Error',
    message: typeof e.message === 'string' ? e.message : String(e.message),
  };
  for (const key of [
    'code',
    'errcode',
    'errstr',
    'errno',
    'severity',
    'detail',
    'syscall',
    'address',
    'port',
  ]) {
    const value = e[key];
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
  }
  // A store that is down or full is its own diagnosis; its stack adds nothing.
  if (typeof e.stack === 'string' && storeFailureOf(err) === 'other') out.stack = e.stack;
  if (Array.isArray(e.errors) && depth < 2)
    out.errors = e.errors.slice(0, 3).map((inner: unknown) => compactError(inner, depth + 1));
  if (e.cause !== undefined && depth < 3) out.cause = compactError(e.cause, depth + 1);
  return out;
}

/** `//buckets/x` → `/buckets/x`; only the leading run, so paths forwarded by the gateway keep theirs. */
export function collapseLeadingSlashes(url: string): string {
  return url.startsWith('//') ? url.replace(/^\/+/, '/') : url;
}

/** Pino serialisers: requests with trigger URLs masked, errors compact. */
export const LOG_SERIALIZERS = {
  // Fastify's type wants a stack on every error; unexpected ones keep theirs.
  err: (err: unknown) => compactError(err) as { type: string; message: string; stack: string },
  req(request: FastifyRequest) {
    return {
      method: request.method,
      url: loggedUrl(request.url),
      host: request.headers.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    };
  },
};

/** The Fastify options both listeners (the API's and the traffic origin's) share. */
export function serverOptions(options: AppOptions, moreInfo: string) {
  return {
    logger: options.logger,
    bodyLimit: options.bodyLimit,
    return503OnClosing: true,
    routerOptions: ROUTER_OPTIONS,
    // Errors the router meets before any route (a bad percent-escape, an over-long parameter) use the envelope too.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) =>
      sendError(reply, toAppError(error), moreInfo),
  };
}

export async function buildApp(ctx: ApiContext, options: AppOptions): Promise<FastifyInstance> {
  const moreInfo = `${ctx.publicUrl}/errors`;
  const app = Fastify({
    ...serverOptions(options, moreInfo),
    // The original service's example scripts join a base URL ending in / with paths starting with
    // one (`//buckets/…`); a doubled leading slash reaches the same route.
    rewriteUrl: (request: IncomingMessage) => collapseLeadingSlashes(request.url ?? '/'),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are validated strictly (no coercion, discriminated step types); query and path parameters
  // coerce. A schema object shared by several routes is compiled once, on the first request that
  // needs it: routes a process never serves hold no compiled code.
  const paramsAjv = createParamsAjv();
  const compiled = new WeakMap<object, ValidateFunction>();
  const compile = (schema: object, httpPart: string | undefined): ValidateFunction => {
    let validate = httpPart === 'body' ? undefined : compiled.get(schema);
    if (!validate) {
      validate = httpPart === 'body' ? compileBodySchema(schema) : paramsAjv.compile(schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
  app.setValidatorCompiler(({ schema, httpPart }) => {
    let validate: ValidateFunction | undefined;
    const prefix = httpPart === 'querystring' ? '?' : httpPart === 'params' ? ':' : '';
    // A route whose body may be left out marks its body schema `x-optional-body`.
    const optional = httpPart === 'body' && (schema as Record<string, unknown>)['x-optional-body'] === true;
    // Query parameters a route reads may not carry NUL, which the stores cannot keep, nor be infinite.
    const declared =
      httpPart === 'querystring' ? Object.keys((schema as { properties?: object }).properties ?? {}) : [];
    return (data: unknown) => {
      if (optional && (data === undefined || data === null)) return { value: data };
      validate ??= compile(schema, httpPart);
      if (!validate(data)) return { error: toValidationError(validate.errors, prefix) };
      for (const name of declared) {
        const value = (data as Record<string, unknown>)[name];
        // Coercion turns "1e999" into Infinity after the range checks have passed it.
        if (typeof value === 'number' && !Number.isFinite(value)) {
          return { error: new AppError('validation_failed', `?${name} must be a finite number`, `?${name}`) };
        }
        if (typeof value === 'string' && value.includes('\u0000')) {
          return {
            error: new AppError(
              'validation_failed',
              `?${name} contains a NUL character, which is not accepted`,
              `?${name}`,
            ),
          };
        }
      }
      return { value: data };
    };
  });

  // Responses are serialised from their schemas; routes that answer alike share one serialiser, made
  // on the first response that needs it.
  const serializers = new WeakMap<object, (data: unknown) => string>();
  const serializerOf = (schema: object): ((data: unknown) => string) => {
    let serialize = serializers.get(schema);
    if (!serialize) {
      const prepared = serializerSchema(schema);
      serialize = fastJson(prepared.schema as never, {
        schema: {
          [ErrorEnvelope.$id!]: ErrorEnvelope as never,
          ...(prepared.externals as Record<string, never>),
        },
      });
      serializers.set(schema, serialize);
    }
    return serialize;
  };
  app.setSerializerCompiler(({ schema }) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= serializerOf(schema))(data);
  });

  registerErrorHandling(app, moreInfo);
  if (ctx.metrics) registerRequestMetrics(app, ctx.metrics.metrics);
  // No answer of the service is to be sniffed into another type or framed by another site.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    return payload;
  });
  registerAuth(app, ctx.services.tokens);
  registerStorageGuard(app, ctx.storage);
  registerIdempotency(app, ctx.services.idempotency);
  registerPermissions(app, ctx.services.teams);
  registerJsonBody(app);
  app.addSchema(ErrorEnvelope);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vigil API',
        version: '0.1.0',
        description:
          'API test monitoring and HTTP traffic capture. Every response uses the {data, meta, error} envelope.',
      },
      servers: [{ url: ctx.publicUrl }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: `OAuth 2.0 access token. Scopes: ${SCOPES.join(', ')}`,
          },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', validatorUrl: null },
    // The docs page runs only its own scripts, loads nothing from elsewhere and may not be framed;
    // it is served over plain HTTP too, so requests are not upgraded.
    staticCSP: true,
    transformStaticCSP: (header) =>
      header
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(' validator.swagger.io', '')
        .replace(' upgrade-insecure-requests;', ''),
  });
  // The docs UI's own routes are public.
  await app.register(publicRoutes(ctx));
  if (ctx.metrics?.route) registerMetricsRoute(app, ctx.metrics);
  await app.register(accountRoutes(ctx));
  await app.register(applicationRoutes(ctx));
  await app.register(bucketRoutes(ctx));
  await app.register(testRoutes(ctx));
  await app.register(importRoutes(ctx));
  await app.register(stepRoutes(ctx));
  await app.register(environmentRoutes(ctx));
  await app.register(scheduleRoutes(ctx));
  await app.register(maintenanceRoutes(ctx));
  await app.register(runRoutes(ctx));
  await app.register(notificationRoutes(ctx));
  await app.register(integrationRoutes(ctx));
  await app.register(teamRoutes(ctx));
  await app.register(regionRoutes(ctx));
  await app.register(triggerRoutes(ctx));
  await app.register(messageRoutes(ctx));
  await app.register(trafficRoutes(ctx));
  await app.register(harRoutes(ctx));
  await app.register(viewRoutes(ctx));
  await app.register(agentRoutes(ctx));
  await app.register(agentProtocolRoutes(ctx));
  await app.register(publicMessageRoutes(ctx));
  await app.register(statusPageRoutes(ctx));
  await app.register(webRoutes(ctx));
  await app.register(oauthRoutes(ctx, { current: (request) => ctx.sessions.current(request), checkCsrf }));
  await app.register(dashboardRoutes(ctx));
  await app.ready();
  return app;
}
