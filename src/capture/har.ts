/**
 * HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) ⇄ messages, both ways. Pure.
 *
 * Export, one entry per message, oldest first:
 * - `startedDateTime` is the request time in ISO 8601 with microseconds; `time` and `timings.wait`
 *   are the response time in milliseconds (send and receive 0); when the response time is unknown,
 *   the gap between the request and response timestamps stands in.
 * - Headers, query parameters and form fields give one `{name, value}` per value.
 * - HAR 1.2 has no encoding for `postData`: a request body that is not UTF-8 is written as Base64
 *   text, marked with `_encoding: "base64"` and a `comment`. Response bodies use the standard
 *   `content.encoding: "base64"`.
 * - A message without a response gets the usual "no response" form: status 0, empty status text.
 *   A message's note travels as `response._error`, as browsers write it.
 * - A message with only a response (a half still waiting for its request) has no HAR form: it is
 *   left out and `log.comment` says how many were.
 * - `_vigil_message_id` names the message.
 *
 * Import reads what browsers and other tools write: the request's method and URL are required,
 * everything else is optional. Repeated header names become lists; `postData.text` is the request
 * body (Base64 when `_encoding` or `encoding` says so); form fields come from `postData.params`, or
 * from the text of an url-encoded body when a tool leaves `params` empty; a response with status 0
 * means no response; the response time is `time`, else the sum of the known `timings`. A field of
 * the wrong type answers 400 naming its JSON pointer (`/log/entries/3/request/url`).
 */
import { Buffer } from 'node:buffer';
import { AppError, invalid } from '../domain/errors.js';
import type { MessageRequest, MessageResponse, NewMessage, StoredMessage } from '../domain/messages.js';
import { bodyFromBytes, microseconds, reasonFor, urlParts } from './normalize.js';

export const HAR_LIMITS = {
  /** Entries one export holds at most (`?count=` asks for fewer). */
  exportEntries: 10_000,
  /** Entries one import takes at most; a larger file is refused whole. */
  importEntries: 5_000,
} as const;

export interface HarNameValue {
  name: string;
  value: string;
  comment?: string;
}

export interface HarPostData {
  mimeType: string;
  text: string;
  params?: HarNameValue[];
  comment?: string;
  /** Not in HAR 1.2: set to "base64" when `text` is the Base64 of a binary body. */
  _encoding?: 'base64';
}

export interface HarRequest {
  method: string;
  url: string;
  httpVersion: string;
  cookies: HarNameValue[];
  headers: HarNameValue[];
  queryString: HarNameValue[];
  postData?: HarPostData;
  headersSize: number;
  bodySize: number;
}

export interface HarContent {
  size: number;
  mimeType: string;
  text?: string;
  encoding?: 'base64';
}

export interface HarResponse {
  status: number;
  statusText: string;
  httpVersion: string;
  cookies: HarNameValue[];
  headers: HarNameValue[];
  content: HarContent;
  redirectURL: string;
  headersSize: number;
  bodySize: number;
  _error?: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: HarRequest;
  response: HarResponse;
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  _vigil_message_id: string;
}

export interface HarDocument {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    entries: HarEntry[];
    comment?: string;
  };
}

// ---------------------------------------------------------------------------------------------
// Export

/** Unix seconds → ISO 8601 in UTC, to the microsecond. */
export function isoTime(seconds: number): string {
  const micros = Math.round(seconds * 1_000_000);
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, -1)}${String(((micros % 1000) + 1000) % 1000).padStart(3, '0')}Z`;
}

function nameValues(lists: Record<string, string[]>): HarNameValue[] {
  return Object.entries(lists).flatMap(([name, values]) => values.map((value) => ({ name, value })));
}

/** The first value of a header, whatever the case of its name. */
function header(headers: Record<string, string[]>, name: string): string | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key]?.[0];
}

/** `name=value` pairs of Cookie headers, or the leading pair of each Set-Cookie header. */
function cookies(headers: Record<string, string[]>, name: 'cookie' | 'set-cookie'): HarNameValue[] {
  const values = Object.entries(headers)
    .filter(([key]) => key.toLowerCase() === name)
    .flatMap(([, list]) => list);
  const pairs = name === 'cookie' ? values.flatMap((value) => value.split(';')) : values;
  return pairs.flatMap((pair) => {
    const [head = ''] = name === 'cookie' ? [pair] : pair.split(';');
    const at = head.indexOf('=');
    if (at <= 0) return [];
    return [{ name: head.slice(0, at).trim(), value: head.slice(at + 1).trim() }];
  });
}

function postData(request: MessageRequest): HarPostData | undefined {
  if (request.body === '' && request.form === null) return undefined;
  const mimeType = header(request.headers, 'content-type') ?? '';
  const text =
    request.body === '' && request.form !== null
      ? new URLSearchParams(nameValues(request.form).map(({ name, value }) => [name, value])).toString()
      : request.body;
  return {
    mimeType,
    text,
    ...(request.form !== null && { params: nameValues(request.form) }),
    ...(request.body_encoding === 'base64' && {
      _encoding: 'base64' as const,
      comment: 'text is the Base64 of the body, which is not UTF-8 (HAR 1.2 has no encoding for postData)',
    }),
  };
}

const NO_RESPONSE: Omit<HarResponse, '_error'> = {
  status: 0,
  statusText: '',
  httpVersion: '',
  cookies: [],
  headers: [],
  content: { size: 0, mimeType: 'x-unknown' },
  redirectURL: '',
  headersSize: -1,
  bodySize: -1,
};

function harResponse(response: MessageResponse | null, note: string | null): HarResponse {
  const error = note === null ? {} : { _error: note };
  if (response === null) return { ...NO_RESPONSE, ...error };
  return {
    status: response.status,
    statusText: response.reason,
    httpVersion: 'HTTP/1.1',
    cookies: cookies(response.headers, 'set-cookie'),
    headers: nameValues(response.headers),
    content: {
      size: response.size_bytes,
      mimeType: header(response.headers, 'content-type') ?? 'x-unknown',
      text: response.body,
      ...(response.body_encoding === 'base64' && { encoding: 'base64' as const }),
    },
    redirectURL: header(response.headers, 'location') ?? '',
    headersSize: -1,
    bodySize: response.size_bytes,
    ...error,
  };
}

/** Milliseconds from request to response: the response time, else the gap between the timestamps. */
function elapsedMs(request: MessageRequest, response: MessageResponse | null): number {
  if (response === null) return 0;
  const seconds = response.response_time ?? Math.max(0, response.timestamp - request.timestamp);
  return Math.round(seconds * 1_000_000) / 1000;
}

/** The HAR entry of a message that has a request. */
export function harEntry(message: StoredMessage & { request: MessageRequest }): HarEntry {
  const { request, response } = message;
  const wait = elapsedMs(request, response);
  const post = postData(request);
  return {
    startedDateTime: isoTime(request.timestamp),
    time: wait,
    request: {
      method: request.method,
      url: request.url,
      httpVersion: 'HTTP/1.1',
      cookies: cookies(request.headers, 'cookie'),
      headers: nameValues(request.headers),
      queryString: nameValues(request.params),
      ...(post && { postData: post }),
      headersSize: -1,
      bodySize: request.size_bytes,
    },
    response: harResponse(response, message.note),
    cache: {},
    timings: { send: 0, wait, receive: 0 },
    _vigil_message_id: message.uuid,
  };
}

/** A HAR 1.2 document of these messages, in the order given. */
export function toHar(
  messages: readonly StoredMessage[],
  options: { creator: { name: string; version: string }; truncatedAt?: number | undefined },
): HarDocument {
  const entries: HarEntry[] = [];
  let skipped = 0;
  for (const message of messages) {
    if (message.request === null) skipped++;
    else entries.push(harEntry({ ...message, request: message.request }));
  }
  const comments = [
    ...(skipped > 0
      ? [
          `${skipped} message${skipped === 1 ? '' : 's'} without a request ${skipped === 1 ? 'is' : 'are'} left out`,
        ]
      : []),
    ...(options.truncatedAt !== undefined
      ? [
          `The window holds more than ${options.truncatedAt} messages; ask again with ?since= the last entry's time for the rest`,
        ]
      : []),
  ];
  return {
    log: {
      version: '1.2',
      creator: options.creator,
      entries,
      ...(comments.length > 0 && { comment: comments.join('. ') }),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Import

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const ISO_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})$/i;
const MAX_TIMESTAMP = 32_503_680_000;

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field reader that knows where it is, so every complaint names its JSON pointer. */
class At {
  constructor(
    readonly value: Json,
    readonly pointer: string,
  ) {}

  static object(value: unknown, pointer: string): At {
    if (!isRecord(value)) throw invalid(pointer || '/', 'must be an object');
    return new At(value, pointer);
  }

  child(key: string): At | undefined {
    const value = this.value[key];
    return value === undefined || value === null ? undefined : At.object(value, `${this.pointer}/${key}`);
  }

  string(key: string): string | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw invalid(`${this.pointer}/${key}`, 'must be a string');
    return value;
  }

  requiredString(key: string): string {
    const value = this.string(key);
    if (value === undefined) throw invalid(`${this.pointer}/${key}`, 'is required');
    return value;
  }

  number(key: string): number | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number') throw invalid(`${this.pointer}/${key}`, 'must be a number');
    return value;
  }

  array(key: string): unknown[] {
    const value = this.value[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw invalid(`${this.pointer}/${key}`, 'must be an array');
    return value;
  }
}

/** `[{name, value}]` → lists per name, in order; repeated names gather their values. */
function lists(parent: At, key: string): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  parent.array(key).forEach((item, index) => {
    const pair = At.object(item, `${parent.pointer}/${key}/${index}`);
    const name = pair.requiredString('name');
    (out[name] ??= []).push(pair.string('value') ?? '');
  });
  return { ...out };
}

/** ISO 8601 → Unix seconds, keeping fractions finer than a millisecond. */
export function parseIsoTime(value: string): number | undefined {
  const match = ISO_TIME.exec(value);
  let seconds: number;
  if (match) {
    const [, head = '', fraction, zone = 'Z'] = match;
    const zoned = /^[+-]\d{4}$/.test(zone) ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
    seconds = Date.parse(`${head}${zoned}`) / 1000 + (fraction ? Number(`0.${fraction}`) : 0);
  } else {
    seconds = Date.parse(value) / 1000;
  }
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_TIMESTAMP
    ? microseconds(seconds)
    : undefined;
}

/**
 * The body of a `postData` or `content` object: its text, Base64 when an encoding key says so
 * (then kept as plain text whenever the bytes are UTF-8).
 */
function body(at: At | undefined, encodingKeys: readonly string[]) {
  const text = at?.string('text') ?? '';
  const key = at && encodingKeys.find((candidate) => at.value[candidate] != null);
  const encoding = at && key !== undefined ? at.string(key) : undefined;
  if (!at || encoding === undefined || encoding === '') {
    return { body: text, body_encoding: 'plaintext' as const, size_bytes: Buffer.byteLength(text, 'utf8') };
  }
  if (encoding.toLowerCase() !== 'base64') throw invalid(`${at.pointer}/${key}`, 'must be base64 when given');
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw invalid(`${at.pointer}/text`, 'is not valid Base64');
  return bodyFromBytes(Buffer.from(compact, 'base64'));
}

function isUrlEncoded(mimeType: string): boolean {
  return mimeType.toLowerCase().startsWith('application/x-www-form-urlencoded');
}

function requestOf(entry: At, timestamp: number): MessageRequest {
  const at = entry.child('request');
  if (!at) throw invalid(`${entry.pointer}/request`, 'is required');
  const method = at.requiredString('method');
  if (!METHOD.test(method)) throw invalid(`${at.pointer}/method`, 'must be an HTTP method name');
  const url = at.requiredString('url');
  let parts: ReturnType<typeof urlParts>;
  try {
    parts = urlParts(url);
  } catch {
    throw invalid(
      `${at.pointer}/url`,
      `must be an absolute http or https URL, got ${JSON.stringify(url.slice(0, 200))}`,
    );
  }
  const post = at.child('postData');
  const content = body(post, ['_encoding', 'encoding']);
  let form: Record<string, string[]> | null = null;
  if (post) {
    const params = lists(post, 'params');
    if (Object.keys(params).length > 0) form = params;
    else if (isUrlEncoded(post.string('mimeType') ?? '') && content.body_encoding === 'plaintext') {
      form = {};
      for (const [name, value] of new URLSearchParams(content.body)) (form[name] ??= []).push(value);
    }
  }
  return {
    method: method.toUpperCase(),
    ...parts,
    headers: lists(at, 'headers'),
    form,
    timestamp,
    ...content,
  };
}

/** Seconds from request to response: `time`, else the sum of the known (non-negative) timings. */
function responseTime(entry: At): number | null {
  const time = entry.number('time');
  if (time !== undefined && time >= 0) return microseconds(time / 1000);
  const timings = entry.child('timings');
  if (!timings) return null;
  const known = ['blocked', 'dns', 'connect', 'send', 'wait', 'receive']
    .map((key) => timings.number(key))
    .filter((value): value is number => value !== undefined && value >= 0);
  return known.length > 0 ? microseconds(known.reduce((sum, value) => sum + value, 0) / 1000) : null;
}

function responseOf(entry: At, requestTime: number): MessageResponse | null {
  const at = entry.child('response');
  const status = at?.number('status');
  if (!at || status === undefined || status === 0) return null;
  if (!Number.isInteger(status) || status < 100 || status > 999) {
    throw invalid(
      `${at.pointer}/status`,
      'must be an integer HTTP status code (100–999), or 0 for no response',
    );
  }
  const elapsed = responseTime(entry);
  return {
    status,
    reason: at.string('statusText') || reasonFor(status),
    headers: lists(at, 'headers'),
    timestamp: microseconds(requestTime + (elapsed ?? 0)),
    response_time: elapsed,
    ...body(at.child('content'), ['encoding']),
  };
}

function messageOf(entry: At, receivedAt: number): NewMessage {
  const started = entry.string('startedDateTime');
  const timestamp = started === undefined ? receivedAt : parseIsoTime(started);
  if (timestamp === undefined) {
    throw invalid(`${entry.pointer}/startedDateTime`, 'must be an ISO 8601 date and time');
  }
  const request = requestOf(entry, timestamp);
  const response = responseOf(entry, timestamp);
  return {
    source: 'har',
    unique_identifier: null,
    request,
    response,
    note: entry.child('response')?.string('_error') || null,
  };
}

/** The messages of a HAR document, one per entry; throws a 400 naming the field at fault, or 422. */
export function messagesFromHar(input: unknown, receivedAt: number): NewMessage[] {
  const root = At.object(input, '');
  const log = root.child('log');
  if (!log) throw invalid('/log', 'is required: the body must be a HAR document');
  if (!Array.isArray(log.value.entries)) throw invalid('/log/entries', 'must be an array');
  const entries = log.value.entries as unknown[];
  if (entries.length > HAR_LIMITS.importEntries) {
    throw new AppError(
      'limit_reached',
      `A HAR import takes at most ${HAR_LIMITS.importEntries} entries; got ${entries.length}, none saved`,
    );
  }
  return entries.map((entry, index) => messageOf(At.object(entry, `/log/entries/${index}`), receivedAt));
}
