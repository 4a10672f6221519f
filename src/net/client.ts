/**
 * The outbound HTTP client: the only place the runner (and replay) touches the network. One session
 * serves one test run: it opens its own connections (so a monitor measures connecting), keeps them
 * alive across the run's requests, and closes them at the end. Every connection goes through the egress policy and
 * every exchange reports per-phase timings.
 */
import { STATUS_CODES } from 'node:http';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import type { CookieJar } from 'tough-cookie';
import type { Client } from 'undici';
import { undici } from './undici.js';
import { type Timings, ZERO_TIMINGS } from '../domain/results.js';
import { ConnectFailure, type ConnectionState, type ConnectTimings, originConnector } from './connector.js';
import { type BodyLimits, BodySink } from './decode.js';
import { type EgressPolicy, policyLookup, type Resolver } from './egress.js';
import { VERSION } from '../config/version.js';

// tough-cookie is loaded with the first client that keeps cookies (the first run), not at start-up.
const require = createRequire(import.meta.url);
function newCookieJar(): CookieJar {
  const { CookieJar: Jar } = require('tough-cookie') as { CookieJar: typeof CookieJar };
  return new Jar();
}

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string[]>;
  body: Uint8Array | string | null;
  /** Limit on the whole exchange, redirects and body included; 0 or less means none. */
  timeoutMs: number;
}

export interface InboundResponse {
  status: number;
  /** From the status line when it has one, else the standard phrase. */
  reason: string;
  /** Lower-case names, every value in order (set-cookie included). */
  headers: Record<string, string[]>;
  /** Decoded when content-encoding says so; at most maxBodyBytes. */
  body: Buffer;
  truncated: boolean;
  /** Full decoded size, counted up to maxDrainBytes. */
  sizeBytes: number;
  /** Request start to last byte, in ms (all hops when redirects are followed). */
  timeMs: number;
  /** Per phase; summed over hops when redirects are followed. */
  timings: Timings;
  remoteAddress: string | null;
  /** The URL that answered: the request's, or the last one redirected to. */
  url: string;
  /** Redirects followed to get here. */
  redirects: number;
}

export const HTTP_FAILURE_KINDS = [
  'invalid_url',
  'invalid_request',
  'egress_refused',
  'dns',
  'connect',
  'tls',
  'timeout',
  'aborted',
  'protocol',
] as const;
export type HttpFailureKind = (typeof HTTP_FAILURE_KINDS)[number];

/** An exchange that produced no response; `message` is a sentence for the step result. */
export class HttpFailure extends Error {
  readonly kind: HttpFailureKind;
  readonly timings: Timings;
  /** A response status line had arrived before the exchange failed (body cut, bad encoding…). */
  readonly answered: boolean;

  constructor(
    kind: HttpFailureKind,
    message: string,
    timings: Timings = { ...ZERO_TIMINGS },
    cause?: unknown,
    answered = false,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'HttpFailure';
    this.kind = kind;
    this.timings = timings;
    this.answered = answered;
  }
}

/** Failures of the network on the way to an answer, as opposed to a request that cannot be sent. */
const TRANSPORT_FAILURE_KINDS: ReadonlySet<HttpFailureKind> = new Set([
  'dns',
  'connect',
  'tls',
  'timeout',
  'protocol',
]);

/**
 * Whether sending the request again could succeed: the network failed (DNS, connection refused or
 * reset, TLS, timeout) before any HTTP answer. A request that got a status line, a refused egress,
 * an invalid URL or request, and an aborted run never count.
 */
export function isTransportFailure(failure: HttpFailure): boolean {
  return !failure.answered && TRANSPORT_FAILURE_KINDS.has(failure.kind);
}

export interface HttpSessionOptions {
  egress: EgressPolicy;
  verifySsl: boolean;
  /** PEM holding the client certificate and its private key. */
  clientCertificate?: string;
  /** Keep a cookie jar across this session's requests. */
  cookies: boolean;
  maxBodyBytes: number;
  /** Decoded bytes read (and counted, not kept) before the body is cut off; default 64 MiB. */
  maxDrainBytes?: number;
  /** Follow up to 10 redirects, each hop checked by the egress policy again; default false. */
  followRedirects?: boolean;
  /** Addresses or CIDR ranges that public-only still lets through. */
  egressAllow?: readonly string[];
  /** Replaces the system resolver (tests). */
  resolve?: Resolver;
}

export interface HttpSession {
  send(request: OutboundRequest, signal?: AbortSignal): Promise<InboundResponse>;
  /** Closes every connection of the session. */
  close(): Promise<void>;
}

/** Sent when the request names no user agent. */
export const USER_AGENT = `Vigil/${VERSION}`;

const DEFAULT_MAX_DRAIN_BYTES = 64 * 1024 * 1024;
const MAX_REDIRECTS = 10;
const MAX_HEADER_BYTES = 64 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const BODY_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
]);
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'host']);

/** One origin's connection: an undici Client that dials through our connector. */
interface Origin {
  client: Client;
  state: ConnectionState;
  /** Requests dispatched to the client that undici has not finished with. */
  inFlight: number;
}

/** One request/response on the wire (one hop of a redirect chain). */
interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string[]>;
  body: Buffer | null;
}

interface HopResult {
  status: number;
  reason: string;
  headers: Record<string, string[]>;
  body: Buffer;
  truncated: boolean;
  sizeBytes: number;
  timings: Timings;
  remoteAddress: string | null;
  endedAt: number;
}

type Interruption = 'timeout' | 'aborted';

function undiciCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : '';
}

let closedReason: Error | null = null;

/**
 * The reason every closing session gives its connections (undici's "destroyed" error). One error
 * for all: a run ends by closing its session, and a new error per close would capture and format
 * a stack trace each time, which costs more than the rest of the close.
 */
function sessionClosed(): Error {
  if (closedReason === null) {
    closedReason = new (undici().errors.ClientDestroyedError)();
    void closedReason.stack;
  }
  return closedReason;
}

function failureOf(error: unknown, timings: Timings): HttpFailure {
  if (error instanceof HttpFailure) return error;
  if (error instanceof ConnectFailure) {
    const merged = { ...timings, ...error.timings };
    return new HttpFailure(error.kind, error.message, merged, error);
  }
  const code = undiciCode(error);
  const text = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'UND_ERR_INVALID_ARG':
    case 'UND_ERR_NOT_SUPPORTED':
    case 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH':
      return new HttpFailure('invalid_request', `the request cannot be sent: ${text}`, timings, error);
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return new HttpFailure('aborted', 'the HTTP session was closed', timings, error);
    case 'UND_ERR_SOCKET':
      return new HttpFailure(
        'protocol',
        'the server closed the connection before the response was complete',
        timings,
        error,
      );
    case 'ECONNRESET':
    case 'EPIPE':
      return new HttpFailure('protocol', 'the server reset the connection', timings, error);
    case 'UND_ERR_HEADERS_OVERFLOW':
      return new HttpFailure(
        'protocol',
        `the response headers exceed ${MAX_HEADER_BYTES / 1024} KiB`,
        timings,
        error,
      );
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return new HttpFailure(
        'protocol',
        'the response body does not match its content-length',
        timings,
        error,
      );
    default:
      if (code.startsWith('HPE_') || (error instanceof Error && error.name === 'HTTPParserError')) {
        return new HttpFailure('protocol', `the response is not valid HTTP: ${text}`, timings, error);
      }
      return new HttpFailure('protocol', text, timings, error);
  }
}

function setHeader(headers: Record<string, string[]>, name: string, values: string[]): void {
  if (name === '__proto__') {
    Object.defineProperty(headers, name, {
      value: values,
      enumerable: true,
      configurable: true,
      writable: true,
    });
  } else {
    headers[name] = values;
  }
}

/** Response headers as undici hands them (name, value, name, value…), lower-cased and grouped. */
function groupHeaders(raw: Buffer[]): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as Buffer).toString('latin1').toLowerCase();
    const value = (raw[i + 1] as Buffer).toString('latin1');
    const seen = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (seen) seen.push(value);
    else setHeader(headers, name, [value]);
  }
  return headers;
}

function addTimings(total: Timings, hop: Timings): void {
  total.dns_lookup_ms += hop.dns_lookup_ms;
  total.dial_ms += hop.dial_ms;
  total.tls_handshake_ms += hop.tls_handshake_ms;
  total.send_headers_ms += hop.send_headers_ms;
  total.send_body_ms += hop.send_body_ms;
  total.wait_for_response_ms += hop.wait_for_response_ms;
  total.receive_response_ms += hop.receive_response_ms;
}

/**
 * The undici dispatch handler of one hop. It uses the handler callbacks that report request progress
 * (onConnect, onBodySent, onRequestSent, onResponseStarted), which give the send and wait timings.
 */
class Exchange {
  readonly #origin: Origin;
  readonly #limits: BodyLimits;
  readonly #startedAt: number;
  readonly #resolve: (result: HopResult) => void;
  readonly #reject: (failure: HttpFailure) => void;
  #settled = false;
  #abort: ((error?: Error) => void) | null = null;
  #connect: ConnectTimings | null = null;
  #readyAt = 0;
  #headersSentAt = 0;
  #sentAt = 0;
  #firstByteAt = 0;
  #status = 0;
  #reason = '';
  #headers: Record<string, string[]> = {};
  #encoding: string | undefined;
  #sink: BodySink | null = null;
  #resume: (() => void) | null = null;
  #paused = false;
  #remoteAddress: string | null = null;

  /** `startedAt`: when this hop began (the send, or the end of the previous hop). */
  constructor(
    hop: { origin: Origin; limits: BodyLimits; startedAt: number },
    resolve: (result: HopResult) => void,
    reject: (failure: HttpFailure) => void,
  ) {
    this.#origin = hop.origin;
    this.#limits = hop.limits;
    this.#startedAt = hop.startedAt;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.#settled) return abort();
    this.#abort = abort;
    const state = this.#origin.state;
    const fresh = state.fresh;
    state.fresh = null;
    if (fresh) {
      // Time between the start of the hop and the opening is given to the first connect phase, so
      // that the phases add up to the hop.
      const lead = Math.max(0, fresh.startedAt - this.#startedAt);
      const timings = { ...fresh.timings };
      if (timings.dns_lookup_ms > 0) timings.dns_lookup_ms += lead;
      else timings.dial_ms += lead;
      this.#connect = timings;
      this.#readyAt = Math.max(fresh.readyAt, this.#startedAt);
    } else {
      this.#connect = null;
      this.#readyAt = this.#startedAt;
    }
    this.#remoteAddress = state.socket?.remoteAddress ?? null;
    this.#headersSentAt = 0;
    this.#sentAt = 0;
  }

  onBodySent(): void {
    if (this.#headersSentAt === 0) this.#headersSentAt = performance.now();
  }

  onRequestSent(): void {
    const now = performance.now();
    if (this.#headersSentAt === 0) this.#headersSentAt = now;
    const socket = this.#origin.state.socket;
    if (socket !== null && socket.writableLength > 0) {
      // The body is still queued in the socket: it has been sent once the socket drains.
      socket.once('drain', () => {
        if (this.#sentAt === 0) this.#sentAt = performance.now();
      });
    } else {
      this.#sentAt = now;
    }
  }

  onResponseStarted(): void {
    if (this.#firstByteAt !== 0) return;
    this.#firstByteAt = performance.now();
    if (this.#sentAt === 0) this.#sentAt = this.#firstByteAt;
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void, statusText: string): boolean {
    if (status < 200 || this.#settled) return true;
    this.#status = status;
    this.#reason = statusText || STATUS_CODES[status] || '';
    this.#headers = groupHeaders(raw);
    this.#encoding = this.#headers['content-encoding']?.join(',');
    this.#resume = resume;
    this.#sink = new BodySink(this.#encoding, this.#limits, {
      overflow: () => this.#cutShort(),
      error: (error) => this.#decodeFailed(error),
      drain: () => {
        if (!this.#paused) return;
        this.#paused = false;
        this.#resume?.();
      },
    });
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled || !this.#sink) return true;
    if (this.#sink.write(chunk)) return true;
    this.#paused = true;
    return false;
  }

  onComplete(): void {
    this.#origin.inFlight--;
    if (this.#settled) return;
    const endedAt = performance.now();
    const sink = this.#sink;
    if (!sink)
      return this.#fail(
        new HttpFailure('protocol', 'the response ended without a status', this.#timings(endedAt)),
      );
    sink.finish(() => this.#succeed(sink, endedAt));
  }

  onError(error: Error): void {
    this.#origin.inFlight--;
    if (this.#settled) return;
    this.#fail(failureOf(error, this.#timings(performance.now())));
  }

  /** Stops the exchange for a timeout or an abort; the promise rejects with that. */
  interrupt(kind: Interruption, timeoutMs: number): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#sink?.stop();
    const state = this.#origin.state;
    if (this.#abort) {
      this.#abort(new Error(kind));
    } else if (state.cancel && this.#origin.inFlight === 1) {
      // Still connecting, for this request alone: give up the connection attempt too.
      this.#connect = state.opening;
      state.cancel(new Error(kind));
    }
    const message =
      kind === 'aborted'
        ? 'the request was aborted'
        : this.#status === 0
          ? `no response within ${timeoutMs} ms`
          : `the response was not complete within ${timeoutMs} ms`;
    this.#reject(
      new HttpFailure(kind, message, this.#timings(performance.now()), undefined, this.#status !== 0),
    );
  }

  #cutShort(): void {
    if (this.#settled || !this.#sink) return;
    this.#succeed(this.#sink, performance.now());
    this.#abort?.(new Error('response body past the drain limit'));
  }

  #decodeFailed(error: Error): void {
    if (this.#settled) return;
    const message = `the response body could not be decoded (content-encoding ${this.#encoding}): ${error.message}`;
    this.#fail(new HttpFailure('protocol', message, this.#timings(performance.now()), error));
    this.#abort?.(error);
  }

  #succeed(sink: BodySink, endedAt: number): void {
    if (this.#settled) return;
    this.#settled = true;
    const { body, truncated, sizeBytes } = sink.result();
    this.#resolve({
      status: this.#status,
      reason: this.#reason,
      headers: this.#headers,
      body,
      truncated,
      sizeBytes,
      timings: this.#timings(endedAt),
      remoteAddress: this.#remoteAddress,
      endedAt,
    });
  }

  #fail(failure: HttpFailure): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#sink?.stop();
    const answered = this.#status !== 0 && !failure.answered;
    this.#reject(
      answered
        ? new HttpFailure(failure.kind, failure.message, failure.timings, failure.cause, true)
        : failure,
    );
  }

  /** Phases up to `now`; a phase still under way counts until `now`. */
  #timings(now: number): Timings {
    const connect = this.#connect;
    const timings: Timings = {
      dns_lookup_ms: connect ? connect.dns_lookup_ms : 0,
      dial_ms: connect ? connect.dial_ms : 0,
      tls_handshake_ms: connect ? connect.tls_handshake_ms : 0,
      send_headers_ms: 0,
      send_body_ms: 0,
      wait_for_response_ms: 0,
      receive_response_ms: 0,
    };
    if (this.#readyAt === 0) return timings;
    const headersSent = this.#headersSentAt || now;
    timings.send_headers_ms = headersSent - this.#readyAt;
    if (this.#headersSentAt === 0) return timings;
    const sent = this.#sentAt || now;
    timings.send_body_ms = sent - headersSent;
    if (this.#sentAt === 0) return timings;
    const firstByte = this.#firstByteAt || now;
    timings.wait_for_response_ms = firstByte - sent;
    if (this.#firstByteAt !== 0) timings.receive_response_ms = now - firstByte;
    return timings;
  }
}

function parseTarget(text: string, context: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HttpFailure('invalid_url', `${context} is not a valid URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HttpFailure(
      'invalid_url',
      `${context} must be http or https, not ${url.protocol.slice(0, -1)}: ${text}`,
    );
  }
  if (url.hostname === '') throw new HttpFailure('invalid_url', `${context} has no host: ${text}`);
  return url;
}

function toBuffer(body: Uint8Array | string | null): Buffer | null {
  if (body === null) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** The hop a redirect leads to, per the Fetch standard's rules for method, body and credentials. */
function redirectHop(hop: Hop, status: number, location: string): Hop {
  const url = parseTarget(new URL(location, hop.url).href, 'the redirect target');
  const toGet =
    (status === 303 && hop.method.toUpperCase() !== 'HEAD') ||
    ((status === 301 || status === 302) && hop.method.toUpperCase() === 'POST');
  const crossOrigin = url.origin !== hop.url.origin;
  const headers: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(hop.headers)) {
    const lower = name.toLowerCase();
    if (toGet && BODY_HEADERS.has(lower)) continue;
    if (crossOrigin && CREDENTIAL_HEADERS.has(lower)) continue;
    setHeader(headers, name, values);
  }
  return { url, method: toGet ? 'GET' : hop.method, headers, body: toGet ? null : hop.body };
}

class Session implements HttpSession {
  readonly #options: HttpSessionOptions;
  readonly #lookup: LookupFunction;
  readonly #limits: BodyLimits;
  readonly #jar: CookieJar | null;
  readonly #origins = new Map<string, Origin>();
  #closed = false;

  constructor(options: HttpSessionOptions) {
    this.#options = options;
    this.#lookup = policyLookup(options.egress, options.resolve, { allow: options.egressAllow });
    this.#limits = {
      maxBodyBytes: options.maxBodyBytes,
      maxDrainBytes: Math.max(options.maxBodyBytes, options.maxDrainBytes ?? DEFAULT_MAX_DRAIN_BYTES),
    };
    this.#jar = options.cookies ? newCookieJar() : null;
  }

  async send(request: OutboundRequest, signal?: AbortSignal): Promise<InboundResponse> {
    if (this.#closed) throw new Error('the HTTP session is closed');
    const startedAt = performance.now();
    let hop: Hop = {
      url: parseTarget(request.url, 'the URL'),
      method: request.method,
      headers: request.headers,
      body: toBuffer(request.body),
    };
    if (signal?.aborted) throw new HttpFailure('aborted', 'the request was aborted');

    const timeoutMs = request.timeoutMs;
    let interrupted: Interruption | null = null;
    let current: Exchange | null = null;
    const interrupt = (kind: Interruption): void => {
      interrupted ??= kind;
      current?.interrupt(kind, timeoutMs);
    };
    const onAbort = (): void => interrupt('aborted');
    const timer =
      timeoutMs > 0 && Number.isFinite(timeoutMs) ? setTimeout(interrupt, timeoutMs, 'timeout') : undefined;
    signal?.addEventListener('abort', onAbort, { once: true });

    let total: Timings | null = null;
    let hopStartedAt = startedAt;
    try {
      for (let redirects = 0; ; redirects++) {
        let result: HopResult;
        try {
          result = await new Promise<HopResult>((resolve, reject) => {
            const origin = this.#origin(hop.url);
            current = new Exchange(
              { origin, limits: this.#limits, startedAt: hopStartedAt },
              resolve,
              reject,
            );
            this.#dispatch(origin, hop, current);
            if (interrupted) current.interrupt(interrupted, timeoutMs);
          });
        } catch (error) {
          if (!total || !(error instanceof HttpFailure)) throw error;
          addTimings(total, error.timings);
          throw new HttpFailure(error.kind, error.message, total, error.cause, error.answered);
        }
        if (total) addTimings(total, result.timings);
        this.#storeCookies(hop.url, result.headers);

        const location = result.headers.location?.[0];
        const follow = this.#options.followRedirects === true && REDIRECT_STATUSES.has(result.status);
        if (!follow || location === undefined) {
          return {
            status: result.status,
            reason: result.reason,
            headers: result.headers,
            body: result.body,
            truncated: result.truncated,
            sizeBytes: result.sizeBytes,
            timeMs: result.endedAt - startedAt,
            timings: total ?? result.timings,
            remoteAddress: result.remoteAddress,
            url: hop.url.href,
            redirects,
          };
        }
        if (redirects === MAX_REDIRECTS) {
          throw new HttpFailure(
            'protocol',
            `more than ${MAX_REDIRECTS} redirects`,
            total ?? result.timings,
            undefined,
            true,
          );
        }
        total ??= { ...result.timings };
        hop = redirectHop(hop, result.status, location);
        hopStartedAt = result.endedAt;
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const clients = [...this.#origins.values()].map((origin) => origin.client);
    this.#origins.clear();
    if (clients.length === 0) return;
    const reason = sessionClosed();
    await Promise.all(clients.map((client) => client.destroy(reason).catch(() => undefined)));
  }

  #origin(url: URL): Origin {
    const key = url.origin;
    const known = this.#origins.get(key);
    if (known) return known;
    const secure = url.protocol === 'https:';
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const state: ConnectionState = { socket: null, fresh: null, opening: null, cancel: null };
    const connect = originConnector(
      {
        hostname,
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        secure,
        lookup: this.#lookup,
        verifySsl: this.#options.verifySsl,
        clientCertificate: this.#options.clientCertificate,
      },
      state,
    );
    const client: Client = new (undici().Client)(key, {
      connect,
      pipelining: 1,
      headersTimeout: 0,
      bodyTimeout: 0,
      maxHeaderSize: MAX_HEADER_BYTES,
    });
    const origin: Origin = { client, state, inFlight: 0 };
    this.#origins.set(key, origin);
    return origin;
  }

  #dispatch(origin: Origin, hop: Hop, exchange: Exchange): void {
    const headers: string[] = [];
    let hasUserAgent = false;
    let cookie: string | undefined;
    for (const name of Object.keys(hop.headers)) {
      const values = hop.headers[name] as string[];
      const lower = name.toLowerCase();
      if (lower === 'user-agent') hasUserAgent = true;
      if (this.#jar && lower === 'cookie') {
        cookie = cookie === undefined ? values.join('; ') : `${cookie}; ${values.join('; ')}`;
        continue;
      }
      for (const value of values) headers.push(name, value);
    }
    if (!hasUserAgent) headers.push('user-agent', USER_AGENT);
    if (this.#jar) {
      const stored = this.#jar.getCookieStringSync(hop.url.href);
      const merged = [cookie, stored].filter((part) => part !== undefined && part !== '').join('; ');
      if (merged !== '') headers.push('cookie', merged);
    }
    origin.inFlight++;
    origin.client.dispatch(
      {
        path: hop.url.pathname + hop.url.search,
        method: hop.method,
        headers,
        body: hop.body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      exchange,
    );
  }

  #storeCookies(url: URL, headers: Record<string, string[]>): void {
    const jar = this.#jar;
    const cookies = headers['set-cookie'];
    if (!jar || !cookies) return;
    for (const cookie of cookies) jar.setCookieSync(cookie, url.href, { ignoreError: true });
  }
}

/** Opens a session: its own connections, cookie jar and egress policy, until `close()`. */
export function openHttpSession(options: HttpSessionOptions): HttpSession {
  return new Session(options);
}
