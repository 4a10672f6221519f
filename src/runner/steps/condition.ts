import { compare } from '../../domain/comparisons/index.js';
import type { StepResult } from '../../domain/results.js';
import type { ConditionStep } from '../../domain/steps.js';
import type { RunContext } from '../context.js';
import { emptyResult, settle } from './checks.js';

/**
 * Evaluates a condition: both sides templated, then compared. Answers the step result and whether
 * the embedded steps run; the engine runs them (or records them as skipped).
 */
export function evaluateCondition(
  ctx: RunContext,
  step: ConditionStep,
): { result: StepResult; taken: boolean } {
  const result = emptyResult(ctx, step);
  const left = ctx.render(step.left_value);
  if (!left.ok) {
    result.error = `left_value: ${left.error}`;
    return { result: settle(ctx, result), taken: false };
  }
  const right = ctx.render(step.right_value);
  if (!right.ok) {
    result.error = `right_value: ${right.error}`;
    return { result: settle(ctx, result), taken: false };
  }
  const outcome = compare(step.comparison, left.value, right.value);
  const taken = outcome.pass && outcome.error === undefined;
  const count = step.steps.length;
  result.note =
    `${JSON.stringify(left.value)} ${step.comparison} ${JSON.stringify(right.value)} is ${taken}: ` +
    (taken
      ? `ran ${count} embedded step${count === 1 ? '' : 's'}`
      : `skipped ${count} embedded step${count === 1 ? '' : 's'}`);
  return { result: settle(ctx, result), taken };
}
