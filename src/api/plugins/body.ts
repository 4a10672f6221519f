import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError } from '../../domain/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads any body as raw bytes (capture, gateway), so it needs no Content-Type. */
    rawBody?: boolean;
  }
}

/**
 * Finds the JSON pointer of the first string (or key) holding a NUL character, which the stores cannot
 * keep. Iterative, so hostile nesting depth cannot exhaust the stack.
 */
function findNul(root: unknown): string | undefined {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path || '/';
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`]);
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!;
        if (key.includes('\u0000')) return `${path}/${key.replaceAll('\u0000', '\\u0000')}`;
        stack.push([item, `${path}/${key}`]);
      }
    }
  }
  return undefined;
}

/** Deepest nesting of arrays and objects any body may have; deeper JSON is refused unparsed. */
export const MAX_JSON_DEPTH = 16_384;

/** True when the JSON text nests arrays or objects deeper than `limit` (strings are skipped). */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** The JSON pointer of the first number that is not finite; iterative like findNul. */
function findInfinite(root: unknown): string | undefined {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return path || '/';
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`]);
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${path}/${entries[i]![0]}`]);
    }
  }
  return undefined;
}

/** Whether a route marks its body schema `x-empty-body`: an empty JSON body reads as no body. */
function acceptsEmptyBody(schema: unknown): boolean {
  return (
    typeof schema === 'object' &&
    schema !== null &&
    (schema as Record<string, unknown>)['x-empty-body'] === true
  );
}

/**
 * The API reads JSON bodies only: `application/json` (any charset), parsed safely (no prototype
 * keys). A body sent with another or no Content-Type is refused with 415 before any work is done.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // Clients of the original service send `Content-Type: application/json` with no body on every
    // DELETE and on `POST /buckets?name=…` (whose body schema is marked `x-empty-body`).
    if (text === '' && (request.method === 'DELETE' || acceptsEmptyBody(request.routeOptions.schema?.body))) {
      return done(null, undefined);
    }
    if (text.trim() === '') {
      return done(
        new AppError(
          'invalid_json',
          'The request body is empty: send a JSON value, or no body and no Content-Type header',
        ),
        undefined,
      );
    }
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        new AppError('validation_failed', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`, '/'),
        undefined,
      );
    }
    let parsed: unknown;
    try {
      parsed = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (error) {
      return done(
        new AppError('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`),
        undefined,
      );
    }
    if (text.includes('\\u0000')) {
      const field = findNul(parsed);
      if (field)
        return done(
          new AppError(
            'validation_failed',
            `${field} contains a NUL character (\\u0000), which is not accepted`,
            field,
          ),
          undefined,
        );
    }
    // JSON allows numbers too large for a double (1e400); they parse to Infinity, which no field takes.
    if (/\d[eE]\+?\d{3}/.test(text)) {
      const field = findInfinite(parsed);
      if (field) {
        return done(
          new AppError('validation_failed', `${field} is a number too large to represent`, field),
          undefined,
        );
      }
    }
    // Every body the API takes is an object or an array; a bare `null` would read as no body at all.
    if (parsed === null) {
      return done(
        new AppError('validation_failed', 'The request body must be a JSON object or array, not null', '/'),
        undefined,
      );
    }
    done(null, parsed);
  });

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.rawBody === true) return done();
    const length = request.headers['content-length'];
    const hasBody =
      (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
    if (hasBody && !request.headers['content-type']) {
      done(
        new AppError('unsupported_media_type', 'A JSON body needs the header Content-Type: application/json'),
      );
      return;
    }
    done();
  });
}
