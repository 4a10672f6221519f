import type { StepResult } from '../../domain/results.js';
import type { SubtestStep } from '../../domain/steps.js';
import type { RunContext } from '../context.js';
import { emptyResult, settle } from './checks.js';
import { exposeOutcome } from './response-like.js';

/** Runs another test inline with its own variables; a cycle or too deep nesting fails the step. */
export async function runSubtestStep(ctx: RunContext, step: SubtestStep): Promise<StepResult> {
  const result = emptyResult(ctx, step);
  result.method = 'SUBTEST';
  if (!ctx.subtests) {
    result.error = 'subtests cannot run here';
    return settle(ctx, result);
  }
  const params: Record<string, string> = {};
  for (const param of step.params) {
    const rendered = ctx.render(param.value);
    if (!rendered.ok) {
      result.error = `params.${param.name}: ${rendered.error}`;
      return settle(ctx, result);
    }
    params[param.name] = rendered.value;
  }
  if (ctx.chain.length > ctx.limits.maxSubtestDepth) {
    result.error = `subtests nest deeper than ${ctx.limits.maxSubtestDepth} levels`;
    return settle(ctx, result);
  }
  const child = await ctx.subtests.resolve(step, ctx.definition, params);
  if ('error' in child) {
    result.error = child.error;
    return settle(ctx, result);
  }
  result.url = child.test.name;
  if (ctx.chain.includes(child.test.id)) {
    result.error = `subtest cycle: test ${child.test.id} is already running in this run (${[...ctx.chain, child.test.id].join(' → ')})`;
    return settle(ctx, result);
  }
  const outcome = await ctx.runChild(child, [...ctx.chain, child.test.id]);
  result.subtest_run_id = (await ctx.subtests.record?.(child, outcome, ctx.definition)) ?? null;
  result.note = `subtest "${child.test.name}" with environment "${child.environment.name}": ${outcome.result}`;
  await exposeOutcome(
    ctx,
    result,
    {
      passed: outcome.result === 'pass',
      document: outcome.variables,
      timeMs: (outcome.finished_at - outcome.started_at) * 1000,
    },
    step,
  );
  return settle(ctx, result);
}
