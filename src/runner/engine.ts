/**
 * The test engine: takes a run definition (test, resolved environment, variables) and hands back a
 * result. It never touches the store or the API, so the server's workers, remote agents and
 * `vigil run` all drive this same code. Semantics: DESIGN §4 and docs/runner.md.
 */
import { countersOf, type RunOutcome, type ScriptResult, type StepResult } from '../domain/results.js';
import type { ConditionStep, EmbeddedStep, Step } from '../domain/steps.js';
import {
  DEFAULT_ENGINE_LIMITS,
  type EngineLimits,
  type PartnerPort,
  RunContext,
  type RunDefinition,
  type RunEvents,
  type ScriptRunner,
  type SubtestPort,
} from './context.js';
import { type CheckRunner, sharedCheckPool } from './check-pool.js';
import { type HttpSession, type HttpSessionOptions, openHttpSession } from '../net/client.js';
import type { EgressPolicy } from '../net/egress.js';
import { emptyResult } from './steps/checks.js';
import { evaluateCondition } from './steps/condition.js';
import { runPartnerInspectorStep } from './steps/partner-inspector.js';
import { realSleep, runPauseStep, type Sleep } from './steps/pause.js';
import { runRequestStep, scriptResult } from './steps/request.js';
import { runSubtestStep } from './steps/subtest.js';

export type {
  EngineLimits,
  PartnerPort,
  RunDefinition,
  RunEvents,
  ScriptRunner,
  SubtestPort,
} from './context.js';

export interface EngineOptions {
  scripts: ScriptRunner;
  /** Check threads for the checks that could take long (default: the process's shared pool). */
  checks?: CheckRunner;
  egress: EgressPolicy;
  subtests?: SubtestPort;
  partner?: PartnerPort;
  limits?: Partial<EngineLimits>;
  /** Milliseconds since the epoch and randomness for templates; injectable for tests. */
  clock?: { now: () => number; random?: () => number };
  sleep?: Sleep;
  openSession?: (options: HttpSessionOptions) => HttpSession;
}

export interface RunOptions {
  /** Aborting it cancels the run: it ends `canceled` as soon as the current step stops. */
  signal?: AbortSignal;
  events?: RunEvents;
}

export interface Engine {
  run(definition: RunDefinition, options?: RunOptions): Promise<RunOutcome>;
}

class Canceled extends Error {}
class TimedOut extends Error {}

/** What the engine's functions share: the options with their defaults filled in. */
interface EngineParts {
  options: EngineOptions;
  limits: EngineLimits;
  clock: { now: () => number; random?: () => number };
  sleep: Sleep;
  openSession: (options: HttpSessionOptions) => HttpSession;
}

export function createEngine(options: EngineOptions): Engine {
  const parts: EngineParts = {
    options,
    limits: { ...DEFAULT_ENGINE_LIMITS, ...options.limits },
    clock: options.clock ?? { now: Date.now },
    sleep: options.sleep ?? realSleep,
    openSession: options.openSession ?? openHttpSession,
  };
  return { run: (definition, runOptions = {}) => runWithRetry(parts, definition, runOptions) };
}

/** A run: one attempt, and a second when it failed and the environment retries on failure. */
async function runWithRetry(
  parts: EngineParts,
  definition: RunDefinition,
  runOptions: RunOptions,
): Promise<RunOutcome> {
  const events = runOptions.events;
  const first = await withDeadline(parts.limits, runOptions.signal, (signal) => {
    events?.runStarted?.({ definition, attempt: 1 });
    return attempt(parts, definition, signal, [definition.test.id], events);
  });
  if (first.result !== 'fail' || !definition.environment.settings.retry_on_failure) return first;
  if (runOptions.signal?.aborted) return first;
  const second = await withDeadline(parts.limits, runOptions.signal, (signal) => {
    events?.runStarted?.({ definition, attempt: 2 });
    return attempt(parts, definition, signal, [definition.test.id], events);
  });
  return { ...second, previous_attempt: first };
}

/** Runs `fn` under a signal that aborts on cancel (the caller's signal) or at the run time limit. */
async function withDeadline(
  limits: EngineLimits,
  outer: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(new TimedOut(`the run exceeded its time limit of ${limits.runTimeoutMs / 1000} s`)),
    limits.runTimeoutMs,
  );
  timer.unref?.();
  const onAbort = () => controller.abort(new Canceled('the run was canceled'));
  if (outer?.aborted) onAbort();
  outer?.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(controller.signal);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

function seconds(parts: EngineParts): number {
  return Math.round(parts.clock.now() * 1000) / 1_000_000;
}

/** The context of one attempt: its own HTTP session and variables, the engine's runners. */
function attemptContext(
  parts: EngineParts,
  definition: RunDefinition,
  signal: AbortSignal,
  chain: readonly string[],
  events: RunEvents | undefined,
): RunContext {
  const { options, limits } = parts;
  const settings = definition.environment.settings;
  return new RunContext({
    definition,
    variables: {
      ...settings.initial_variables,
      ...definition.variables,
      ...contextVariables(definition),
    },
    session: parts.openSession({
      egress: options.egress,
      verifySsl: settings.verify_ssl && definition.bucket.verify_ssl,
      clientCertificate: settings.client_certificate || undefined,
      cookies: settings.preserve_cookies,
      maxBodyBytes: limits.maxBodyBytes,
    }),
    scripts: options.scripts,
    checks: options.checks ?? sharedCheckPool(),
    limits,
    signal,
    clock: parts.clock,
    chain,
    events,
    runChild: (child, childChain) => attempt(parts, child, signal, childChain, undefined),
    subtests: options.subtests,
    partner: options.partner,
  });
}

/** One attempt of a run (or of a subtest): the environment script, then the steps. */
async function attempt(
  parts: EngineParts,
  definition: RunDefinition,
  signal: AbortSignal,
  chain: readonly string[],
  events: RunEvents | undefined,
): Promise<RunOutcome> {
  const started = seconds(parts);
  const settings = definition.environment.settings;
  const ctx = attemptContext(parts, definition, signal, chain, events);
  const { variables } = ctx;
  let error: string | null = null;
  let environmentScript: ScriptResult | null = null;
  let initialVariables = { ...variables };
  try {
    if (settings.script.trim() !== '') {
      environmentScript = await runEnvironmentScript(parts, settings.script, variables, signal);
      if (environmentScript.result === 'fail') {
        error = `the environment script failed: ${environmentScript.error ?? 'unknown error'}`;
      }
    }
    initialVariables = { ...variables };
    if (error === null) await runSteps(parts, ctx, definition.test.steps);
  } catch (err) {
    if (err instanceof Canceled || err instanceof TimedOut) error = err.message;
    else throw err;
  } finally {
    await ctx.session.close().catch(() => undefined);
  }
  if (error === null && signal.aborted) error = abortMessage(signal);
  const canceled = signal.aborted && !(signal.reason instanceof TimedOut);
  const failed = error !== null || ctx.results.some((r) => r.result === 'fail');
  return {
    result: canceled ? 'canceled' : failed ? 'fail' : 'pass',
    started_at: started,
    finished_at: seconds(parts),
    error,
    initial_variables: initialVariables,
    variables: { ...variables },
    environment_script: environmentScript,
    requests: ctx.results,
    ...countersOf(ctx.results),
  };
}

/** The environment script; a sandbox that cannot run it fails it like a script error would. */
async function runEnvironmentScript(
  parts: EngineParts,
  code: string,
  variables: Record<string, string>,
  signal: AbortSignal,
): Promise<ScriptResult> {
  try {
    const outcome = await parts.options.scripts.run(
      { code, variables: { ...variables }, limits: { timeMs: parts.limits.scriptTimeMs } },
      signal,
    );
    Object.assign(variables, outcome.variables);
    return scriptResult(outcome);
  } catch (err) {
    checkSignal(signal);
    return { result: 'fail', output: '', error: err instanceof Error ? err.message : String(err) };
  }
}

/** Runs the steps in order; answers false when a failed step stops the run (stop_on_failure). */
async function runSteps(parts: EngineParts, ctx: RunContext, steps: readonly Step[]): Promise<boolean> {
  for (let index = 0; index < steps.length; index++) {
    const step = steps[index]!;
    checkSignal(ctx.signal);
    ctx.events?.stepStarted?.({ definition: ctx.definition, step, index });
    const goOn =
      step.step_type === 'condition'
        ? await runCondition(parts, ctx, step, index)
        : recordStep(ctx, await runEmbedded(parts, ctx, step));
    if (!goOn) return false;
  }
  return true;
}

/** A condition step and its branch: run when taken, else recorded as skipped. */
async function runCondition(
  parts: EngineParts,
  ctx: RunContext,
  step: ConditionStep,
  index: number,
): Promise<boolean> {
  ctx.beginStep();
  const { result, taken } = evaluateCondition(ctx, step);
  if (!recordStep(ctx, result)) return false;
  for (const inner of step.steps) {
    if (!taken) {
      recordStep(ctx, skippedResult(ctx, inner));
      continue;
    }
    checkSignal(ctx.signal);
    ctx.events?.stepStarted?.({ definition: ctx.definition, step: inner, index });
    if (!recordStep(ctx, await runEmbedded(parts, ctx, inner))) return false;
  }
  return true;
}

/** Keeps a step's result; answers false when it failed and the run stops on failure. */
function recordStep(ctx: RunContext, result: StepResult): boolean {
  ctx.results.push(result);
  ctx.events?.stepFinished?.({ definition: ctx.definition, result });
  return !(result.result === 'fail' && ctx.settings.stop_on_failure);
}

async function runEmbedded(parts: EngineParts, ctx: RunContext, step: EmbeddedStep): Promise<StepResult> {
  ctx.beginStep();
  try {
    switch (step.step_type) {
      case 'request':
        return await runRequestStep(ctx, step, parts.sleep);
      case 'pause':
        return await runPauseStep(ctx, step, parts.sleep);
      case 'subtest':
        return await runSubtestStep(ctx, step);
      case 'partner-inspector':
        return await runPartnerInspectorStep(ctx, step);
    }
  } catch (err) {
    checkSignal(ctx.signal);
    const result = emptyResult(ctx, step);
    result.result = 'fail';
    result.error = `the step could not run: ${err instanceof Error ? err.message : String(err)}`;
    return result;
  }
}

function checkSignal(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason instanceof Canceled || signal.reason instanceof TimedOut
    ? signal.reason
    : new Canceled('the run was canceled');
}

function abortMessage(signal: AbortSignal): string {
  return signal.reason instanceof Error ? signal.reason.message : 'the run was canceled';
}

function skippedResult(ctx: RunContext, step: EmbeddedStep): StepResult {
  const result = emptyResult(ctx, step);
  result.result = 'skipped';
  if (step.step_type === 'request') {
    result.method = step.method;
    result.url = step.url;
    result.note = step.note;
  }
  return result;
}

/** The context variables of DESIGN §4, set over every other initial variable. */
function contextVariables(definition: RunDefinition): Record<string, string> {
  return {
    vigil_bucket: definition.bucket.key,
    vigil_bucket_name: definition.bucket.name,
    vigil_test_uuid: definition.test.id,
    vigil_test_name: definition.test.name,
    vigil_environment: definition.environment.name,
    vigil_environment_uuid: definition.environment.id,
    vigil_region: definition.region,
    vigil_agent: definition.agent ?? '',
  };
}
