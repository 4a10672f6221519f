import type { StepResult } from '../../domain/results.js';
import type { PartnerInspectorStep } from '../../domain/steps.js';
import type { RunContext } from '../context.js';
import { emptyResult, settle } from './checks.js';
import { exposeOutcome } from './response-like.js';

/** Runs a browser test in the partner tool configured by the integration and exposes its outcome. */
export async function runPartnerInspectorStep(
  ctx: RunContext,
  step: PartnerInspectorStep,
): Promise<StepResult> {
  const result = emptyResult(ctx, step);
  result.method = 'BROWSER';
  if (!ctx.partner) {
    result.error = 'browser tests cannot run here: no partner integration is available';
    return settle(ctx, result);
  }
  if (!step.integration_id) {
    result.error = 'integration_id: the step names no integration';
    return settle(ctx, result);
  }
  let startUrl: string | null = null;
  if (step.is_custom_start_url) {
    const rendered = ctx.render(step.start_url);
    if (!rendered.ok) {
      result.error = `start_url: ${rendered.error}`;
      return settle(ctx, result);
    }
    startUrl = rendered.value;
  }
  result.url = startUrl ?? step.test_id;
  const started = ctx.clock.now();
  try {
    const outcome = await ctx.partner.execute(
      {
        integration_id: step.integration_id,
        suite_id: step.suite_id,
        test_id: step.test_id,
        start_url: startUrl,
        bucket_key: ctx.definition.bucket.key,
      },
      ctx.signal,
    );
    result.note = `browser test ${step.test_id}: ${outcome.passed ? 'passed' : 'failed'}${outcome.url ? ` (${outcome.url})` : ''}`;
    await exposeOutcome(
      ctx,
      result,
      { passed: outcome.passed, document: outcome.result, timeMs: ctx.clock.now() - started },
      step,
    );
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
  }
  return settle(ctx, result);
}
