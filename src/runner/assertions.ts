/**
 * Evaluating a step's assertions and extracting its variables (DESIGN §4): template the property
 * and the target, read the source, compare. Pure; results are plain data.
 */
import { Buffer } from 'node:buffer';
import type { Assertion, Variable } from '../domain/assertions.js';
import { compare } from '../domain/comparisons/index.js';
import type { AssertionResult, VariableResult } from '../domain/results.js';
import { describeLocation, type ParseCache, readSource, type ResponseSubject } from './extract.js';

/** Renders one template with the run's variables. */
export type Render = (text: string) => { ok: true; value: string } | { ok: false; error: string };

/** Longest string kept in an `actual_value`; longer ones are cut and end with "…". */
export const ACTUAL_TEXT_LIMIT = 10_000;
/** Levels of nesting kept in an `actual_value`; deeper objects and arrays become "…". */
export const ACTUAL_DEPTH_LIMIT = 64;

export function evaluateAssertion(
  assertion: Assertion,
  subject: ResponseSubject,
  render: Render,
  cache?: ParseCache,
): AssertionResult {
  const result = (
    property: string,
    target: string | number,
    outcome: { pass: boolean; actual?: unknown; error?: string },
  ): AssertionResult => ({
    result: outcome.pass ? 'pass' : 'fail',
    source: assertion.source,
    property,
    comparison: assertion.comparison,
    target_value: target,
    actual_value: toJsonSafe(outcome.actual),
    error: outcome.error ?? null,
  });

  const property = render(assertion.property);
  if (!property.ok)
    return result(assertion.property, assertion.value, { pass: false, error: property.error });
  const target =
    typeof assertion.value === 'string'
      ? render(assertion.value)
      : { ok: true as const, value: assertion.value };
  if (!target.ok) return result(property.value, assertion.value, { pass: false, error: target.error });

  const read = readSource(assertion.source, property.value, subject, cache);
  if (!read.ok) return result(property.value, target.value, { pass: false, error: read.error });
  let verdict: { pass: boolean; error?: string };
  try {
    verdict = compare(assertion.comparison, read.value, target.value);
  } catch (err) {
    verdict = {
      pass: false,
      error: `comparison failed: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  return result(property.value, target.value, { ...verdict, actual: read.value });
}

/**
 * Reads a variable's value as text: strings as they are, numbers and booleans as `String()` writes
 * them, `null`, objects and arrays as compact JSON. A missing value fails the variable.
 */
export function extractVariable(
  variable: Variable,
  subject: ResponseSubject,
  render: Render,
  cache?: ParseCache,
): VariableResult {
  const result = (property: string, value: string | null, error: string | null): VariableResult => ({
    result: error === null ? 'pass' : 'fail',
    source: variable.source,
    property,
    name: variable.name,
    value,
    error,
  });

  const property = render(variable.property);
  if (!property.ok) return result(variable.property, null, property.error);
  const read = readSource(variable.source, property.value, subject, cache);
  if (!read.ok) return result(property.value, null, read.error);
  if (read.value === undefined) {
    return result(property.value, null, `${describeLocation(variable.source, property.value)} not found`);
  }
  const text = variableText(read.value);
  return text === undefined
    ? result(property.value, null, 'value cannot be written as text')
    : result(property.value, text, null);
}

function variableText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * The value read, as JSON data for a result: a missing value becomes `null`, a non-finite number
 * its text (`"NaN"`), bytes their UTF-8 text; strings over {@link ACTUAL_TEXT_LIMIT} characters are
 * cut. Objects are rebuilt from their own entries, so a key named `__proto__` stays a plain key.
 */
export function toJsonSafe(value: unknown, depth = 0): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return capText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'boolean') return value;
  if (Buffer.isBuffer(value)) return capText(value.toString('utf8'));
  if (typeof value === 'object') {
    if (depth >= ACTUAL_DEPTH_LIMIT) return '…';
    if (Array.isArray(value)) return value.map((item: unknown) => toJsonSafe(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toJsonSafe(item, depth + 1)]));
  }
  return capText(String(value));
}

function capText(text: string): string {
  if (text.length <= ACTUAL_TEXT_LIMIT) return text;
  const code = text.charCodeAt(ACTUAL_TEXT_LIMIT - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? ACTUAL_TEXT_LIMIT - 1 : ACTUAL_TEXT_LIMIT;
  return `${text.slice(0, end)}…`;
}
