/**
 * Shared value handling for comparisons: how an actual value reads as text, how text reads as a
 * number, and the result every comparison returns. Pure, no I/O.
 */

/** What one comparison decides; `error` says why a comparison could not be made. */
export interface ComparisonResult {
  pass: boolean;
  error?: string;
}

/** One comparison: the value read from the response (or a template) against the assertion's target. */
export type Comparator = (actual: unknown, target: string | number) => ComparisonResult;

export const PASS: ComparisonResult = Object.freeze({ pass: true });
export const FAIL: ComparisonResult = Object.freeze({ pass: false });

export function verdict(pass: boolean): ComparisonResult {
  return pass ? PASS : FAIL;
}

export function failure(error: string): ComparisonResult {
  return { pass: false, error };
}

/**
 * The text a value compares as:
 * - a missing value (`undefined`) reads as `""`;
 * - `null` reads as `"null"`, its JSON text;
 * - strings as they are (no trimming); numbers and booleans as `String()` writes them (`200` → `"200"`);
 * - objects and arrays as their compact JSON text (`{"a":1}`, `[1,2]`).
 */
export function toComparableString(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (typeof value === 'object') return JSON.stringify(value) ?? '';
  return String(value);
}

/** Decimal notation only: `12`, `-1.5`, `.5`, `1.`, `1e3`. No hex, no `Infinity`, no separators. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The number a value stands for, or `undefined` when it is not one: a finite number, or a string
 * holding a decimal number after trimming whitespace (`" 1.000 "` → `1`). Booleans, `null`, empty
 * strings, objects and arrays are not numbers.
 */
export function parseNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!DECIMAL.test(text)) return undefined;
  const parsed = Number(text);
  return Number.isFinite(parsed) ? parsed : undefined;
}

const DESCRIBE_LIMIT = 100;

/** A short, quoted rendering of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(toComparableString(value));
  return text.length > DESCRIBE_LIMIT ? `${text.slice(0, DESCRIBE_LIMIT - 4)}…"` : text;
}

/** True for a plain JSON object (not `null`, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses both sides as numbers and applies `test`; fails with an error naming the side that is
 * not a number.
 */
export function compareNumbers(
  actual: unknown,
  target: string | number,
  test: (actual: number, target: number) => boolean,
): ComparisonResult {
  const a = parseNumber(actual);
  if (a === undefined) return failure(`actual value ${describeValue(actual)} is not a number`);
  const t = parseNumber(target);
  if (t === undefined) return failure(`target value ${describeValue(target)} is not a number`);
  return verdict(test(a, t));
}
