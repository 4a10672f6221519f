import type { EnvironmentSettings } from '../domain/environments.js';
import type { RunOutcome, StepResult } from '../domain/results.js';
import type { Step, SubtestStep } from '../domain/steps.js';
import {
  renderTemplate,
  type TemplateBudget,
  templateBudget,
  type TemplateResult,
} from '../domain/templates.js';
import type { CheckRunner } from './check-pool.js';
import type { HttpSession } from '../net/client.js';
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
  /**
   * What the checks of one step (variables and assertions) that run in a check thread may take
   * together; past it the step fails naming the check ("xpath: took longer than 1 s").
   */
  checkTimeMs: number;
}

export const DEFAULT_ENGINE_LIMITS: Readonly<EngineLimits> = Object.freeze({
  requestTimeoutMs: 60_000,
  runTimeoutMs: 15 * 60_000,
  maxBodyBytes: 1024 * 1024,
  maxSubtestDepth: 10,
  scriptTimeMs: 1_000,
  checkTimeMs: 1_000,
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

/** What one attempt of a run is made of; see {@link RunContext}. */
export interface RunContextOptions {
  definition: RunDefinition;
  /** The run's variables, which its steps read and change. */
  variables: Record<string, string>;
  session: HttpSession;
  scripts: ScriptRunner;
  checks: CheckRunner;
  limits: EngineLimits;
  signal: AbortSignal;
  clock: { now: () => number; random?: () => number };
  /** Test ids from the top run down to this one, for subtest cycle detection. */
  chain: readonly string[];
  events: RunEvents | undefined;
  /** Runs a subtest's definition as an attempt of its own under the same signal. */
  runChild: (definition: RunDefinition, chain: readonly string[]) => Promise<RunOutcome>;
  subtests: SubtestPort | undefined;
  partner: PartnerPort | undefined;
}

/** The state of one attempt of one run, shared by its steps. */
export class RunContext {
  readonly results: StepResult[] = [];
  /** What the templates of the current step may still spend; see {@link beginStep}. */
  templates: TemplateBudget = templateBudget();

  readonly definition: RunDefinition;
  readonly variables: Record<string, string>;
  readonly session: HttpSession;
  readonly scripts: ScriptRunner;
  readonly checks: CheckRunner;
  readonly limits: EngineLimits;
  readonly signal: AbortSignal;
  readonly clock: { now: () => number; random?: () => number };
  /** Test ids from the top run down to this one, for subtest cycle detection. */
  readonly chain: readonly string[];
  readonly events: RunEvents | undefined;
  readonly runChild: (definition: RunDefinition, chain: readonly string[]) => Promise<RunOutcome>;
  readonly subtests: SubtestPort | undefined;
  readonly partner: PartnerPort | undefined;

  constructor(options: RunContextOptions) {
    this.definition = options.definition;
    this.variables = options.variables;
    this.session = options.session;
    this.scripts = options.scripts;
    this.checks = options.checks;
    this.limits = options.limits;
    this.signal = options.signal;
    this.clock = options.clock;
    this.chain = options.chain;
    this.events = options.events;
    this.runChild = options.runChild;
    this.subtests = options.subtests;
    this.partner = options.partner;
  }

  get settings(): EnvironmentSettings {
    return this.definition.environment.settings;
  }

  /** Called as each step starts: the templates of one step share one budget (TEMPLATE_LIMITS). */
  beginStep(): void {
    this.templates = templateBudget();
  }

  render(text: string): TemplateResult {
    if (!text.includes('{{')) return { ok: true, value: text };
    return renderTemplate(text, {
      variables: this.variables,
      now: this.clock.now,
      random: this.clock.random,
      budget: this.templates,
    });
  }

  /** Float Unix seconds. */
  nowSeconds(): number {
    return Math.round(this.clock.now() * 1000) / 1_000_000;
  }
}
