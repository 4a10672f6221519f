import type { Assertion, Variable } from '../../domain/assertions.js';
import type { AssertionResult, StepResult, VariableResult } from '../../domain/results.js';
import type { EmbeddedStep } from '../../domain/steps.js';
import { evaluateAssertion, extractVariable } from '../assertions.js';
import type { RunContext } from '../context.js';
import type { ParseCache, ResponseSubject } from '../extract.js';

/** Extracts the variables (into the run's variables) and returns their results. */
export function extractVariables(
  ctx: RunContext,
  variables: readonly Variable[],
  subject: ResponseSubject,
  cache: ParseCache,
): VariableResult[] {
  const render = (text: string) => ctx.render(text);
  return variables.map((variable) => {
    const result = extractVariable(variable, subject, render, cache);
    if (result.result === 'pass' && result.value !== null) ctx.variables[variable.name] = result.value;
    return result;
  });
}

export function evaluateAssertions(
  ctx: RunContext,
  assertions: readonly Assertion[],
  subject: ResponseSubject,
  cache: ParseCache,
): AssertionResult[] {
  const render = (text: string) => ctx.render(text);
  return assertions.map((assertion) => evaluateAssertion(assertion, subject, render, cache));
}

/** A step result with nothing run yet; step files fill in what they did. */
export function emptyResult(
  ctx: RunContext,
  step: EmbeddedStep | { id: string; step_type: 'condition' },
): StepResult {
  const now = ctx.nowSeconds();
  return {
    uuid: step.id,
    step_type: step.step_type,
    result: 'pass',
    method: null,
    url: null,
    note: '',
    error: null,
    assertions: [],
    scripts: [],
    variables: [],
    response_status_code: null,
    response_time_ms: null,
    response_size_bytes: null,
    timings: null,
    started_at: now,
    finished_at: now,
    request: null,
    response: null,
  };
}

/** Sets the step's result from what it holds: any error, failed assertion, script or variable fails it. */
export function settle(ctx: RunContext, result: StepResult): StepResult {
  if (result.result !== 'skipped') {
    const failed =
      result.error !== null ||
      result.assertions.some((a) => a.result === 'fail') ||
      result.scripts.some((s) => s.result === 'fail') ||
      result.variables.some((v) => v.result === 'fail');
    result.result = failed ? 'fail' : 'pass';
  }
  result.finished_at = ctx.nowSeconds();
  return result;
}
