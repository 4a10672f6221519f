/**
 * Turns message input (spec 2.8, "Message creation input") into a message to store, item by item:
 * an item is saved, saved with a warning (unexpected fields, code 51109), or refused with an error
 * that names the field (51006: neither request nor response; 51001: a field of the wrong type or
 * value). Pure: the receive time comes in as an argument.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import type { BodyEncoding, MessageRequest, MessageResponse, NewMessage } from '../domain/messages.js';

export const MESSAGE_CODES = {
  /** A field has the wrong type or an impossible value; the item is not saved. */
  invalidField: 51001,
  /** The item has neither a request nor a response; it is not saved. */
  noExchange: 51006,
  /** The item has fields the service does not know; it is saved without them. */
  unexpectedFields: 51109,
} as const;

export const MAX_MESSAGES_PER_CALL = 50;

export interface ItemProblem {
  code: number;
  message: string;
}

export type NormalizedItem =
  | { ok: true; message: NewMessage; warning: ItemProblem | null }
  | { ok: false; error: ItemProblem; unique_identifier: string | null };

const ITEM_FIELDS = new Set(['request', 'response', 'unique_identifier']);
const REQUEST_FIELDS = new Set(['method', 'url', 'headers', 'form', 'body', 'body_encoding', 'timestamp']);
const RESPONSE_FIELDS = new Set([
  'status',
  'reason',
  'body',
  'body_encoding',
  'headers',
  'response_time',
  'timestamp',
]);
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MAX_IDENTIFIER = 256;

class Invalid extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Unix seconds kept to the microsecond. */
export function microseconds(seconds: number): number {
  return Math.round(seconds * 1_000_000) / 1_000_000;
}

/** The standard reason phrase of a status (404 → Not Found); empty for unknown codes. */
export function reasonFor(status: number): string {
  return STATUS_CODES[status] ?? '';
}

/** A body of raw bytes as a message keeps it: plain text when valid UTF-8, else Base64. */
export function bodyFromBytes(bytes: Uint8Array): {
  body: string;
  body_encoding: BodyEncoding;
  size_bytes: number;
} {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buffer))
    return { body: buffer.toString('utf8'), body_encoding: 'plaintext', size_bytes: buffer.length };
  return { body: buffer.toString('base64'), body_encoding: 'base64', size_bytes: buffer.length };
}

/** The decoded bytes of a stored body. */
export function bodyBytes(body: string, encoding: BodyEncoding): Buffer {
  return encoding === 'base64' ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

/** Splits a URL into the parts a message shows; throws Invalid for anything but absolute http(s). */
export function urlParts(url: string): Pick<MessageRequest, 'url' | 'scheme' | 'host' | 'path' | 'params'> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Invalid(`request.url ${JSON.stringify(url.slice(0, 200))} is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Invalid(`request.url must be an http or https URL, got ${parsed.protocol.replace(/:$/, '')}`);
  }
  const params: Record<string, string[]> = {};
  for (const [name, value] of parsed.searchParams) {
    if (Object.hasOwn(params, name)) params[name]!.push(value);
    else setEntry(params, name, [value]);
  }
  return {
    url,
    scheme: parsed.protocol.replace(/:$/, ''),
    host: parsed.host,
    path: parsed.pathname,
    params,
  };
}

/** Header or form values: a string or an array of strings per name → arrays. */
function stringLists(value: unknown, field: string): Record<string, string[]> {
  if (!isRecord(value)) throw new Invalid(`${field} must be an object of strings or arrays of strings`);
  const out: Record<string, string[]> = {};
  for (const name of Object.keys(value)) {
    const raw = value[name];
    if (typeof raw === 'string') setEntry(out, name, [raw]);
    else if (Array.isArray(raw) && raw.every((item) => typeof item === 'string'))
      setEntry(out, name, raw.slice());
    else throw new Invalid(`${field}.${name} must be a string or an array of strings`);
  }
  return out;
}

/**
 * Adds an entry to a plain object; a name like `__proto__` becomes an entry too, where an
 * assignment would set the prototype.
 */
function setEntry(target: Record<string, string[]>, name: string, list: string[]): void {
  if (name === '__proto__') {
    Object.defineProperty(target, name, {
      value: list,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[name] = list;
  }
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Invalid(`${field} must be a string`);
  return value;
}

function timestampOf(value: unknown, field: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 32_503_680_000) {
    throw new Invalid(`${field} must be a Unix timestamp in seconds`);
  }
  return microseconds(value);
}

function body(input: Record<string, unknown>, part: 'request' | 'response') {
  const text = optionalString(input.body, `${part}.body`) ?? '';
  const encoding = input.body_encoding ?? 'plaintext';
  if (encoding !== 'plaintext' && encoding !== 'base64') {
    throw new Invalid(`${part}.body_encoding must be plaintext or base64`);
  }
  if (encoding === 'base64') {
    const compact = text.replace(/\s+/g, '');
    if (!BASE64.test(compact)) throw new Invalid(`${part}.body is not valid Base64`);
    return {
      body: compact,
      body_encoding: 'base64' as const,
      size_bytes: Buffer.byteLength(compact, 'base64'),
    };
  }
  return { body: text, body_encoding: 'plaintext' as const, size_bytes: Buffer.byteLength(text, 'utf8') };
}

function request(input: unknown, receivedAt: number): MessageRequest {
  if (!isRecord(input)) throw new Invalid('request must be an object');
  if (typeof input.method !== 'string') throw new Invalid('request.method must be a string');
  if (!METHOD.test(input.method)) throw new Invalid('request.method must be an HTTP method name');
  if (typeof input.url !== 'string') throw new Invalid('request.url must be a string');
  return {
    method: input.method.toUpperCase(),
    ...urlParts(input.url),
    headers:
      input.headers === undefined || input.headers === null
        ? {}
        : stringLists(input.headers, 'request.headers'),
    form: input.form === undefined || input.form === null ? null : stringLists(input.form, 'request.form'),
    timestamp: timestampOf(input.timestamp, 'request.timestamp', receivedAt),
    ...body(input, 'request'),
  };
}

function response(input: unknown, receivedAt: number): MessageResponse {
  if (!isRecord(input)) throw new Invalid('response must be an object');
  const status = input.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 999) {
    throw new Invalid('response.status must be an integer HTTP status code (100–999)');
  }
  const reason = optionalString(input.reason, 'response.reason');
  let responseTime: number | null = null;
  if (input.response_time !== undefined && input.response_time !== null) {
    const value = input.response_time;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new Invalid('response.response_time must be a number of seconds');
    }
    responseTime = microseconds(value);
  }
  return {
    status,
    reason: reason ?? reasonFor(status),
    headers:
      input.headers === undefined || input.headers === null
        ? {}
        : stringLists(input.headers, 'response.headers'),
    timestamp: timestampOf(input.timestamp, 'response.timestamp', receivedAt),
    response_time: responseTime,
    ...body(input, 'response'),
  };
}

function unexpected(input: Record<string, unknown>, known: Set<string>, prefix: string): string[] {
  return Object.keys(input)
    .filter((key) => !known.has(key))
    .map((key) => `${prefix}${key}`);
}

/** One item of a creation call. */
export function normalizeItem(input: unknown, receivedAt: number): NormalizedItem {
  if (!isRecord(input)) {
    return {
      ok: false,
      error: { code: MESSAGE_CODES.invalidField, message: 'The message must be a JSON object' },
      unique_identifier: null,
    };
  }
  const rawIdentifier = input.unique_identifier;
  const identifier =
    typeof rawIdentifier === 'string' && rawIdentifier.length > 0 && rawIdentifier.length <= MAX_IDENTIFIER
      ? rawIdentifier
      : null;
  const fail = (code: number, message: string): NormalizedItem => ({
    ok: false,
    error: { code, message },
    unique_identifier: identifier,
  });
  if (rawIdentifier !== undefined && rawIdentifier !== null && identifier === null) {
    return fail(
      MESSAGE_CODES.invalidField,
      `unique_identifier must be a non-empty string of at most ${MAX_IDENTIFIER} characters`,
    );
  }
  const hasRequest = input.request !== undefined && input.request !== null;
  const hasResponse = input.response !== undefined && input.response !== null;
  if (!hasRequest && !hasResponse) {
    return fail(MESSAGE_CODES.noExchange, 'The message has neither a request nor a response');
  }
  try {
    const message: NewMessage = {
      source: 'api',
      unique_identifier: identifier,
      request: hasRequest ? request(input.request, receivedAt) : null,
      response: hasResponse ? response(input.response, receivedAt) : null,
      note: null,
    };
    const extra = [
      ...unexpected(input, ITEM_FIELDS, ''),
      ...(isRecord(input.request) ? unexpected(input.request, REQUEST_FIELDS, 'request.') : []),
      ...(isRecord(input.response) ? unexpected(input.response, RESPONSE_FIELDS, 'response.') : []),
    ];
    const warning =
      extra.length > 0
        ? {
            code: MESSAGE_CODES.unexpectedFields,
            message: `Unexpected field${extra.length === 1 ? '' : 's'} ignored: ${extra.join(', ')}`,
          }
        : null;
    return { ok: true, message, warning };
  } catch (err) {
    if (err instanceof Invalid) return fail(MESSAGE_CODES.invalidField, err.message);
    throw err;
  }
}
