/**
 * The checks of one step over one response, as one unit of work: its variables in order (each one
 * set before the next is templated), then its assertions. The same code runs inline on the caller's
 * thread and inside a check thread (check-pool.ts); which one is decided by {@link needsThread}.
 */
import type { Assertion, Source, Variable } from '../domain/assertions.js';
import type { AssertionResult, VariableResult } from '../domain/results.js';
import type { TemplateBudget } from '../domain/templates.js';
import { evaluateAssertion, extractVariable, type Render } from './assertions.js';
import type { ParseCache, ResponseSubject } from './extract.js';

export interface CheckList {
  variables: readonly Variable[];
  assertions: readonly Assertion[];
}

/** One check's result; `index` counts the variables first, then the assertions. */
export type CheckResult =
  | { index: number; kind: 'variable'; result: VariableResult }
  | { index: number; kind: 'assertion'; result: AssertionResult };

/** What a check is doing: templating its property or target, or reading and comparing. */
export const STAGE_TEMPLATE = 1;
export const STAGE_SOURCE = 2;
export type Stage = typeof STAGE_TEMPLATE | typeof STAGE_SOURCE;

/**
 * Largest body whose JSON and text checks run inline: parsing and scanning it takes well under a
 * millisecond. Larger bodies, and every XPath check, go to a check thread.
 */
export const INLINE_BODY_BYTES = 64 * 1024;

/**
 * Whether these checks can take long enough to matter: XPath always (its cost depends on the
 * expression, not only on the body), JSON and text over a body larger than {@link INLINE_BODY_BYTES}.
 * Status, time, size and headers are small and bounded, and so are templates (TEMPLATE_LIMITS).
 */
export function needsThread(checks: CheckList, subject: ResponseSubject): boolean {
  const heavy = (check: { source: Source }) => mayTakeLong(check.source, subject);
  return checks.variables.some(heavy) || checks.assertions.some(heavy);
}

/** Whether a check of `source` over `subject` may take long (see {@link needsThread}). */
export function mayTakeLong(source: Source, subject: ResponseSubject): boolean {
  if (source === 'response_xml') return true;
  return (source === 'response_json' || source === 'response_text') && bodyBytes(subject) > INLINE_BODY_BYTES;
}

function bodyBytes(subject: ResponseSubject): number {
  return typeof subject.body === 'string' ? subject.body.length : subject.body.byteLength;
}

/**
 * Evaluates the checks in order. `values` are the run's variables: a variable that passes is set
 * in it before the next check is templated. `mark` is told what each check is doing, so that one
 * stopped halfway can be named.
 */
export function evaluateChecks(
  checks: CheckList,
  subject: ResponseSubject,
  values: Record<string, string>,
  render: Render,
  report: (result: CheckResult) => void,
  mark: (index: number, stage: Stage) => void = () => undefined,
  cache: ParseCache = {},
): void {
  let index = 0;
  const marking: Render = (text) => {
    mark(index, STAGE_TEMPLATE);
    const rendered = render(text);
    mark(index, STAGE_SOURCE);
    return rendered;
  };
  for (const variable of checks.variables) {
    mark(index, STAGE_SOURCE);
    const result = extractVariable(variable, subject, marking, cache);
    if (result.result === 'pass' && result.value !== null) values[variable.name] = result.value;
    report({ index, kind: 'variable', result });
    index += 1;
  }
  for (const assertion of checks.assertions) {
    mark(index, STAGE_SOURCE);
    report({ index, kind: 'assertion', result: evaluateAssertion(assertion, subject, marking, cache) });
    index += 1;
  }
}

/** The check at `index`: a variable, or an assertion after the variables. */
export function checkAt(
  checks: CheckList,
  index: number,
): { kind: 'variable'; check: Variable } | { kind: 'assertion'; check: Assertion } | undefined {
  if (index < checks.variables.length) {
    const check = checks.variables[index];
    return check && { kind: 'variable', check };
  }
  const check = checks.assertions[index - checks.variables.length];
  return check && { kind: 'assertion', check };
}

/** How a source is named in a message about a check that ran out of time or memory. */
export function sourceLabel(source: Source): string {
  switch (source) {
    case 'response_xml':
      return 'xpath';
    case 'response_json':
      return 'json';
    case 'response_text':
      return 'text';
    case 'response_headers':
      return 'headers';
    case 'response_status':
      return 'status';
    case 'response_time':
      return 'response time';
    case 'response_size':
      return 'response size';
  }
}

/** A check that did not run to its end, recorded as failed with `error`. */
export function unfinished(checks: CheckList, index: number, error: string): CheckResult | undefined {
  const at = checkAt(checks, index);
  if (at === undefined) return undefined;
  if (at.kind === 'variable') {
    const { name, source, property } = at.check;
    return {
      index,
      kind: 'variable',
      result: { result: 'fail', source, property, name, value: null, error },
    };
  }
  const { source, property, comparison, value } = at.check;
  return {
    index,
    kind: 'assertion',
    result: {
      result: 'fail',
      source,
      property,
      comparison,
      target_value: value,
      actual_value: null,
      error,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Between the host (check-pool.ts) and a check thread (check-worker.ts)

/** What the host sends for one step: its checks, the response and the run's variables. */
export interface CheckJob {
  checks: CheckList;
  subject: ResponseSubject;
  values: Record<string, string>;
  /** The run's clock when the job was sent, for time functions in templates. */
  nowMs: number;
  /** What the step's templates may still spend. */
  budget: TemplateBudget;
}

export interface CheckRequest {
  type: 'check';
  id: number;
  job: CheckJob;
}

/**
 * A thread's answers. Results come in `results` before each check that may take long or once they
 * are some milliseconds old (so that they outlive a thread ended later), and the rest with `done`.
 */
export type CheckReply =
  | { type: 'ready' }
  | { type: 'results'; id: number; results: CheckResult[] }
  | { type: 'done'; id: number; results: CheckResult[] }
  | { type: 'failed'; id: number; message: string };

/** Slots of the shared progress array: the job id, the check index and its stage. */
export const PROGRESS_JOB = 0;
export const PROGRESS_INDEX = 1;
export const PROGRESS_STAGE = 2;
export const PROGRESS_SLOTS = 3;
