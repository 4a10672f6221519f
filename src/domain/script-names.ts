/**
 * The names a script and a template can use, with a line on each: what the dashboard's editors
 * offer as completions. The sandbox (src/runner/sandbox/prelude.ts) and the template engine
 * (templates.ts) define them; test/domain/script-names.test.ts checks that every name here exists
 * there, so the list cannot drift from what runs.
 */
// Only a type: the dashboard imports this module, and the template engine needs Node.
import type { TemplateFunction } from './templates.js';

export interface ScriptName {
  name: string;
  /** `variable` for an object, `function` for something to call, `property` for a member. */
  kind: 'variable' | 'function' | 'property';
  detail: string;
}

/** The globals of every script: parameters of the script's function and the prelude's globals. */
export const SCRIPT_GLOBALS: readonly ScriptName[] = [
  { name: 'request', kind: 'variable', detail: 'the request (pre-request scripts may change it)' },
  { name: 'response', kind: 'variable', detail: 'the response (post-response scripts)' },
  { name: 'variables', kind: 'variable', detail: 'get(name) and set(name, value)' },
  { name: 'assert', kind: 'variable', detail: "Chai's assert" },
  { name: 'log', kind: 'function', detail: 'log(...values): a line of script output' },
  { name: 'encode_base64', kind: 'function', detail: 'encode_base64(text): UTF-8 text to base64' },
  { name: 'decode_base64', kind: 'function', detail: 'decode_base64(text): base64 to UTF-8 text' },
];

/** Members of the objects among the globals, by global. */
export const SCRIPT_MEMBERS: Readonly<Record<string, readonly ScriptName[]>> = {
  request: [
    { name: 'method', kind: 'property', detail: 'string' },
    { name: 'url', kind: 'property', detail: 'string, the full URL' },
    { name: 'scheme', kind: 'property', detail: 'string: http or https' },
    { name: 'host', kind: 'property', detail: 'string' },
    { name: 'path', kind: 'property', detail: 'string' },
    { name: 'params', kind: 'property', detail: '{name: string[]}, the query' },
    { name: 'headers', kind: 'property', detail: '{name: string[]}' },
    { name: 'body', kind: 'property', detail: 'string' },
    { name: 'form', kind: 'property', detail: '{name: string | string[]}' },
  ],
  response: [
    { name: 'status', kind: 'property', detail: 'number' },
    { name: 'reason', kind: 'property', detail: 'string' },
    { name: 'headers', kind: 'property', detail: '{name: string[]}' },
    { name: 'body', kind: 'property', detail: 'string' },
    { name: 'response_time_ms', kind: 'property', detail: 'number' },
    { name: 'size_bytes', kind: 'property', detail: 'number' },
  ],
  variables: [
    { name: 'get', kind: 'function', detail: 'get(name): string | undefined' },
    { name: 'set', kind: 'function', detail: 'set(name, value): the value is kept as a string' },
  ],
  assert: [
    { name: 'equal', kind: 'function', detail: 'equal(actual, expected, message?)' },
    { name: 'notEqual', kind: 'function', detail: 'notEqual(actual, expected, message?)' },
    { name: 'strictEqual', kind: 'function', detail: 'strictEqual(actual, expected, message?)' },
    { name: 'deepEqual', kind: 'function', detail: 'deepEqual(actual, expected, message?)' },
    { name: 'isTrue', kind: 'function', detail: 'isTrue(value, message?)' },
    { name: 'isFalse', kind: 'function', detail: 'isFalse(value, message?)' },
    { name: 'ok', kind: 'function', detail: 'ok(value, message?)' },
    { name: 'exists', kind: 'function', detail: 'exists(value, message?)' },
    { name: 'include', kind: 'function', detail: 'include(haystack, needle, message?)' },
    { name: 'match', kind: 'function', detail: 'match(text, regexp, message?)' },
    { name: 'isAbove', kind: 'function', detail: 'isAbove(value, above, message?)' },
    { name: 'isBelow', kind: 'function', detail: 'isBelow(value, below, message?)' },
    { name: 'lengthOf', kind: 'function', detail: 'lengthOf(value, length, message?)' },
    { name: 'property', kind: 'function', detail: 'property(object, name, message?)' },
    { name: 'typeOf', kind: 'function', detail: 'typeOf(value, name, message?)' },
    { name: 'fail', kind: 'function', detail: 'fail(message?)' },
  ],
};

/** How each template function is called; a record over every function, so none is left out. */
const TEMPLATE_SIGNATURES: Readonly<Record<TemplateFunction, string>> = {
  timestamp: 'timestamp(): Unix seconds now',
  utc_datetime: 'utc_datetime(): now, ISO 8601 in UTC',
  format_timestamp: 'format_timestamp(seconds, format): strftime-style, UTC',
  timestamp_offset: 'timestamp_offset(seconds): now plus seconds',
  random_int: 'random_int() or random_int(low, high)',
  random_string: 'random_string(n): n letters and digits',
  uuid: 'uuid(): a random UUID v4',
  encode_base64: 'encode_base64(text)',
  decode_base64: 'decode_base64(text)',
  md5: 'md5(text): hex digest',
  sha1: 'sha1(text): hex digest',
  sha256: 'sha256(text): hex digest',
  hmac_sha1: 'hmac_sha1(text, key): hex digest',
  hmac_sha256: 'hmac_sha256(text, key): hex digest',
  url_encode: 'url_encode(text): percent-encoded',
};

/** Template functions, for completion after `{{` in request fields. */
export const TEMPLATE_FUNCTION_NAMES: readonly ScriptName[] = Object.entries(TEMPLATE_SIGNATURES).map(
  ([name, detail]) => ({ name, kind: 'function' as const, detail }),
);
