/**
 * The template engine for step fields (DESIGN §4, "Template functions"). Pure: no I/O; time and
 * randomness come from the context so that tests are deterministic.
 *
 * Syntax
 * - Text outside `{{ … }}` is kept byte for byte. A `{{` with no `}}` anywhere after it is kept
 *   literally (with everything after it). Once a `}}` follows, `{{` opens an expression, and an
 *   expression that does not parse is an error (never silently kept).
 * - An expression is a name (`[A-Za-z_][A-Za-z0-9_.-]*`), optionally followed by `( arguments )`,
 *   with optional whitespace around each token: `{{ user_id }}`, `{{ md5(v) }}`.
 * - A bare name that is a built-in function calls it with no arguments (`{{timestamp}}`); the
 *   function names are reserved. Any other bare name is a variable; an undefined one is an error
 *   that names it. Values are inserted as they are (no escaping).
 * - `name(…)` must name a built-in function ({@link TEMPLATE_FUNCTIONS}); arity is checked.
 *
 * Arguments, separated by commas (`f()` has none):
 * - Quoted: `'…'` or `"…"`. Backslash escapes: `\n`, `\r`, `\t`; a backslash before any other
 *   character yields that character (`\'`, `\"`, `\\`, `\,`). The content is literal: `{{` inside
 *   quotes is not rendered.
 * - Unquoted: the text up to the next `,`, `)` or `}}` that is not inside a nested `{{…}}`, with
 *   surrounding whitespace trimmed. When it is exactly a name it is evaluated like `{{name}}`
 *   (a variable, or a built-in function called without arguments). Otherwise it is literal text
 *   (numbers such as `-5` or `1.5` included) in which nested `{{…}}` are rendered first and the rest
 *   is kept: `md5({{user}}:{{password}})` hashes `alice:secret`. An empty unquoted argument is an
 *   error (write `''` for an empty string).
 *
 * Bounds, so that no template can keep the process busy for long: templates up to
 * {@link TEMPLATE_LIMITS.inputLength} characters, expressions nested up to
 * {@link TEMPLATE_LIMITS.depth} levels, at most {@link TEMPLATE_LIMITS.expressions} expressions and
 * {@link TEMPLATE_LIMITS.calls} function calls, at most {@link TEMPLATE_LIMITS.outputLength}
 * characters produced in total (output and intermediate arguments together), `format_timestamp`
 * formats up to {@link TEMPLATE_LIMITS.formatLength} characters; beyond that rendering fails.
 * Renderings handed the same {@link TemplateBudget} (the runner gives one to each step) share the
 * counts of expressions, calls and characters, so a step of many fields cannot multiply them.
 */
import { Buffer } from 'node:buffer';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { TextDecoder } from 'node:util';

/** Built-in functions, the single source of truth for their names. */
export const TEMPLATE_FUNCTIONS = [
  'timestamp',
  'utc_datetime',
  'format_timestamp',
  'timestamp_offset',
  'random_int',
  'random_string',
  'uuid',
  'encode_base64',
  'decode_base64',
  'md5',
  'sha1',
  'sha256',
  'hmac_sha1',
  'hmac_sha256',
  'url_encode',
] as const;
export type TemplateFunction = (typeof TEMPLATE_FUNCTIONS)[number];

export const TEMPLATE_LIMITS = {
  /** Characters (UTF-16 code units) in one template. */
  inputLength: 1_000_000,
  /** Levels of `{{…}}` nesting; the outermost expression is level 1. */
  depth: 16,
  /** Characters produced, intermediate arguments included. */
  outputLength: 4_000_000,
  /** `{{…}}` expressions parsed, nested ones included. */
  expressions: 10_000,
  /** Function calls. */
  calls: 1_000,
  /** Largest `n` for `random_string(n)`. */
  randomStringLength: 10_000,
  /** Characters in the format of `format_timestamp`. */
  formatLength: 256,
} as const;

/**
 * What renderings may still spend; every rendering handed the same budget draws on it. Without
 * one, a rendering gets a budget of its own.
 */
export interface TemplateBudget {
  expressions: number;
  calls: number;
  characters: number;
}

export function templateBudget(): TemplateBudget {
  return {
    expressions: TEMPLATE_LIMITS.expressions,
    calls: TEMPLATE_LIMITS.calls,
    characters: TEMPLATE_LIMITS.outputLength,
  };
}

/**
 * `%` directives understood by `format_timestamp` (always in UTC). Any other directive, or a
 * trailing lone `%`, is an error.
 */
export const FORMAT_DIRECTIVES = {
  Y: 'year, at least 4 digits (2026)',
  y: 'year within the century, 2 digits (26)',
  m: 'month, 01–12',
  d: 'day of the month, 01–31',
  H: 'hour, 00–23',
  I: 'hour, 01–12',
  p: 'AM or PM',
  M: 'minute, 00–59',
  S: 'second, 00–60',
  j: 'day of the year, 001–366',
  b: 'abbreviated month name (Nov)',
  B: 'full month name (November)',
  a: 'abbreviated weekday name (Sun)',
  A: 'full weekday name (Sunday)',
  s: 'Unix seconds',
  z: 'UTC offset, always +0000',
  Z: 'time zone name, always UTC',
  '%': 'a literal %',
} as const;

export interface TemplateContext {
  variables: Record<string, string>;
  /** Current time in milliseconds since the epoch, like `Date.now`. */
  now?: () => number;
  /** A number in [0, 1), like `Math.random`; defaults to a cryptographic source. */
  random?: () => number;
  /** Shared with other renderings (the fields of one step); by default this rendering's own. */
  budget?: TemplateBudget;
}

export type TemplateResult = { ok: true; value: string } | { ok: false; error: string; variable?: string };

export function isTemplateFunction(name: string): name is TemplateFunction {
  return (TEMPLATE_FUNCTIONS as readonly string[]).includes(name);
}

export function renderTemplate(text: string, ctx: TemplateContext): TemplateResult {
  if (text.length > TEMPLATE_LIMITS.inputLength) {
    return { ok: false, error: `template is longer than ${TEMPLATE_LIMITS.inputLength} characters` };
  }
  const budget = ctx.budget ?? templateBudget();
  try {
    const parts = parseTemplate(text, budget);
    const evaluation: Evaluation = {
      variables: ctx.variables,
      now: ctx.now ?? Date.now,
      random: ctx.random ?? secureRandom,
      budget,
    };
    return { ok: true, value: renderParts(parts, evaluation) };
  } catch (err) {
    if (!(err instanceof TemplateFailure)) throw err;
    return err.variable === undefined
      ? { ok: false, error: err.message }
      : { ok: false, error: err.message, variable: err.variable };
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

type Expr = { kind: 'name'; name: string } | { kind: 'call'; name: TemplateFunction; args: Part[][] };
/** A piece of text: literal, or an expression to evaluate. */
type Part = string | Expr;

class TemplateFailure extends Error {
  constructor(
    message: string,
    readonly variable?: string,
  ) {
    super(message);
  }
}

interface Cursor {
  readonly src: string;
  pos: number;
  readonly budget: TemplateBudget;
}

const NAME = /[A-Za-z_][A-Za-z0-9_.-]*/y;
const WHOLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function parseTemplate(src: string, budget: TemplateBudget): Part[] {
  const parts: Part[] = [];
  const lastClose = src.lastIndexOf('}}');
  let literalStart = 0;
  for (;;) {
    const open = src.indexOf('{{', literalStart);
    // A `{{` with no `}}` after it stays literal, and so does everything after it.
    if (open === -1 || open + 2 > lastClose) break;
    if (open > literalStart) parts.push(src.slice(literalStart, open));
    const cursor: Cursor = { src, pos: open + 2, budget };
    parts.push(parseExpression(cursor, 1));
    literalStart = cursor.pos;
  }
  if (literalStart < src.length) parts.push(src.slice(literalStart));
  return parts;
}

/** Parses from just after `{{` to just after the matching `}}`. */
function parseExpression(cursor: Cursor, depth: number): Expr {
  if (depth > TEMPLATE_LIMITS.depth) {
    throw new TemplateFailure(`templates are nested more than ${TEMPLATE_LIMITS.depth} levels deep`);
  }
  cursor.budget.expressions -= 1;
  if (cursor.budget.expressions < 0) {
    throw new TemplateFailure(`templates hold more than ${TEMPLATE_LIMITS.expressions} expressions`);
  }
  skipWhitespace(cursor);
  NAME.lastIndex = cursor.pos;
  const name = NAME.exec(cursor.src)?.[0];
  if (name === undefined) {
    throw new TemplateFailure(`expected a variable or function name at offset ${cursor.pos}`);
  }
  cursor.pos += name.length;
  skipWhitespace(cursor);
  let expr: Expr;
  if (cursor.src[cursor.pos] === '(') {
    if (!isTemplateFunction(name)) throw new TemplateFailure(`unknown function "${name}"`);
    cursor.pos += 1;
    expr = { kind: 'call', name, args: parseArguments(cursor, depth, name) };
    skipWhitespace(cursor);
  } else {
    expr = { kind: 'name', name };
  }
  if (!cursor.src.startsWith('}}', cursor.pos)) {
    throw new TemplateFailure(`expected "}}" after "${name}" at offset ${cursor.pos}`);
  }
  cursor.pos += 2;
  return expr;
}

/** Parses from just after `(` to just after the matching `)`. */
function parseArguments(cursor: Cursor, depth: number, fn: TemplateFunction): Part[][] {
  const args: Part[][] = [];
  skipWhitespace(cursor);
  if (cursor.src[cursor.pos] === ')') {
    cursor.pos += 1;
    return args;
  }
  for (;;) {
    skipWhitespace(cursor);
    args.push(parseArgument(cursor, depth, fn));
    skipWhitespace(cursor);
    const c = cursor.src[cursor.pos];
    cursor.pos += 1;
    if (c === ')') return args;
    if (c !== ',') {
      throw new TemplateFailure(`expected "," or ")" in call to ${fn} at offset ${cursor.pos - 1}`);
    }
  }
}

function parseArgument(cursor: Cursor, depth: number, fn: TemplateFunction): Part[] {
  const { src } = cursor;
  const quote = src[cursor.pos];
  if (quote === '"' || quote === "'") return [readQuoted(cursor, quote, fn)];

  const parts: Part[] = [];
  let literalStart = cursor.pos;
  while (cursor.pos < src.length) {
    if (src.startsWith('{{', cursor.pos)) {
      if (cursor.pos > literalStart) parts.push(src.slice(literalStart, cursor.pos));
      cursor.pos += 2;
      parts.push(parseExpression(cursor, depth + 1));
      literalStart = cursor.pos;
      continue;
    }
    const c = src[cursor.pos];
    if (c === ',' || c === ')' || src.startsWith('}}', cursor.pos)) break;
    cursor.pos += 1;
  }
  const tail = src.slice(literalStart, cursor.pos).trimEnd();
  if (tail !== '') parts.push(tail);

  if (parts.length === 0) {
    throw new TemplateFailure(`empty argument in call to ${fn} (write '' for an empty string)`);
  }
  const [only] = parts;
  if (parts.length === 1 && typeof only === 'string' && WHOLE_NAME.test(only)) {
    return [{ kind: 'name', name: only }];
  }
  return parts;
}

function readQuoted(cursor: Cursor, quote: '"' | "'", fn: TemplateFunction): string {
  const { src } = cursor;
  const start = cursor.pos;
  let out = '';
  let i = start + 1;
  while (i < src.length) {
    // Plain runs are copied whole: a long argument costs one slice, not one step per character.
    let end = i;
    while (end < src.length && src[end] !== quote && src[end] !== '\\') end += 1;
    out += src.slice(i, end);
    i = end;
    if (i >= src.length) break;
    if (src[i] === quote) {
      cursor.pos = i + 1;
      return out;
    }
    if (i + 1 >= src.length) {
      out += src[i];
      i += 1;
      break;
    }
    const next = src[i + 1];
    out += next === 'n' ? '\n' : next === 'r' ? '\r' : next === 't' ? '\t' : next;
    i += 2;
  }
  throw new TemplateFailure(`unterminated string in call to ${fn} at offset ${start}`);
}

function skipWhitespace(cursor: Cursor): void {
  const { src } = cursor;
  for (;;) {
    const c = src[cursor.pos];
    if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') return;
    cursor.pos += 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

interface Evaluation {
  readonly variables: Record<string, string>;
  readonly now: () => number;
  readonly random: () => number;
  readonly budget: TemplateBudget;
}

function renderParts(parts: readonly Part[], ev: Evaluation): string {
  let out = '';
  for (const part of parts) {
    const piece = typeof part === 'string' ? part : evaluate(part, ev);
    spend(ev, piece.length);
    out += piece;
  }
  return out;
}

/** Counts characters produced; fails once the budget is spent. */
function spend(ev: Evaluation, characters: number): void {
  afford(ev, characters);
  ev.budget.characters -= characters;
}

/** Fails when producing `characters` more would overspend the budget. */
function afford(ev: Evaluation, characters: number): void {
  if (characters > ev.budget.characters) {
    throw new TemplateFailure(`template output exceeds ${TEMPLATE_LIMITS.outputLength} characters`);
  }
}

function evaluate(expr: Expr, ev: Evaluation): string {
  if (expr.kind === 'call') {
    return callFunction(
      expr.name,
      expr.args.map((arg) => renderParts(arg, ev)),
      ev,
    );
  }
  if (isTemplateFunction(expr.name)) return callFunction(expr.name, [], ev);
  const value = Object.hasOwn(ev.variables, expr.name) ? ev.variables[expr.name] : undefined;
  if (value === undefined) {
    throw new TemplateFailure(`variable "${expr.name}" is not defined`, expr.name);
  }
  return value;
}

interface FunctionSpec {
  /** Accepted argument counts. */
  readonly arity: readonly number[];
  readonly run: (args: readonly string[], ev: Evaluation) => string;
}

function fail(fn: TemplateFunction, message: string): never {
  throw new TemplateFailure(`${fn}: ${message}`);
}

function callFunction(fn: TemplateFunction, args: readonly string[], ev: Evaluation): string {
  const spec = FUNCTIONS[fn];
  if (!spec.arity.includes(args.length)) {
    const expected = spec.arity.map(String).join(' or ');
    const noun = spec.arity.length === 1 && spec.arity[0] === 1 ? 'argument' : 'arguments';
    throw new TemplateFailure(`function "${fn}" takes ${expected} ${noun}, got ${args.length}`);
  }
  ev.budget.calls -= 1;
  if (ev.budget.calls < 0) {
    throw new TemplateFailure(`templates call functions more than ${TEMPLATE_LIMITS.calls} times`);
  }
  return spec.run(args, ev);
}

const FUNCTIONS: Record<TemplateFunction, FunctionSpec> = {
  timestamp: { arity: [0], run: (_args, ev) => String(nowSeconds(ev)) },
  utc_datetime: {
    arity: [0],
    run: (_args, ev) => new Date(nowSeconds(ev) * 1000).toISOString().replace('.000Z', 'Z'),
  },
  format_timestamp: {
    arity: [2],
    run: ([value = '', format = '']) => {
      if (format.length > TEMPLATE_LIMITS.formatLength) {
        fail('format_timestamp', `the format is longer than ${TEMPLATE_LIMITS.formatLength} characters`);
      }
      const seconds = parseSeconds(value);
      if (seconds === undefined) fail('format_timestamp', `"${value}" is not a Unix timestamp in seconds`);
      return strftime(new Date(seconds * 1000), format);
    },
  },
  timestamp_offset: {
    arity: [1],
    run: ([offset = ''], ev) => {
      const seconds = parseInteger(offset);
      const result = seconds === undefined ? undefined : nowSeconds(ev) + seconds;
      if (result === undefined || !Number.isSafeInteger(result)) {
        fail('timestamp_offset', `"${offset}" is not a whole number of seconds`);
      }
      return String(result);
    },
  },
  random_int: {
    arity: [0, 2],
    run: (args, ev) => {
      if (args.length === 0) return String(pick(ev, 2 ** 31));
      const [low = '', high = ''] = args;
      const a = parseInteger(low);
      const b = parseInteger(high);
      if (a === undefined || b === undefined) fail('random_int', 'bounds must be whole numbers');
      if (a > b) fail('random_int', `lower bound ${a} is greater than upper bound ${b}`);
      return String(a + pick(ev, b - a + 1));
    },
  },
  random_string: {
    arity: [1],
    run: ([size = ''], ev) => {
      const n = parseInteger(size);
      if (n === undefined || n < 0 || n > TEMPLATE_LIMITS.randomStringLength) {
        fail(
          'random_string',
          `length must be a whole number from 0 to ${TEMPLATE_LIMITS.randomStringLength}`,
        );
      }
      afford(ev, n);
      return randomAlphanumeric(ev, n);
    },
  },
  uuid: { arity: [0], run: (_args, ev) => uuidV4(ev) },
  encode_base64: { arity: [1], run: ([value = '']) => Buffer.from(value, 'utf8').toString('base64') },
  decode_base64: { arity: [1], run: ([value = '']) => decodeBase64(value) },
  md5: { arity: [1], run: ([value = '']) => createHash('md5').update(value, 'utf8').digest('hex') },
  sha1: { arity: [1], run: ([value = '']) => createHash('sha1').update(value, 'utf8').digest('hex') },
  sha256: { arity: [1], run: ([value = '']) => createHash('sha256').update(value, 'utf8').digest('hex') },
  hmac_sha1: {
    arity: [2],
    run: ([value = '', key = '']) => createHmac('sha1', key).update(value, 'utf8').digest('hex'),
  },
  hmac_sha256: {
    arity: [2],
    run: ([value = '', key = '']) => createHmac('sha256', key).update(value, 'utf8').digest('hex'),
  },
  url_encode: {
    arity: [1],
    run: ([value = '']) => {
      try {
        return encodeURIComponent(value);
      } catch {
        return fail('url_encode', 'value contains an unpaired surrogate');
      }
    },
  },
};

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const ALPHANUMERIC_CODES = Buffer.from(ALPHANUMERIC, 'latin1');

const POOL_SIZE = 6 * 1024;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

/** A number in [0, 1) with 48 random bits, drawn from a pooled cryptographic source. */
function secureRandom(): number {
  if (poolOffset + 6 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const value = pool.readUIntBE(poolOffset, 6);
  poolOffset += 6;
  return value / 2 ** 48;
}

/**
 * `n` letters and digits. From the default source it takes one random byte per character (bytes
 * past the largest multiple of 62 are drawn again), which is much faster than a draw per character.
 */
function randomAlphanumeric(ev: Evaluation, n: number): string {
  const codes = Buffer.allocUnsafe(n);
  if (ev.random === secureRandom) {
    let filled = 0;
    while (filled < n) {
      const bytes = randomBytes(n - filled + 16);
      for (let i = 0; i < bytes.length && filled < n; i += 1) {
        const byte = bytes[i]!;
        if (byte < 248) codes[filled++] = ALPHANUMERIC_CODES[byte % 62]!;
      }
    }
  } else {
    for (let i = 0; i < n; i += 1) codes[i] = ALPHANUMERIC.charCodeAt(pick(ev, ALPHANUMERIC.length));
  }
  return codes.toString('latin1');
}

/** A whole number in [0, n). Tolerates a `random` that strays outside [0, 1). */
function pick(ev: Evaluation, n: number): number {
  const r = ev.random();
  const x = Number.isFinite(r) && r > 0 ? Math.floor(r * n) : 0;
  return Math.min(x, n - 1);
}

function nowSeconds(ev: Evaluation): number {
  return Math.floor(ev.now() / 1000);
}

function parseInteger(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Whole or fractional seconds within the range of a JS Date; the fraction is dropped. */
function parseSeconds(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[+-]?\d+(\.\d+)?$/.test(trimmed)) return undefined;
  const seconds = Math.floor(Number(trimmed));
  return Math.abs(seconds) <= 8.64e12 ? seconds : undefined;
}

function uuidV4(ev: Evaluation): string {
  const bytes = Array.from({ length: 16 }, () => pick(ev, 256));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Standard or URL-safe alphabet, padding optional, whitespace ignored; the result must be UTF-8. */
function decodeBase64(value: string): string {
  const compact = value.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  const body = compact.replace(/={1,2}$/, '');
  const padded = body.length !== compact.length;
  if (!/^[A-Za-z0-9+/]*$/.test(body) || body.length % 4 === 1 || (padded && compact.length % 4 !== 0)) {
    fail('decode_base64', 'value is not valid base64');
  }
  try {
    return UTF8.decode(Buffer.from(body, 'base64'));
  } catch {
    return fail('decode_base64', 'decoded bytes are not valid UTF-8');
  }
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function dayOfYear(date: Date): number {
  const start = new Date(0);
  start.setUTCFullYear(date.getUTCFullYear(), 0, 1);
  const midnight = new Date(0);
  midnight.setUTCFullYear(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return Math.round((midnight.getTime() - start.getTime()) / 86_400_000) + 1;
}

function directive(date: Date, d: string): string | undefined {
  const year = date.getUTCFullYear();
  const hour = date.getUTCHours();
  switch (d) {
    case 'Y':
      return year >= 0 ? pad(year, 4) : `-${pad(-year, 4)}`;
    case 'y':
      return pad(((year % 100) + 100) % 100, 2);
    case 'm':
      return pad(date.getUTCMonth() + 1, 2);
    case 'd':
      return pad(date.getUTCDate(), 2);
    case 'H':
      return pad(hour, 2);
    case 'I':
      return pad(hour % 12 === 0 ? 12 : hour % 12, 2);
    case 'p':
      return hour < 12 ? 'AM' : 'PM';
    case 'M':
      return pad(date.getUTCMinutes(), 2);
    case 'S':
      return pad(date.getUTCSeconds(), 2);
    case 'j':
      return pad(dayOfYear(date), 3);
    case 'b':
      return MONTHS[date.getUTCMonth()]?.slice(0, 3);
    case 'B':
      return MONTHS[date.getUTCMonth()];
    case 'a':
      return WEEKDAYS[date.getUTCDay()]?.slice(0, 3);
    case 'A':
      return WEEKDAYS[date.getUTCDay()];
    case 's':
      return String(Math.floor(date.getTime() / 1000));
    case 'z':
      return '+0000';
    case 'Z':
      return 'UTC';
    case '%':
      return '%';
    default:
      return undefined;
  }
}

function strftime(date: Date, format: string): string {
  // Each directive is worked out once per call, however often the format repeats it.
  const known = new Map<string, string | undefined>();
  let out = '';
  let i = 0;
  while (i < format.length) {
    const percent = format.indexOf('%', i);
    if (percent === -1) return out + format.slice(i);
    out += format.slice(i, percent);
    const d = format[percent + 1];
    let piece = d === undefined ? undefined : known.get(d);
    if (piece === undefined && d !== undefined) {
      piece = directive(date, d);
      known.set(d, piece);
    }
    if (piece === undefined) {
      fail(
        'format_timestamp',
        d === undefined ? 'format ends with a lone "%"' : `unsupported directive "%${d}"`,
      );
    }
    out += piece;
    i = percent + 2;
  }
  return out;
}
