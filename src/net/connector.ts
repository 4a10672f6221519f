/**
 * Opens the connections of one origin: a timed DNS lookup through the egress policy, the TCP dial to
 * an address that passed it, and the TLS handshake (SNI and certificate check against the URL's host).
 * Plugged into an undici Client as its `connect` function.
 */
import net, { type LookupFunction, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import type { buildConnector } from 'undici';
import { EgressRefused } from './egress.js';

/** Durations of the phases of opening one connection, in ms. */
export interface ConnectTimings {
  dns_lookup_ms: number;
  dial_ms: number;
  tls_handshake_ms: number;
}

export type ConnectFailureKind = 'egress_refused' | 'dns' | 'connect' | 'tls';

export class ConnectFailure extends Error {
  readonly kind: ConnectFailureKind;
  readonly timings: ConnectTimings;

  constructor(kind: ConnectFailureKind, message: string, timings: ConnectTimings, cause: unknown) {
    super(message, { cause });
    this.name = 'ConnectFailure';
    this.kind = kind;
    this.timings = timings;
  }
}

export interface ConnectorOptions {
  /** Host name as written in the URL (IPv6 without brackets). */
  hostname: string;
  port: number;
  secure: boolean;
  lookup: LookupFunction;
  verifySsl: boolean;
  /** PEM holding the client certificate and its private key. */
  clientCertificate?: string;
}

/** A connection just opened, not yet used by a request. */
export interface FreshConnection {
  timings: ConnectTimings;
  /** performance.now() when the opening began. */
  startedAt: number;
  /** performance.now() when it was ready for the first request. */
  readyAt: number;
}

/** The connection being opened or in use, and the timings of its opening until a request claims them. */
export interface ConnectionState {
  socket: Socket | null;
  fresh: FreshConnection | null;
  /** Timings of an opening in progress. */
  opening: ConnectTimings | null;
  /** Abandons an opening in progress (a timed-out or aborted request). */
  cancel: ((reason: Error) => void) | null;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const nested = (error as { errors?: unknown }).errors;
  return Array.isArray(nested) && nested.length > 0 ? errorCode(nested[0]) : undefined;
}

function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((inner: unknown) => errorText(inner)).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

const DIAL_PHRASES: Record<string, string> = {
  ECONNREFUSED: 'connection refused by',
  ECONNRESET: 'connection reset by',
  ETIMEDOUT: 'connection timed out to',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable for',
  EADDRNOTAVAIL: 'address not available for',
};

function target(hostname: string, port: number): string {
  return `${net.isIPv6(hostname) ? `[${hostname}]` : hostname}:${port}`;
}

/** A Client `connect` function for one origin; `state` follows the connection it opens. */
export function originConnector(options: ConnectorOptions, state: ConnectionState): buildConnector.connector {
  const literal = net.isIP(options.hostname) !== 0;
  const servername = literal ? undefined : options.hostname;
  const where = target(options.hostname, options.port);
  const pem = options.clientCertificate;

  return (_params, callback) => {
    const timings: ConnectTimings = { dns_lookup_ms: 0, dial_ms: 0, tls_handshake_ms: 0 };
    const started = performance.now();
    // The phases run back to back from `started`: dns until the answer, dial until connected, then tls.
    let looked = started;
    let dialed = 0;
    let phase: 'dns' | 'connect' | 'tls' = literal ? 'connect' : 'dns';
    let done = false;

    const lookup: LookupFunction = (hostname, lookupOptions, answer) => {
      options.lookup(hostname, lookupOptions, (error, address, family) => {
        looked = performance.now();
        timings.dns_lookup_ms = looked - started;
        if (!error) phase = 'connect';
        answer(error, address, family);
      });
    };

    let socket: Socket | null = null;

    const fail = (error: unknown): void => {
      if (done) return;
      done = true;
      state.cancel = null;
      state.opening = null;
      socket?.destroy();
      const now = performance.now();
      if (phase === 'dns') timings.dns_lookup_ms = now - started;
      if (phase === 'connect') timings.dial_ms = now - looked;
      if (phase === 'tls') timings.tls_handshake_ms = now - dialed;
      callback(failure(error), null);
    };

    const failure = (error: unknown): ConnectFailure => {
      if (error instanceof ConnectFailure) return error;
      if (error instanceof EgressRefused)
        return new ConnectFailure('egress_refused', error.message, timings, error);
      const code = errorCode(error);
      if (phase === 'dns') {
        const why =
          code === 'ENOTFOUND' || code === 'EAI_NONAME' ? 'no such host' : (code ?? errorText(error));
        return new ConnectFailure('dns', `could not resolve ${options.hostname}: ${why}`, timings, error);
      }
      if (phase === 'tls') {
        return new ConnectFailure(
          'tls',
          `TLS handshake with ${where} failed: ${errorText(error)}`,
          timings,
          error,
        );
      }
      const phrase = code !== undefined ? DIAL_PHRASES[code] : undefined;
      const message = phrase ? `${phrase} ${where}` : `could not connect to ${where}: ${errorText(error)}`;
      return new ConnectFailure('connect', message, timings, error);
    };

    const open = (): void => {
      if (done) return;
      let opened: Socket;
      try {
        opened = options.secure
          ? tls.connect({
              host: options.hostname,
              port: options.port,
              servername,
              lookup,
              rejectUnauthorized: options.verifySsl,
              cert: pem,
              key: pem,
              ALPNProtocols: ['http/1.1'],
            })
          : net.connect({ host: options.hostname, port: options.port, lookup });
      } catch (error) {
        // tls.connect throws at once on a client certificate or key it cannot read.
        const message = options.secure
          ? `the client certificate cannot be used: ${errorText(error)}`
          : `could not connect to ${where}: ${errorText(error)}`;
        return fail(new ConnectFailure(options.secure ? 'tls' : 'connect', message, timings, error));
      }
      socket = opened;
      opened.setNoDelay(true);
      opened.setKeepAlive(true, 60_000);
      opened.on('error', fail);
      opened.once('connect', () => {
        dialed = performance.now();
        timings.dial_ms = dialed - looked;
        if (!options.secure) return ready(opened, dialed);
        phase = 'tls';
      });
      if (options.secure) {
        opened.once('secureConnect', () => {
          const secured = performance.now();
          timings.tls_handshake_ms = secured - dialed;
          ready(opened, secured);
        });
      }
    };

    const ready = (opened: Socket, at: number): void => {
      if (done) return;
      done = true;
      opened.off('error', fail);
      state.cancel = null;
      state.opening = null;
      state.socket = opened;
      state.fresh = { timings, startedAt: started, readyAt: at };
      callback(null, opened);
    };

    state.cancel = fail;
    state.opening = timings;
    // net.connect skips the lookup for an IP literal, so the policy is asked before dialling.
    if (literal) options.lookup(options.hostname, { all: true }, (error) => (error ? fail(error) : open()));
    else open();
  };
}
