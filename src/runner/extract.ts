/**
 * Reading a value from a response for an assertion or a variable (DESIGN §4, "Sources"). Pure: the
 * response is already in memory; bodies are parsed at most once per response through a
 * {@link ParseCache}.
 *
 * What each source reads (the property is ignored where not mentioned):
 * - `response_status`, `response_time` (ms), `response_size` (bytes): a number.
 * - `response_text`: the body decoded as UTF-8 (invalid bytes become U+FFFD).
 * - `response_headers`: the header named by the property, case-insensitively; several values are
 *   joined with `", "`. A header that is absent reads as a missing value (`undefined`), not an
 *   error, so that `empty` passes and `not_empty` fails on it. An empty property reads every header
 *   as an object of lower-case name → joined values.
 * - `response_json`: the element at a path (see {@link parseJsonPath}); an empty property or `$`
 *   is the whole document. A path that leads nowhere reads as a missing value; a body that is not
 *   JSON is an error.
 * - `response_xml`: an XPath 1.0 expression (see {@link readXml}).
 */
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import type { DOMParser } from '@xmldom/xmldom';
import type * as XPath from 'xpath';
import type { SelectReturnType } from 'xpath';
import type { Source } from '../domain/assertions.js';
import { isRecord } from '../domain/comparisons/values.js';

// The XML parser and XPath are loaded on the first XPath read: most processes never make one.
const require = createRequire(import.meta.url);
interface XmlModules {
  xpath: typeof XPath;
  DOMParser: typeof DOMParser;
}
let xmlModules: XmlModules | null = null;
function xml(): XmlModules {
  xmlModules ??= {
    xpath: require('xpath') as typeof XPath,
    DOMParser: (require('@xmldom/xmldom') as { DOMParser: typeof DOMParser }).DOMParser,
  };
  return xmlModules;
}

/** What a source reads from: a response, or the response-like view of a subtest/partner step. */
export interface ResponseSubject {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string[]>;
  body: Buffer | string;
  timeMs: number;
  sizeBytes: number;
}

export type Extraction = { ok: true; value: unknown } | { ok: false; error: string };

/** Largest body, in bytes, that `response_xml` parses. */
export const MAX_XML_BYTES = 10 * 1024 * 1024;

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Parsed forms of one response body, shared by the assertions and variables of one step. A cache
 * handed a different subject forgets what it held, so reusing one by mistake is harmless.
 */
export interface ParseCache {
  subject?: ResponseSubject;
  text?: string;
  json?: Parsed<unknown>;
  xml?: Parsed<XmlDocument>;
}

type XmlDocument = ReturnType<DOMParser['parseFromString']>;

export function createParseCache(): ParseCache {
  return {};
}

export function readSource(
  source: Source,
  property: string,
  subject: ResponseSubject,
  cache?: ParseCache,
): Extraction {
  switch (source) {
    case 'response_status':
      return found(subject.status);
    case 'response_time':
      return found(subject.timeMs);
    case 'response_size':
      return found(subject.sizeBytes);
    case 'response_text':
      return found(bodyText(subject, cacheFor(subject, cache)));
    case 'response_headers':
      return found(readHeader(subject.headers, property));
    case 'response_json':
      return readJson(property, subject, cacheFor(subject, cache));
    case 'response_xml':
      return readXml(property, subject, cacheFor(subject, cache));
  }
}

/** How a missing value of `source` is named in a "not found" error. */
export function describeLocation(source: Source, property: string): string {
  switch (source) {
    case 'response_headers':
      return `header ${JSON.stringify(property)}`;
    case 'response_json':
      return `JSON path ${JSON.stringify(property)}`;
    case 'response_xml':
      return `node for XPath ${JSON.stringify(property)}`;
    default:
      return source;
  }
}

function found(value: unknown): Extraction {
  return { ok: true, value };
}

function cacheFor(subject: ResponseSubject, cache: ParseCache | undefined): ParseCache {
  if (cache === undefined) return { subject };
  if (cache.subject !== subject) {
    delete cache.text;
    delete cache.json;
    delete cache.xml;
    cache.subject = subject;
  }
  return cache;
}

function bodyText(subject: ResponseSubject, cache: ParseCache): string {
  cache.text ??= typeof subject.body === 'string' ? subject.body : subject.body.toString('utf8');
  return cache.text;
}

function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

// ---------------------------------------------------------------------------------------------
// Headers

function readHeader(headers: Record<string, string[]>, property: string): unknown {
  const wanted = property.trim().toLowerCase();
  const entries = Object.entries(headers);
  if (wanted === '') {
    return Object.fromEntries(entries.map(([name, values]) => [name.toLowerCase(), values.join(', ')]));
  }
  const values = entries.filter(([name]) => name.toLowerCase() === wanted).flatMap(([, v]) => v);
  return values.length === 0 ? undefined : values.join(', ');
}

// ---------------------------------------------------------------------------------------------
// JSON

export type JsonPathSegment = { kind: 'key'; key: string } | { kind: 'index'; index: number };

const INTEGER = /^-?\d+$/;

/**
 * Parses a JSON path:
 * - an optional leading `$.` or `$` before `[`; nothing (or `$` alone) means the whole document,
 *   and a `$` followed by anything else is part of a name (`$schema`);
 * - names separated by dots: `data.items`; a name is any text up to the next `.` or `[`;
 * - indexes in brackets: `items[0]`, `items[-1]` (counted from the end);
 * - quoted keys in brackets, for names holding dots or brackets: `['key.with.dots']`, `["x"]`,
 *   with backslash escaping the next character.
 * A name made of digits (`items.0`) also indexes an array. Surrounding whitespace is ignored.
 */
export function parseJsonPath(path: string): Parsed<JsonPathSegment[]> {
  const src = path.trim();
  const segments: JsonPathSegment[] = [];
  let pos = 0;
  if (src === '$' || src === '$.') return { ok: true, value: segments };
  if (src.startsWith('$.')) pos = 2;
  else if (src.startsWith('$[')) pos = 1;
  const invalid = (why: string): Parsed<JsonPathSegment[]> => ({
    ok: false,
    error: `invalid JSON path ${JSON.stringify(path)}: ${why} at offset ${pos}`,
  });
  let expectName = pos === 0 || src[pos - 1] === '.';
  while (pos < src.length) {
    const c = src[pos];
    if (c === '[') {
      const close = readBracket(src, pos);
      if (close === undefined) return invalid('unterminated "["');
      if ('error' in close) return invalid(close.error);
      segments.push(close.segment);
      pos = close.end;
      expectName = false;
      continue;
    }
    if (c === '.') {
      if (expectName) return invalid('empty name');
      pos += 1;
      expectName = true;
      if (pos === src.length) return invalid('empty name');
      continue;
    }
    if (!expectName) return invalid('expected "." or "["');
    let end = pos;
    while (end < src.length && src[end] !== '.' && src[end] !== '[') end += 1;
    segments.push({ kind: 'key', key: src.slice(pos, end) });
    pos = end;
    expectName = false;
  }
  return { ok: true, value: segments };
}

type Bracket = { segment: JsonPathSegment; end: number } | { error: string };

/** Reads `[…]` starting at `open`; `undefined` when there is no closing bracket. */
function readBracket(src: string, open: number): Bracket | undefined {
  let pos = open + 1;
  const quote = src[pos];
  if (quote === '"' || quote === "'") {
    let key = '';
    pos += 1;
    while (pos < src.length && src[pos] !== quote) {
      if (src[pos] === '\\' && pos + 1 < src.length) pos += 1;
      key += src[pos];
      pos += 1;
    }
    if (pos >= src.length) return undefined;
    if (src[pos + 1] !== ']') return { error: 'expected "]" after a quoted key' };
    return { segment: { kind: 'key', key }, end: pos + 2 };
  }
  const close = src.indexOf(']', pos);
  if (close === -1) return undefined;
  const inner = src.slice(pos, close).trim();
  if (!INTEGER.test(inner)) return { error: `expected an index or a quoted key in brackets, got "${inner}"` };
  return { segment: { kind: 'index', index: Number(inner) }, end: close + 1 };
}

/** Follows the path through own properties and array elements only. */
export function followJsonPath(document: unknown, segments: readonly JsonPathSegment[]): unknown {
  let value = document;
  for (const segment of segments) {
    if (Array.isArray(value)) {
      const index =
        segment.kind === 'index'
          ? segment.index
          : INTEGER.test(segment.key)
            ? Number(segment.key)
            : undefined;
      if (index === undefined) return undefined;
      const at = index < 0 ? value.length + index : index;
      value = at >= 0 && at < value.length ? value[at] : undefined;
    } else if (isRecord(value)) {
      const key = segment.kind === 'key' ? segment.key : String(segment.index);
      value = Object.hasOwn(value, key) ? value[key] : undefined;
    } else {
      return undefined;
    }
    if (value === undefined) return undefined;
  }
  return value;
}

function readJson(property: string, subject: ResponseSubject, cache: ParseCache): Extraction {
  const path = parseJsonPath(property);
  if (!path.ok) return path;
  cache.json ??= parseJson(bodyText(subject, cache));
  if (!cache.json.ok) return cache.json;
  return found(followJsonPath(cache.json.value, path.value));
}

function parseJson(text: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(withoutBom(text)) as unknown };
  } catch {
    return { ok: false, error: 'response body is not valid JSON' };
  }
}

// ---------------------------------------------------------------------------------------------
// XML

/**
 * Evaluates an XPath 1.0 expression over the body parsed as XML:
 * - a string, number or boolean expression (`string(//a)`, `count(//a)`, `boolean(//a)`) reads as
 *   that value;
 * - a node-set reads as the text of its first node in document order: an attribute's value, an
 *   element's text content (descendants included), a text node's text; the document node reads as
 *   the root element's text. An empty node-set reads as a missing value.
 * Names are matched without namespace prefixes bound, so elements in a default namespace need
 * `*[local-name()='x']`. An empty expression, a body that is not well-formed XML, a body over
 * {@link MAX_XML_BYTES}, or a document type declaring entities is an error. Entities are never
 * expanded beyond the five predefined ones and character references.
 */
function readXml(property: string, subject: ResponseSubject, cache: ParseCache): Extraction {
  const expression = property.trim();
  if (expression === '') return { ok: false, error: 'an XPath expression is required' };
  cache.xml ??= parseXml(subject, cache);
  if (!cache.xml.ok) return cache.xml;
  const { xpath } = xml();
  let selected: SelectReturnType;
  try {
    selected = xpath.select(expression, cache.xml.value as unknown as Node);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `invalid XPath ${JSON.stringify(expression)}: ${reason}` };
  }
  if (Array.isArray(selected)) {
    const [first] = selected;
    return found(first === undefined ? undefined : nodeText(first));
  }
  if (selected === null) return found(undefined);
  if (xpath.isNodeLike(selected)) return found(nodeText(selected));
  return found(selected);
}

function nodeText(node: Node): string {
  const { xpath } = xml();
  if (xpath.isAttribute(node)) return node.value;
  if (xpath.isDocumentNode(node)) return node.documentElement?.textContent ?? '';
  return node.textContent ?? '';
}

function parseXml(subject: ResponseSubject, cache: ParseCache): Parsed<XmlDocument> {
  const bytes =
    typeof subject.body === 'string' ? Buffer.byteLength(subject.body, 'utf8') : subject.body.length;
  if (bytes > MAX_XML_BYTES) {
    return { ok: false, error: `response body is larger than ${MAX_XML_BYTES} bytes, too large for XPath` };
  }
  const text = withoutBom(bodyText(subject, cache));
  const doctype = text.indexOf('<!DOCTYPE');
  if (doctype !== -1 && text.includes('<!ENTITY', doctype)) {
    return { ok: false, error: 'response body is refused as XML: its document type declares entities' };
  }
  const parser = new (xml().DOMParser)({
    locator: false,
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(message);
    },
  });
  try {
    return { ok: true, value: parser.parseFromString(text, 'text/xml') };
  } catch (err) {
    const reason =
      err instanceof Error ? (err.cause instanceof Error ? err.cause : err).message : String(err);
    return { ok: false, error: `response body is not valid XML: ${reason}` };
  }
}
