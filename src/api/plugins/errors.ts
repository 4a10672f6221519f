import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import findMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError, type ErrorCode, RateLimited, StorageFull, StoreUnavailable } from '../../domain/errors.js';
import { storeFailureOf } from '../../store/errors.js';

/** Shared by Fastify's router and the one that tells 405 from 404, so both match the same paths. */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 200 } as const;

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_BAD_URL: 'validation_failed',
  // No id is that long, so a parameter over the limit names nothing that exists.
  FST_ERR_MAX_PARAM_LENGTH: 'not_found',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_json',
  FST_ERR_VALIDATION: 'validation_failed',
};

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'limit_reached',
  429: 'rate_limited',
};

/**
 * The error envelope. `status` also sits at the top level, beside `data`, `meta` and `error`, for
 * clients of the original service that decode an error as `{status, error}` (docs/runscope-compat.md).
 */
export function errorBody(error: AppError, moreInfo: string) {
  return {
    status: error.status,
    data: null,
    meta: { status: 'error' as const },
    error: {
      status: error.status,
      code: error.code,
      message: error.message,
      more_info: `${moreInfo}#${error.code}`,
      ...(error.field !== undefined && { field: error.field }),
    },
  };
}

export function sendError(reply: FastifyReply, error: AppError, moreInfo: string): FastifyReply {
  if (error.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="vigil"');
  if (error instanceof RateLimited || error instanceof StoreUnavailable)
    reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfter))));
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorBody(error, moreInfo));
}

/**
 * Maps anything thrown into our catalog: client errors keep their meaning, a store that cannot be
 * reached is a 503 and one that cannot take a write a 507, the rest become a logged 500.
 */
export function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error;
  const failure = storeFailureOf(error);
  if (failure === 'unavailable') return new StoreUnavailable();
  if (failure === 'full') return new StorageFull();
  const fastifyError = error as FastifyError;
  const code = FASTIFY_CODES[fastifyError.code ?? ''];
  if (code === 'invalid_json')
    return new AppError(code, `The request body is not valid JSON: ${fastifyError.message}`);
  if (code === 'payload_too_large')
    return new AppError(code, 'The request body is larger than the server accepts');
  if (code === 'unsupported_media_type') {
    return new AppError(code, 'A JSON body needs the header Content-Type: application/json');
  }
  if (code === 'not_found') return new AppError(code, 'No resource at this path');
  if (fastifyError.code === 'FST_ERR_BAD_URL')
    return new AppError(code!, 'The URL is not valid: it has a malformed percent-escape');
  if (code) return new AppError(code, fastifyError.message);
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return new AppError(BY_STATUS[status] ?? 'validation_failed', fastifyError.message);
  }
  return new AppError('internal_error', 'The server met an unexpected condition; it has been logged');
}

/**
 * The error envelope (DESIGN §2) for every failure: our own errors, Fastify's parser errors, unknown
 * routes (404) and known paths with another method (405, with Allow).
 */
export function registerErrorHandling(
  app: FastifyInstance,
  moreInfo: string,
  notFoundMessage: (path: string) => string = (path) => `No resource at ${path}`,
): void {
  const router = findMyWay(ROUTER_OPTIONS);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!router.hasRoute(method as HTTPMethod, route.url))
        router.on(method as HTTPMethod, route.url, () => {});
    }
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    sendError(reply, appError, moreInfo);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter(
      (method) => method !== request.method && router.find(method, path) !== null,
    );
    const error =
      allowed.length > 0
        ? new AppError(
            'method_not_allowed',
            `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`,
          )
        : new AppError('not_found', notFoundMessage(path));
    if (allowed.length > 0) reply.header('Allow', allowed.join(', '));
    sendError(reply, error, moreInfo);
  });
}
