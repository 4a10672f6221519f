import type { AssertionResult, StepResult, VariableResult } from '../../domain/results.js';
import type { EmbeddedStep } from '../../domain/steps.js';
import { type CheckList, type CheckResult, evaluateChecks, needsThread, unfinished } from '../check-batch.js';
import type { RunContext } from '../context.js';
import type { ParseCache, ResponseSubject } from '../extract.js';

export interface CheckResults {
  variables: VariableResult[];
  assertions: AssertionResult[];
}

/**
 * The checks of one step over its response, in one or two parts (variables, then assertions after
 * the post-response scripts). Checks that cannot take long run inline; the others run in a check
 * thread (check-batch.ts, `needsThread`), and all of a step's parts there share one time budget,
 * `checkTimeMs`. A check that runs out of it (or of memory) fails with `error` naming it, as does
 * the step; the checks after it are not evaluated.
 */
export class StepChecks {
  /** Why a check stopped halfway; the step's error. */
  error: string | null = null;
  private spentMs = 0;
  private readonly cache: ParseCache = {};

  constructor(
    private readonly ctx: RunContext,
    private readonly subject: ResponseSubject,
  ) {}

  async run(checks: CheckList): Promise<CheckResults> {
    const { ctx, subject } = this;
    const results: CheckResults = { variables: [], assertions: [] };
    const found: (CheckResult | undefined)[] = [];
    const report = (result: CheckResult) => {
      found[result.index] = result;
    };
    if (!needsThread(checks, subject)) {
      evaluateChecks(
        checks,
        subject,
        ctx.variables,
        (text) => ctx.render(text),
        report,
        undefined,
        this.cache,
      );
    } else if (this.error === null) {
      const outcome = await ctx.checks.run(
        {
          checks,
          subject,
          values: { ...ctx.variables },
          nowMs: ctx.clock.now(),
          budget: { ...ctx.templates },
        },
        { limitMs: ctx.limits.checkTimeMs, leftMs: Math.max(1, ctx.limits.checkTimeMs - this.spentMs) },
        (result) => {
          if (result.kind === 'variable' && result.result.result === 'pass' && result.result.value !== null) {
            ctx.variables[result.result.name] = result.result.value;
          }
          report(result);
        },
        ctx.signal,
      );
      this.spentMs += outcome.elapsedMs;
      if (!outcome.complete) {
        this.error = outcome.error;
        found[outcome.index] ??= unfinished(checks, outcome.index, outcome.error);
      }
    }
    const total = checks.variables.length + checks.assertions.length;
    for (let index = 0; index < total; index += 1) {
      const result = found[index] ?? unfinished(checks, index, `not evaluated (${this.error})`);
      if (result?.kind === 'variable') results.variables.push(result.result);
      else if (result?.kind === 'assertion') results.assertions.push(result.result);
    }
    return results;
  }
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
