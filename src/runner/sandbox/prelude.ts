/**
 * Code that runs inside QuickJS, not in Node: `npm run build` bundles it after Chai into
 * dist/sandbox/prelude.js (scripts/build-sandbox.mjs). Evaluating the bundle leaves one function,
 * `__vigilInstall`, on the global object; the engine calls it once per context. It installs the
 * script globals, hardens the realm (every reachable built-in and prelude object frozen, the global
 * object included) and returns `prepare`, which turns one job into a session the engine drives.
 *
 * Nothing of the host is ever put into the realm: data goes in as a JSON string and comes back as
 * one. A hardened realm is what lets one warm context serve many jobs: a script can change nothing
 * that a later script could see, and everything a job gets (request, response, variables, log) is
 * created for that job alone.
 */

/** What the engine passes in, as JSON. */
interface SessionInput {
  variables: Record<string, string>;
  request: Record<string, unknown> | null;
  requestWritable: boolean;
  response: Record<string, unknown> | null;
  outputBytes: number;
}

/** What `finish` hands back, as JSON. */
interface SessionOutput {
  error: string | null;
  limit: 'memory' | 'stack' | null;
  output: string;
  /** The variables the script set (the host adds them to the job's own). */
  variables: Record<string, string>;
  request?: unknown;
}

/** Phases the engine calls in order: run the script, then collect with or without the request. */
const RUN = 1;
const FINISH = 2;
const FINISH_WITHOUT_REQUEST = 3;

type Session = (phase: number) => string | undefined;

interface ChaiExports {
  assert: object;
  AssertionError: new (...args: never[]) => Error;
  Assertion: object;
}

const PARAMETERS = 'request,response,variables,log,assert,encode_base64,decode_base64';
/** Characters of script text whose compiled functions a context keeps. */
const COMPILED_LENGTH = 64 * 1024;
const MEMORY_MESSAGE = 'script exceeded its memory limit';
const STACK_MESSAGE = 'script exceeded its stack limit (too much recursion)';

// The realm's own built-ins, taken when the bundle is evaluated: before any script runs, and before
// hardening freezes them in place.
const realm = globalThis as unknown as Record<string, unknown>;
const { defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf, keys } = Object;
const ownKeys = Reflect.ownKeys;
const evaluate = realm.eval as (source: string) => unknown;
const { stringify, parse } = JSON;
const objectToString = Object.prototype.toString;

type Outcome = { error: string | null; limit: SessionOutput['limit'] };

/** Installs the script globals, hardens the realm and returns `prepare`. */
function install(): (code: string, input: string) => Session {
  const chai = takeChai();
  installGlobals(chai);
  const brands = brandChecks();
  allowOverrides(realm);
  hardenAll(hiddenIntrinsics(realm, chai), brands);
  return preparer(chai.AssertionError);
}

/** Takes Chai's exports off the global object, with everything else a script must not find there. */
function takeChai(): ChaiExports {
  const chai = realm.__vigilChai as ChaiExports;
  delete realm.__vigilChai;
  delete realm.__vigilInstall;
  // Their callbacks run at garbage-collection time, which could fall inside a later job.
  delete realm.WeakRef;
  delete realm.FinalizationRegistry;
  return chai;
}

type PassCheck = (first: unknown, second: unknown) => boolean;

const bothNumbers = (a: unknown, b: unknown): boolean => typeof a === 'number' && typeof b === 'number';
/** `==` and `!=` between these run no code of the script (no `valueOf`, no `toString`). */
const primitive = (value: unknown): boolean =>
  value === null || (typeof value !== 'object' && typeof value !== 'function');

/**
 * Conditions under which common `assert` functions pass, checked before Chai. Each one implies that
 * Chai's own check passes and runs no code of the script, so a passing call skips building Chai's
 * assertion chain (20 to 30 µs each in QuickJS, more than the rest of a short script); any other
 * call, every failing one included, goes to Chai with the same arguments and gets Chai's message.
 */
const PASSES: Record<string, PassCheck> = {
  isOk: (value) => !!value,
  ok: (value) => !!value,
  isNotOk: (value) => !value,
  notOk: (value) => !value,
  isTrue: (value) => value === true,
  isFalse: (value) => value === false,
  isNotTrue: (value) => value !== true,
  isNotFalse: (value) => value !== false,
  isNull: (value) => value === null,
  isNotNull: (value) => value !== null,
  isUndefined: (value) => value === undefined,
  isDefined: (value) => value !== undefined,
  isString: (value) => typeof value === 'string',
  isNumber: (value) => typeof value === 'number',
  isBoolean: (value) => typeof value === 'boolean',
  // Chai's `equal` is `==`, and `notEqual` is `!=`.
  equal: (actual, expected) => primitive(actual) && primitive(expected) && expected == actual,
  notEqual: (actual, expected) => primitive(actual) && primitive(expected) && expected != actual,
  strictEqual: (actual, expected) => actual === expected,
  notStrictEqual: (actual, expected) => actual !== expected,
  isAbove: (value, bound) => bothNumbers(value, bound) && (value as number) > (bound as number),
  isAtLeast: (value, bound) => bothNumbers(value, bound) && (value as number) >= (bound as number),
  isBelow: (value, bound) => bothNumbers(value, bound) && (value as number) < (bound as number),
  isAtMost: (value, bound) => bothNumbers(value, bound) && (value as number) <= (bound as number),
  include: (haystack, needle) =>
    typeof haystack === 'string' && typeof needle === 'string' && haystack.indexOf(needle) !== -1,
};

/** `assert` with the checks of {@link PASSES} in front of Chai's functions of those names. */
function withFastPasses(assert: Record<string, unknown>): void {
  for (const name of keys(PASSES)) {
    const passes = PASSES[name];
    const chaiFunction = assert[name];
    if (passes === undefined || typeof chaiFunction !== 'function') continue;
    const slow = freeze(chaiFunction as (...args: unknown[]) => unknown);
    assert[name] = function (...args: unknown[]): unknown {
      return passes(args[0], args[1]) ? undefined : slow(...args);
    };
  }
}

/** The globals every script has besides its parameters: `assert`, `encode_base64`, `decode_base64`. */
function installGlobals(chai: ChaiExports): void {
  withFastPasses(chai.assert as Record<string, unknown>);
  for (const [name, value] of [
    ['assert', chai.assert],
    ['encode_base64', encodeBase64],
    ['decode_base64', decodeBase64],
  ] as const) {
    defineProperty(realm, name, { value, writable: false, enumerable: false, configurable: false });
  }
}

/** `prepare`: one job's code and input (JSON) in, the session the engine drives out. */
function preparer(AssertionError: ChaiExports['AssertionError']) {
  const compiled = new Map<string, (...args: unknown[]) => unknown>();
  let compiledLength = 0;
  /**
   * A script's function, compiled once per context for each short script text seen recently (the
   * cache holds at most {@link COMPILED_LENGTH} characters of script, so that it never takes a
   * noticeable part of the memory a job may use).
   */
  const compile = (code: string): ((...args: unknown[]) => unknown) => {
    const known = compiled.get(code);
    if (known !== undefined) return known;
    const source = `"use strict";(function(${PARAMETERS}){"use strict";\n${code}\n})`;
    // An indirect (called through another name), strict eval: the script's declarations, even
    // ones that break out of the wrapper, stay inside it and never reach the global scope.
    const script = evaluate(source);
    if (typeof script !== 'function') throw new SyntaxError('the script is not a function body');
    // A script cannot reach its own function (strict mode has no `arguments.callee`); frozen all
    // the same, since later jobs call the same one.
    const fn = freeze(script as (...args: unknown[]) => unknown);
    if (code.length > COMPILED_LENGTH / 16) return fn;
    for (const oldest of compiled.keys()) {
      if (compiledLength + code.length <= COMPILED_LENGTH) break;
      compiled.delete(oldest);
      compiledLength -= oldest.length;
    }
    compiled.set(code, fn);
    compiledLength += code.length;
    return fn;
  };
  return function prepare(code: string, inputJson: string): Session {
    const input = parse(inputJson) as SessionInput;
    const store = new Map<string, string>();
    for (const name of keys(input.variables)) store.set(name, String(input.variables[name]));
    const { log, lines } = scriptLog(input.outputBytes);
    const changed = new Map<string, string>();
    const variables = scriptVariables(store, changed);

    let request: Record<string, unknown> | undefined;
    if (input.request !== null) request = input.requestWritable ? input.request : deepFreeze(input.request);
    const response = input.response === null ? undefined : deepFreeze(input.response);

    const outcome: Outcome = { error: null, limit: null };
    const fail = (thrown: unknown): void => {
      const described = describe(thrown, AssertionError);
      outcome.error = described.message;
      outcome.limit = described.limit;
    };

    return function session(phase: number): string | undefined {
      if (phase === RUN) {
        try {
          const script = compile(code);
          script.call(undefined, request, response, variables, log, realm.assert, encodeBase64, decodeBase64);
        } catch (thrown) {
          fail(thrown);
        }
        return undefined;
      }
      if (phase !== FINISH && phase !== FINISH_WITHOUT_REQUEST) throw new TypeError('unknown phase');
      const withRequest = phase === FINISH && input.requestWritable ? request : undefined;
      return stringify(sessionOutput(outcome, lines, changed, withRequest, fail));
    };
  };
}

/** A job's `log`: lines kept up to `limitBytes` of output, then one line saying where it was cut. */
function scriptLog(limitBytes: number): { log: (...args: unknown[]) => void; lines: string[] } {
  const lines: string[] = [];
  let outputBytes = 0;
  let outputFull = false;
  const log = freeze(function log(...args: unknown[]): void {
    if (outputFull) return;
    const line = args.map(formatLogValue).join(' ');
    const size = utf8Length(line) + 1;
    if (outputBytes + size <= limitBytes) {
      lines.push(line);
      outputBytes += size;
      return;
    }
    const room = limitBytes - outputBytes;
    if (room > 1) lines.push(utf8Prefix(line, room - 1));
    lines.push(`… output cut at ${limitBytes} bytes`);
    outputFull = true;
  });
  return { log, lines };
}

/** A job's `variables`: get and set over the job's own store; what was set is also kept in `changed`. */
function scriptVariables(store: Map<string, string>, changed: Map<string, string>) {
  return freeze({
    get(name: unknown): string | undefined {
      return store.get(String(name));
    },
    set(name: unknown, value: unknown): void {
      const key = String(name);
      const text = String(value);
      store.set(key, text);
      changed.set(key, text);
    },
  });
}

/** What `finish` hands back; `request` is the script's request when the job takes it back. */
function sessionOutput(
  outcome: Outcome,
  lines: string[],
  changed: Map<string, string>,
  request: Record<string, unknown> | undefined,
  fail: (thrown: unknown) => void,
): SessionOutput {
  const output: SessionOutput = {
    error: outcome.error,
    limit: outcome.limit,
    output: lines.join('\n'),
    variables: {},
  };
  for (const [name, value] of changed) {
    defineProperty(output.variables, name, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  if (request !== undefined) {
    try {
      output.request = parse(stringify(request)) as unknown;
    } catch (thrown) {
      fail(thrown);
      output.error = `the modified request cannot be read: ${outcome.error ?? ''}`;
      output.limit = outcome.limit;
    }
  }
  return output;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    freeze(value);
  }
  return value;
}

/** The message (and limit hit, if any) of what a script threw. */
function describe(
  error: unknown,
  AssertionError: ChaiExports['AssertionError'],
): { message: string; limit: SessionOutput['limit'] } {
  if (typeof error !== 'object' || error === null) {
    return { message: `uncaught exception: ${safeString(error)}`, limit: null };
  }
  const record = error as Record<string, unknown>;
  const name = safeString(record.name);
  const message = safeString(record.message);
  if (name === 'InternalError' && message === 'out of memory')
    return { message: MEMORY_MESSAGE, limit: 'memory' };
  if (message === 'stack overflow') return { message: STACK_MESSAGE, limit: 'stack' };
  if (error instanceof AssertionError) return { message, limit: null };
  const where = location(safeString(record.stack));
  if (name === 'SyntaxError') return { message: `syntax error: ${message}${where}`, limit: null };
  return { message: `${name}: ${message}${where}`, limit: null };
}

function location(stack: string): string {
  const match = /<input>:(\d+)(?::(\d+))?/.exec(stack);
  if (match === null) return '';
  // The wrapper takes the first line of the evaluated source.
  const line = Number(match[1]) - 1;
  if (line < 1) return '';
  return match[2] === undefined ? ` (line ${line})` : ` (line ${line}, column ${match[2]})`;
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : String(value);
  } catch {
    return '[unprintable value]';
  }
}

function formatLogValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return `${safeString(value.name)}: ${safeString(value.message)}`;
  try {
    const json = stringify(value);
    if (typeof json === 'string') return json;
  } catch {
    // Cycles and BigInts fall back to String().
  }
  return safeString(value);
}

/**
 * Freezing a prototype makes assigning an inherited name on an instance fail ("override
 * mistake"): `this.name = 'MyError'` in an Error subclass, `obj.toString = …`. For the names that
 * code commonly assigns, the data property becomes a getter and a setter that defines the
 * property on the instance, as a writable own property would have.
 */
function allowOverrides(global: Record<string, unknown>): void {
  const proto = (name: string): object => (global[name] as { prototype: object }).prototype;
  const errorNames = ['constructor', 'message', 'name', 'toString'];
  const plan: [object, string[]][] = [
    [
      Object.prototype,
      ['constructor', 'hasOwnProperty', 'isPrototypeOf', 'toLocaleString', 'toString', 'valueOf'],
    ],
    [Array.prototype, ['toString']],
    [Function.prototype, ['constructor', 'bind', 'toString']],
    [Promise.prototype, ['constructor']],
    ...['Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError']
      .concat(['InternalError', 'AggregateError'])
      .filter((name) => typeof global[name] === 'function')
      .map((name): [object, string[]] => [proto(name), errorNames]),
  ];
  for (const [target, names] of plan) {
    for (const name of names) {
      const descriptor = getOwnPropertyDescriptor(target, name);
      if (descriptor === undefined || !('value' in descriptor)) continue;
      const value: unknown = descriptor.value;
      defineProperty(target, name, {
        get: function getInherited(): unknown {
          return value;
        },
        set: function setOwn(this: unknown, replacement: unknown): void {
          if (this === target || (typeof this !== 'object' && typeof this !== 'function') || this === null) {
            throw new TypeError(`Cannot assign to read only property '${name}'`);
          }
          defineProperty(this, name, {
            value: replacement,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        },
        enumerable: descriptor.enumerable === true,
        configurable: false,
      });
    }
  }
}

/** Objects a script can reach that are not properties of anything on the global object. */
function hiddenIntrinsics(global: Record<string, unknown>, exports: ChaiExports): unknown[] {
  const found: unknown[] = [global, exports.assert, exports.AssertionError, exports.Assertion, install];
  const sample = (make: () => unknown): void => {
    try {
      found.push(getPrototypeOf(make()));
    } catch {
      // An engine without that feature has nothing to freeze.
    }
  };
  sample(() => function* generator() {});
  sample(() => async function asyncFunction() {});
  sample(() => async function* asyncGenerator() {});
  sample(() => (function* generator() {})());
  sample(() => (async function* asyncGenerator() {})());
  sample(() => [][Symbol.iterator]());
  sample(() => new Map().entries());
  sample(() => new Set().values());
  sample(() => ''[Symbol.iterator]());
  sample(() => 'a'.matchAll(/a/g));
  sample(() => (global.Iterator as { from(it: object): unknown }).from({ next: () => ({ done: true }) }));
  sample(() => ([].values() as unknown as { map(fn: () => unknown): unknown }).map(() => 0));
  sample(() => new Uint8Array(0));
  sample(() => new Proxy({}, {}));
  const strictArguments = (function strictArguments(): IArguments {
    'use strict';
    // eslint-disable-next-line prefer-rest-params
    return arguments;
  })();
  found.push(getOwnPropertyDescriptor(strictArguments, 'callee')?.get);
  found.push(getPrototypeOf(Uint8Array));
  return found;
}

type BrandChecks = Map<string, (this: unknown) => unknown>;

/** For each kind of object with mutable internal slots, a call that throws unless `this` is one. */
function brandChecks(): BrandChecks {
  return new Map<string, (this: unknown) => unknown>([
    ['Map', getter(Map.prototype, 'size')],
    ['Set', getter(Set.prototype, 'size')],
    [
      'WeakMap',
      function (this: unknown) {
        return WeakMap.prototype.has.call(this as WeakMap<object, unknown>, {});
      },
    ],
    [
      'WeakSet',
      function (this: unknown) {
        return WeakSet.prototype.has.call(this as WeakSet<object>, {});
      },
    ],
    ['Date', Date.prototype.getTime],
    ['ArrayBuffer', getter(ArrayBuffer.prototype, 'byteLength')],
    ['SharedArrayBuffer', getter((realm.SharedArrayBuffer as { prototype: object }).prototype, 'byteLength')],
    ['DataView', getter(DataView.prototype, 'byteLength')],
    ['TypedArray', getter(getPrototypeOf(Uint8Array.prototype) as object, 'length')],
  ]);
}

/** Freezes every object reachable from the roots through properties, accessors and prototypes. */
function hardenAll(roots: unknown[], brands: BrandChecks): void {
  const seen = new Set<unknown>();
  const pending = roots.slice();
  while (pending.length > 0) {
    const value = pending.pop();
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value))
      continue;
    seen.add(value);
    refuseMutableInternals(value, brands);
    freeze(value);
    pending.push(getPrototypeOf(value));
    for (const key of ownKeys(value)) {
      const descriptor = getOwnPropertyDescriptor(value, key);
      if (descriptor === undefined) continue;
      if ('value' in descriptor) pending.push(descriptor.value);
      else pending.push(descriptor.get, descriptor.set);
    }
  }
}

/** Freezing does not freeze the contents of a Map, Set, Date or buffer: none may be shared. */
function refuseMutableInternals(value: object, brands: BrandChecks): void {
  if (typeof value === 'function') return;
  // The tag is a cheap first filter; the brand check (which throws for impostors) is exact.
  const tag = objectToString.call(value).slice(8, -1);
  const probe = brands.get(
    /Array$/.test(tag) && tag !== 'Array' && tag !== 'ArrayBuffer' ? 'TypedArray' : tag,
  );
  if (probe === undefined) return;
  try {
    probe.call(value);
  } catch {
    return;
  }
  throw new TypeError(`hardening: a shared ${tag} is reachable`);
}

function getter(target: object, name: string): (this: unknown) => unknown {
  const descriptor = getOwnPropertyDescriptor(target, name);
  if (descriptor?.get === undefined) throw new TypeError(`hardening: no getter ${name}`);
  return descriptor.get;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `limit` bytes. */
function utf8Prefix(text: string, limit: number): string {
  let low = 0;
  let high = Math.min(text.length, limit);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (utf8Length(text.slice(0, middle)) <= limit) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low);
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Digit of each base64 character, the URL-safe `-` and `_` included. */
const BASE64_DIGITS: Record<string, number> = { '-': 62, _: 63 };
for (let i = 0; i < BASE64_ALPHABET.length; i++) BASE64_DIGITS[BASE64_ALPHABET.charAt(i)] = i;

function toUtf8(text: string): number[] {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
      }
    }
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
    else
      bytes.push(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 63),
        0x80 | ((code >> 6) & 63),
        0x80 | (code & 63),
      );
  }
  return bytes;
}

function fromUtf8(bytes: number[]): string {
  let text = '';
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i] as number;
    const need = lead < 0x80 ? 0 : lead >= 0xf0 && lead < 0xf5 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc2 ? 1 : -1;
    let code = need === 0 ? lead : need === 1 ? lead & 31 : need === 2 ? lead & 15 : lead & 7;
    let valid = need >= 0 && i + need < bytes.length;
    for (let k = 1; valid && k <= need; k++) {
      const next = bytes[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) valid = false;
      else code = (code << 6) | (next & 63);
    }
    if (
      !valid ||
      (need === 2 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
      (need === 3 && (code < 0x10000 || code > 0x10ffff))
    ) {
      text += '\ufffd';
      i += 1;
      continue;
    }
    text += String.fromCodePoint(code);
    i += need + 1;
  }
  return text;
}

function encodeBase64(value: unknown): string {
  const bytes = toUtf8(String(value));
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i] as number;
    const b = bytes[i + 1];
    const c = bytes[i + 2];
    const triple = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out += BASE64_ALPHABET.charAt(triple >> 18) + BASE64_ALPHABET.charAt((triple >> 12) & 63);
    out += b === undefined ? '=' : BASE64_ALPHABET.charAt((triple >> 6) & 63);
    out += c === undefined ? '=' : BASE64_ALPHABET.charAt(triple & 63);
  }
  return out;
}

function decodeBase64(value: unknown): string {
  const text = String(value).replace(/[\s=]+/g, '');
  if (text.length % 4 === 1) throw new TypeError('decode_base64: the input is not valid base64');
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text) {
    const digit = BASE64_DIGITS[char];
    if (digit === undefined) throw new TypeError('decode_base64: the input is not valid base64');
    buffer = (buffer << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  return fromUtf8(bytes);
}

(globalThis as unknown as Record<string, unknown>).__vigilInstall = install;
