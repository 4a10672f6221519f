/**
 * The gateway (DESIGN §6): forwards one request to its upstream through the egress policy, streams the
 * answer back and records the exchange once it is over, with a copy of the response body kept up to a
 * limit. Knows nothing of Fastify or the store: the caller sends the outcome and stores the message.
 */
import { performance } from 'node:perf_hooks';
import { Transform, type TransformCallback, pipeline, type Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../net/undici.js';
import { AppError } from '../domain/errors.js';
import { BodySink } from '../net/decode.js';
import { type EgressPolicy, EgressRefused, egressConnector, type Resolver } from '../net/egress.js';
import { endToEnd, type HeaderLists, recordedRequest } from './exchange.js';
import type { MessageResponse, NewMessage } from '../domain/messages.js';
import { bodyFromBytes, microseconds, reasonFor } from './normalize.js';

/** Longest wait for a connection, for the response headers, and between two chunks of the body. */
export const GATEWAY_TIMEOUT_MS = 30_000;

export interface GatewayOptions {
  egress: EgressPolicy;
  /** Response bytes kept in the stored message (decoded); the client always gets the whole body. */
  maxBodyBytes: number;
  timeoutMs?: number;
  /** Replaces the system resolver (tests). */
  resolve?: Resolver;
}

export interface GatewayRequest {
  method: string;
  /** The upstream URL. */
  url: URL;
  /** The headers the client sent, by lower-case name. */
  headers: HeaderLists;
  body: Buffer;
  /** When the request arrived, Unix seconds. */
  receivedAt: number;
}

/** What the client gets: the upstream's answer (body streamed; null when there is none), or why not. */
export type GatewayOutcome =
  { ok: true; status: number; headers: HeaderLists; body: Readable | null } | { ok: false; reason: string };

/** Stores the message of an exchange; called once, when the exchange is over. */
export type Recorder = (message: NewMessage) => Promise<void>;

const invalid = (message: string) => new AppError('validation_failed', message);

/**
 * Parses the part of a gateway URL after the bucket key, `<scheme>/<host[:port]>/<path>?<query>`, into
 * the upstream URL. Path and query stay as sent (percent-escapes included).
 */
export function gatewayTarget(rest: string): URL {
  const match = /^([^/?]*)\/([^/?]*)([^?]*)(\?.*)?$/.exec(rest);
  if (!match)
    throw invalid('The scheme and host must follow the bucket key: /gateway/<key>/<scheme>/<host>/…');
  const [, scheme = '', rawHost = '', path = '', query = ''] = match;
  if (scheme !== 'http' && scheme !== 'https') {
    throw invalid(`The gateway scheme must be http or https, got "${scheme.slice(0, 20)}"`);
  }
  let host: string;
  try {
    host = decodeURIComponent(rawHost);
  } catch {
    host = rawHost;
  }
  let origin: URL | null = null;
  try {
    origin = new URL(`${scheme}://${host}/`);
  } catch {
    origin = null;
  }
  // The segment must be a host and nothing more: no credentials, no path smuggled in with a backslash.
  if (
    !origin ||
    origin.hostname === '' ||
    origin.username !== '' ||
    origin.password !== '' ||
    origin.pathname !== '/' ||
    origin.search !== '' ||
    origin.hash !== ''
  ) {
    throw invalid(
      `The gateway host "${host.slice(0, 100)}" is not a host name or address with an optional port`,
    );
  }
  return new URL(`${origin.origin}${path === '' ? '/' : path}${query}`);
}

function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const nested = (error as { errors?: unknown }).errors;
  return Array.isArray(nested) && nested.length > 0 ? errorCode(nested[0]) : '';
}

/** Why an upstream could not be reached, as a sentence for the note and the 502. */
export function failureReason(error: unknown, url: URL, timeoutMs: number): string {
  if (error instanceof EgressRefused) return error.message;
  const where = url.host;
  const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
  const code = errorCode(error);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_AGAIN':
      return `could not resolve ${url.hostname}: no such host`;
    case 'ECONNREFUSED':
      return `connection refused by ${where}`;
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return `the connection to ${where} was closed before the response`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to ${where}`;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `no connection to ${where} within ${seconds}`;
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `no response from ${where} within ${seconds}`;
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return 'the client went away before the upstream answered';
    default: {
      const text = error instanceof Error ? error.message : String(error);
      if (code.startsWith('ERR_TLS_') || code.includes('CERT') || /certificate|ssl|tls/i.test(text)) {
        return `TLS handshake with ${where} failed: ${text}`;
      }
      return `the request to ${where} failed: ${text || code}`;
    }
  }
}

/** Upstream response headers as undici gives them, by lower-case name. */
function responseHeaders(headers: Dispatcher.ResponseData['headers']): HeaderLists {
  const out = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out.set(name.toLowerCase(), Array.isArray(value) ? [...value] : [value]);
  }
  return Object.fromEntries(out);
}

/**
 * The stored copy of a response body: decoded per content-encoding, at most `limit` bytes. When the
 * body cannot be decoded the raw bytes are kept instead.
 */
class BodyCopy {
  readonly #limit: number;
  readonly #sink: BodySink;
  readonly #raw: Buffer[] = [];
  #rawKept = 0;
  #wireBytes = 0;
  #decodeError: Error | null = null;
  #finished: (() => void) | null = null;

  constructor(encoding: string | undefined, limit: number) {
    this.#limit = limit;
    this.#sink = new BodySink(
      encoding,
      { maxBodyBytes: limit, maxDrainBytes: limit },
      {
        overflow: () => undefined,
        error: (error) => {
          this.#decodeError = error;
          this.#finished?.();
        },
        drain: () => undefined,
      },
    );
  }

  write(chunk: Buffer): void {
    this.#wireBytes += chunk.length;
    const room = this.#limit - this.#rawKept;
    if (room > 0) {
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.#raw.push(Buffer.from(kept));
      this.#rawKept += kept.length;
    }
    this.#sink.write(chunk);
  }

  /** The copy, once decoding has caught up with the end of the body. */
  async finish(complete: boolean): Promise<{ body: Buffer; problem: string | null }> {
    if (complete) {
      await new Promise<void>((resolve) => {
        this.#finished = resolve;
        this.#sink.finish(resolve);
      });
    } else {
      this.#sink.stop();
    }
    if (this.#decodeError) {
      return {
        body: Buffer.concat(this.#raw, this.#rawKept),
        problem: `the response body could not be decoded (${this.#decodeError.message}); it is kept as sent`,
      };
    }
    const { body, truncated } = this.#sink.result();
    const problem = truncated
      ? `the response body is longer than ${this.#limit} bytes (${this.#wireBytes} bytes on the wire); the first ${this.#limit} are kept`
      : null;
    return { body, problem };
  }
}

/** Passes the body through to the client and copies it; records the message before the last byte goes out. */
class Tee extends Transform {
  readonly #copy: BodyCopy;
  readonly #onEnd: () => Promise<void>;

  constructor(copy: BodyCopy, onEnd: () => Promise<void>) {
    super();
    this.#copy = copy;
    this.#onEnd = onEnd;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#copy.write(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.#onEnd().then(
      () => done(),
      (error: Error) => done(error),
    );
  }
}

const NO_BODY_STATUSES = new Set([204, 304]);

/**
 * Response headers the gateway keeps out of what it relays (the stored message keeps them): an
 * upstream may not set cookies, widen a service worker's scope or clear site data on the origin the
 * gateway answers from.
 */
export const RELAY_DROPPED_HEADERS = [
  'set-cookie',
  'set-cookie2',
  'service-worker-allowed',
  'clear-site-data',
];

export class Gateway {
  readonly #options: GatewayOptions;
  readonly #timeoutMs: number;
  /** The upstream connection pool, made with the first forwarded request. */
  #agent: Agent | null = null;

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? GATEWAY_TIMEOUT_MS;
  }

  #pool(): Agent {
    this.#agent ??= new (undici().Agent)({
      connect: egressConnector(this.#options.egress, this.#timeoutMs, this.#options.resolve),
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
    return this.#agent;
  }

  /**
   * Sends the request upstream. On failure the request is recorded with a note and the reason comes
   * back; on success the body streams through and the exchange is recorded when it ends, is cut short
   * or the client goes away. `signal` aborts when the client has gone.
   */
  async forward(request: GatewayRequest, record: Recorder, signal: AbortSignal): Promise<GatewayOutcome> {
    const headers = {
      ...endToEnd(request.headers, ['content-length', 'expect', 'host']),
      host: [request.url.host],
    };
    const sent = recordedRequest({
      method: request.method,
      url: request.url.href,
      headers,
      body: request.body,
      timestamp: request.receivedAt,
    });
    const startedAt = performance.now();
    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await this.#pool().request({
        origin: request.url.origin,
        path: request.url.pathname + request.url.search,
        method: request.method,
        headers: Object.entries(headers).flatMap(([name, values]) =>
          values.flatMap((value) => [name, value]),
        ),
        body: request.body.length > 0 ? request.body : null,
        signal,
      });
    } catch (error) {
      const reason = failureReason(error, request.url, this.#timeoutMs);
      await record({
        source: 'gateway',
        unique_identifier: null,
        request: sent,
        response: null,
        note: reason,
      });
      return { ok: false, reason };
    }

    const received = responseHeaders(upstream.headers);
    const answeredAt = Date.now() / 1000;
    const copy = new BodyCopy(received['content-encoding']?.join(','), this.#options.maxBodyBytes);
    let recorded = false;
    const finish = async (complete: boolean, trouble: string | null): Promise<void> => {
      if (recorded) return;
      recorded = true;
      const { body, problem } = await copy.finish(complete);
      const response: MessageResponse = {
        status: upstream.statusCode,
        reason: reasonFor(upstream.statusCode),
        headers: received,
        timestamp: microseconds(answeredAt),
        response_time: microseconds((performance.now() - startedAt) / 1000),
        ...bodyFromBytes(body),
      };
      const note = [trouble, problem].filter((part) => part !== null).join('; ') || null;
      await record({ source: 'gateway', unique_identifier: null, request: sent, response, note });
    };

    const outHeaders = endToEnd(received, RELAY_DROPPED_HEADERS);
    if (request.method === 'HEAD' || NO_BODY_STATUSES.has(upstream.statusCode)) {
      try {
        await drain(upstream.body, copy);
        await finish(true, null);
      } catch (error) {
        await finish(false, `the upstream response was cut short: ${(error as Error).message}`);
      }
      return { ok: true, status: upstream.statusCode, headers: outHeaders, body: null };
    }

    const tee = new Tee(copy, () => finish(true, null));
    pipeline(upstream.body, tee, (error) => {
      if (!error) return;
      const trouble = signal.aborted
        ? 'the client went away before the response was complete'
        : `the upstream response was cut short: ${error.message}`;
      finish(false, trouble).catch(() => undefined);
    });
    return { ok: true, status: upstream.statusCode, headers: outHeaders, body: tee };
  }

  async close(): Promise<void> {
    await this.#agent?.close();
  }
}

/** Reads a body that should be empty (HEAD, 204, 304) into the copy. */
async function drain(body: Readable, copy: BodyCopy): Promise<void> {
  for await (const chunk of body) copy.write(chunk as Buffer);
}
