import { type Static, Type } from '@sinclair/typebox';
import type { AssertionInput, VariableInput } from '../domain/assertions.js';
import { VARIABLE_NAME_PATTERN } from '../domain/assertions.js';
import { EnvironmentInput } from '../domain/environments.js';
import { HEADER_NAME_PATTERN } from '../domain/schema.js';
import { LIMITS, StepInput } from '../domain/steps.js';

/**
 * What every importer hands back: tests in the form `POST …/tests` accepts (a test with its own
 * environments and steps), and notes for the person importing (what was not translated, and why).
 */

/** A request step as an importer writes it: the fields of a request step write. */
export interface ImportedRequestStep {
  step_type: 'request';
  method: string;
  url: string;
  headers?: Record<string, string[]>;
  body?: string;
  form?: Record<string, string | string[]>;
  auth?: { auth_type: 'basic'; username: string; password: string } | ImportedOAuth1;
  assertions?: AssertionInput[];
  variables?: VariableInput[];
  scripts?: string[];
  before_scripts?: string[];
  note?: string;
}

interface ImportedOAuth1 {
  auth_type: 'oauth_1';
  consumer_key: string;
  consumer_secret: string;
  access_token: string;
  token_secret: string;
  signature_type: 'auth_header' | 'body' | 'query';
}

export interface ImportedTest {
  name: string;
  description?: string | null;
  environments?: { name: string; initial_variables?: Record<string, string> }[];
  /** Request steps for the importers of this module; a Vigil or Runscope export may carry any step type. */
  steps: ImportedRequestStep[] | StepInput[];
}

export interface ImportResult {
  tests: ImportedTest[];
  /** Remarks on the whole file; remarks on one step are in that step's `note` as well. */
  notes: string[];
}

/** The shape every imported test must have before it is created (as `POST …/tests` checks it). */
export const ImportedTestSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
  environments: Type.Optional(Type.Union([Type.Array(EnvironmentInput, { maxItems: 100 }), Type.Null()])),
  steps: Type.Array(StepInput, { maxItems: LIMITS.stepsPerTest }),
});
export type ImportedTestInput = Static<typeof ImportedTestSchema>;

export const IMPORT_LIMITS = {
  /** Characters of the file given (a string, or the JSON text of an object). */
  contentLength: 5_000_000,
  /** Levels of objects and arrays in a file given as JSON. */
  depth: 100,
  tests: 100,
  messages: 50,
} as const;

const variableName = new RegExp(VARIABLE_NAME_PATTERN);
const headerName = new RegExp(HEADER_NAME_PATTERN);

export function isVariableName(name: string): boolean {
  return variableName.test(name);
}

export function isHeaderName(name: string): boolean {
  return headerName.test(name);
}

/** A variable name made from any text: unusable characters become `_`, at most 100 characters. */
export function toVariableName(text: string, fallback = 'value'): string {
  let name = text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100);
  if (!/^[A-Za-z_]/.test(name)) name = `_${name}`.slice(0, 100);
  return isVariableName(name) && name !== '_' ? name : fallback;
}

/** A JSON path in the runner's syntax (`data.items[0].id`, `["a b"]`) from keys and indexes. */
export function jsonPath(segments: readonly (string | number)[]): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) path += path ? `.${segment}` : segment;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

/** Adds a header value to a header map (names kept as written). */
export function addHeader(headers: Record<string, string[]>, name: string, value: string): void {
  const existing = Object.keys(headers).find((n) => n.toLowerCase() === name.toLowerCase());
  if (existing) headers[existing]!.push(value);
  else headers[name] = [value];
}

/** Notes joined into a step note, within the step note limit. */
export function stepNote(title: string, remarks: readonly string[]): string {
  const text = remarks.length ? `${title}${title ? ' — ' : ''}${remarks.join('; ')}` : title;
  return text.length > LIMITS.noteLength ? `${text.slice(0, LIMITS.noteLength - 1)}…` : text;
}

/** A test name within the name limit. */
export function testName(name: string, fallback: string): string {
  const text = name.trim() || fallback;
  return text.length > 255 ? `${text.slice(0, 254)}…` : text;
}

/** Splits a test whose steps exceed the per-test limit into parts named "… (part N)". */
export function withinStepLimit(tests: readonly ImportedTest[]): ImportedTest[] {
  const out: ImportedTest[] = [];
  for (const test of tests) {
    if (test.steps.length <= LIMITS.stepsPerTest) {
      out.push(test);
      continue;
    }
    for (let i = 0, part = 1; i < test.steps.length; i += LIMITS.stepsPerTest, part += 1) {
      out.push({
        ...test,
        name: testName(`${test.name.slice(0, 240)} (part ${part})`, 'Imported'),
        steps: test.steps.slice(i, i + LIMITS.stepsPerTest) as ImportedTest['steps'],
      });
    }
  }
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Whether a JSON value nests objects and arrays deeper than `max` levels (counted without recursion). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  let visited = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    // A document of millions of nodes is refused by its size elsewhere; stop counting early.
    if ((visited += 1) > 2_000_000) return false;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
