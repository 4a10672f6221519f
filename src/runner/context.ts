import type { EnvironmentSettings } from '../domain/environments.js';
import type { RunOutcome, StepResult } from '../domain/results.js';
import type { Step, SubtestStep } from '../domain/steps.js';
import { renderTemplate, type TemplateResult } from '../domain/templates.js';
import type { HttpSession } from './http/client.js';
import type { ScriptJob, ScriptOutcome } from './sandbox/sandbox.js';

/** Everything one run needs to know about what to run; plain data, no store or API objects. */
export interface RunDefinition {
  /** Set when the run is recorded (server); absent for `vigil run`. */
  runId?: string;
  test: { id: string; name: string; steps: readonly Step[] };
  /** The environment with its settings already resolved through its parents. */
  environment: { id: string; name: string; settings: EnvironmentSettings };
  bucket: { key: string; name: string; verify_ssl: boolean };
  region: string;
  agent: string | null;
  /** Trigger parameters (or subtest params): initial variables over the environment's own. */
  variables: Record<string, string>;
}

export interface EngineLimits {
  /** One HTTP exchange, from connect to the last byte. */
  requestTimeoutMs: number;
  /** A whole run, subtests included; the run fails with a clear error when it runs out. */
  runTimeoutMs: number;
  /** Response bytes read and kept for assertions and results; beyond it the body is cut (noted). */
  maxBodyBytes: number;
  /** Nested subtests (a subtest of a subtest …). */
  maxSubtestDepth: number;
  /** Per-script limits passed to the sandbox. */
  scriptTimeMs: number;
}

export const DEFAULT_ENGINE_LIMITS: Readonly<EngineLimits> = Object.freeze({
  requestTimeoutMs: 60_000,
  runTimeoutMs: 15 * 60_000,
  maxBodyBytes: 1024 * 1024,
  maxSubtestDepth: 10,
  scriptTimeMs: 1_000,
});

/** Runs user scripts; the worker-thread QuickJS sandbox in production. */
export interface ScriptRunner {
  run(job: ScriptJob, signal?: AbortSignal): Promise<ScriptOutcome>;
}

/** Resolves and records subtests; the server reads tests from its store, `vigil run` from files. */
export interface SubtestPort {
  /** The definition of the child run, or an error sentence (unknown test, other account …). */
  resolve(
    step: SubtestStep,
    parent: RunDefinition,
    variables: Record<string, string>,
  ): Promise<RunDefinition | { error: string }>;
  /** Stores the finished child run (source `subtest`); answers its run id. */
  record?(child: RunDefinition, outcome: RunOutcome, parent: RunDefinition): Promise<string | null>;
}

/** Outcome of an external browser test (partner-inspector step). */
export interface PartnerOutcome {
  passed: boolean;
  /** The partner's result document, exposed as the step's JSON body. */
  result: unknown;
  /** Where the partner shows the result, when it says. */
  url?: string | null;
}

export interface PartnerPort {
  /**
   * Runs the partner's test. `bucket_key` is the bucket of the run, so the server looks the
   * integration up within the run's team only.
   */
  execute(
    request: {
      integration_id: string;
      suite_id: string;
      test_id: string;
      start_url: string | null;
      bucket_key: string;
    },
    signal: AbortSignal,
  ): Promise<PartnerOutcome>;
}

/** What a run reports while it goes: CLI progress and live status subscribe. */
export interface RunEvents {
  runStarted?(event: { definition: RunDefinition; attempt: number }): void;
  stepStarted?(event: { definition: RunDefinition; step: Step; index: number }): void;
  stepFinished?(event: { definition: RunDefinition; result: StepResult }): void;
}

/** The state of one attempt of one run, shared by its steps. */
export class RunContext {
  readonly results: StepResult[] = [];

  constructor(
    readonly definition: RunDefinition,
    readonly variables: Record<string, string>,
    readonly session: HttpSession,
    readonly scripts: ScriptRunner,
    readonly limits: EngineLimits,
    readonly signal: AbortSignal,
    readonly clock: { now: () => number; random?: () => number },
    /** Test ids from the top run down to this one, for subtest cycle detection. */
    readonly chain: readonly string[],
    readonly events: RunEvents | undefined,
    readonly runChild: (definition: RunDefinition, chain: readonly string[]) => Promise<RunOutcome>,
    readonly subtests: SubtestPort | undefined,
    readonly partner: PartnerPort | undefined,
  ) {}

  get settings(): EnvironmentSettings {
    return this.definition.environment.settings;
  }

  render(text: string): TemplateResult {
    if (!text.includes('{{')) return { ok: true, value: text };
    return renderTemplate(text, {
      variables: this.variables,
      now: this.clock.now,
      random: this.clock.random,
    });
  }

  /** Float Unix seconds. */
  nowSeconds(): number {
    return Math.round(this.clock.now() * 1000) / 1_000_000;
  }
}
