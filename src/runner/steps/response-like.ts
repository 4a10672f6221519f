import type { Assertion, Variable } from '../../domain/assertions.js';
import type { StepResult } from '../../domain/results.js';
import { bodyRecord } from '../bodies.js';
import type { RunContext } from '../context.js';
import type { ResponseSubject } from '../extract.js';
import { StepChecks } from './checks.js';

/**
 * Subtest and partner-inspector steps expose their outcome as a response (DESIGN §4): status 200
 * when it passed, 500 when it failed, the JSON document as body. Their variables and assertions
 * read it like any response. A step without assertions fails when the outcome failed.
 */
export async function exposeOutcome(
  ctx: RunContext,
  result: StepResult,
  outcome: { passed: boolean; document: unknown; timeMs: number },
  checks: { assertions: readonly Assertion[]; variables: readonly Variable[] },
): Promise<void> {
  const status = outcome.passed ? 200 : 500;
  const body = Buffer.from(JSON.stringify(outcome.document ?? null), 'utf8');
  const headers = { 'content-type': ['application/json'] };
  const timeMs = Math.round(outcome.timeMs * 1000) / 1000;
  result.response_status_code = status;
  result.response_time_ms = timeMs;
  result.response_size_bytes = body.length;
  result.response = {
    status,
    reason: outcome.passed ? 'OK' : 'Internal Server Error',
    headers,
    ...bodyRecord(body, ctx.limits.maxBodyBytes),
  };
  const subject: ResponseSubject = { status, headers, body, timeMs, sizeBytes: body.length };
  const stepChecks = new StepChecks(ctx, subject);
  ({ variables: result.variables, assertions: result.assertions } = await stepChecks.run(checks));
  result.error ??= stepChecks.error;
  if (checks.assertions.length === 0 && !outcome.passed && result.error === null) {
    result.error = 'the run it started failed';
  }
}
