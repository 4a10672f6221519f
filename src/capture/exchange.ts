/**
 * Pieces shared by the exchanges the service records itself (capture, gateway, replay): headers as
 * messages keep them, the hop-by-hop headers a proxy drops, and the request and response parts of a
 * message.
 */
import type { MessageRequest, MessageResponse } from '../domain/messages.js';
import { bodyFromBytes, microseconds, reasonFor, urlParts } from './normalize.js';

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1); a proxy does not pass them on. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function isHopByHop(name: string, listed: ReadonlySet<string>): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith('proxy-') || listed.has(name);
}

/** Header values by lower-case name, every value in order. */
export type HeaderLists = Record<string, string[]>;

/** Headers as Node gives them raw (name, value, name, value…), grouped by lower-case name. */
export function headerLists(raw: readonly string[]): HeaderLists {
  const grouped = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const seen = grouped.get(name);
    if (seen) seen.push(value);
    else grouped.set(name, [value]);
  }
  // fromEntries defines own properties, so a header named __proto__ stays a header.
  return Object.fromEntries(grouped);
}

/**
 * The headers a proxy passes on: without hop-by-hop headers, those the Connection header names, and
 * the names in `drop` (lower case).
 */
export function endToEnd(headers: HeaderLists, drop: readonly string[] = []): HeaderLists {
  const listed = new Set(
    (headers.connection ?? []).flatMap((value) => value.split(',').map((name) => name.trim().toLowerCase())),
  );
  for (const name of drop) listed.add(name);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !isHopByHop(name, listed)));
}

/**
 * The headers with the named cookies taken out of every `Cookie` header (names compared exactly);
 * a `Cookie` header left empty is dropped.
 */
export function withoutCookies(headers: HeaderLists, names: ReadonlySet<string>): HeaderLists {
  const cookies = headers.cookie;
  if (!cookies) return headers;
  const kept = cookies
    .map((value) =>
      value
        .split(';')
        .filter((pair) => !names.has(pair.split('=', 1)[0]!.trim()))
        .join(';')
        .trim(),
    )
    .filter((value) => value !== '');
  const { cookie: _cookie, ...rest } = headers;
  return kept.length > 0 ? { ...rest, cookie: kept } : rest;
}

/** Form fields of a URL-encoded body; null for any other body. */
function formOf(headers: HeaderLists, body: Uint8Array): HeaderLists | null {
  const type = headers['content-type']?.[0]?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  const form = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(Buffer.from(body).toString('utf8'))) {
    const seen = form.get(name);
    if (seen) seen.push(value);
    else form.set(name, [value]);
  }
  return Object.fromEntries(form);
}

/** The request part of a recorded message; `timestamp` in Unix seconds. */
export function recordedRequest(input: {
  method: string;
  url: string;
  headers: HeaderLists;
  body: Uint8Array;
  timestamp: number;
}): MessageRequest {
  return {
    method: input.method.toUpperCase(),
    ...urlParts(input.url),
    headers: input.headers,
    form: formOf(input.headers, input.body),
    timestamp: microseconds(input.timestamp),
    ...bodyFromBytes(input.body),
  };
}

/** Headers as a Node response holds them (`getHeaders()`), as messages keep them; hop-by-hop headers left out. */
export function sentHeaders(
  headers: Record<string, number | string | readonly string[] | undefined>,
): HeaderLists {
  const lists: HeaderLists = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    lists[name.toLowerCase()] = Array.isArray(value) ? [...(value as string[])] : [String(value)];
  }
  return endToEnd(lists);
}

/**
 * The response part of a recorded message; `timestamp` in Unix seconds, `responseTime` in seconds
 * (null when unknown).
 */
export function recordedResponse(input: {
  status: number;
  headers: HeaderLists;
  body: Uint8Array;
  timestamp: number;
  responseTime: number | null;
}): MessageResponse {
  return {
    status: input.status,
    reason: reasonFor(input.status),
    headers: input.headers,
    timestamp: microseconds(input.timestamp),
    response_time: input.responseTime === null ? null : microseconds(input.responseTime),
    ...bodyFromBytes(input.body),
  };
}
