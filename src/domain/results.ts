/**
 * Results of a test run (DESIGN §4): plain, serialisable data. The runner produces them, the store
 * keeps them, the API, the CLI reporters and notifications read them. Nothing here is a class.
 */
import type { Comparison, Source } from './assertions.js';
import type { StepType } from './steps.js';
import { RUN_RESULTS, RUN_SOURCES, STEP_RESULTS } from './vocabulary.js';

export { RUN_RESULTS, RUN_SOURCES, STEP_RESULTS };

export type RunSource = (typeof RUN_SOURCES)[number];

/** Lifecycle of a run: queued → working → pass | fail, or canceled from queued/working. */
export type RunResult = (typeof RUN_RESULTS)[number];
export type FinishedRunResult = 'pass' | 'fail' | 'canceled';

export type StepResultStatus = (typeof STEP_RESULTS)[number];

/** Per-phase timings of one HTTP exchange, in milliseconds (0 for a phase that did not happen). */
export interface Timings {
  dns_lookup_ms: number;
  dial_ms: number;
  tls_handshake_ms: number;
  send_headers_ms: number;
  send_body_ms: number;
  wait_for_response_ms: number;
  receive_response_ms: number;
}

export const ZERO_TIMINGS: Readonly<Timings> = Object.freeze({
  dns_lookup_ms: 0,
  dial_ms: 0,
  tls_handshake_ms: 0,
  send_headers_ms: 0,
  send_body_ms: 0,
  wait_for_response_ms: 0,
  receive_response_ms: 0,
});

export interface AssertionResult {
  result: 'pass' | 'fail';
  source: Source;
  property: string;
  comparison: Comparison;
  target_value: string | number;
  /** The value read from the response, as JSON data (`null` when it could not be read). */
  actual_value: unknown;
  error: string | null;
}

export interface ScriptResult {
  result: 'pass' | 'fail';
  output: string;
  error: string | null;
}

export interface VariableResult {
  result: 'pass' | 'fail';
  source: Source | 'script';
  property: string;
  name: string;
  value: string | null;
  error: string | null;
}

/** A body as stored: UTF-8 text, or Base64 for bytes that are not valid UTF-8. */
export interface BodyRecord {
  body: string;
  body_encoding: 'text' | 'base64';
  /** Size of the whole body in bytes, even when `body` was cut at the cap. */
  size_bytes: number;
  truncated: boolean;
}

export interface SentRequest extends BodyRecord {
  method: string;
  url: string;
  headers: Record<string, string[]>;
}

export interface ReceivedResponse extends BodyRecord {
  status: number;
  reason: string;
  headers: Record<string, string[]>;
}

/** One executed step (embedded steps included), as in a run's `requests[]`. */
export interface StepResult {
  uuid: string;
  step_type: StepType;
  result: StepResultStatus;
  method: string | null;
  url: string | null;
  note: string;
  /** Why the step failed when no assertion or script says it (template, network, timeout…). */
  error: string | null;
  assertions: AssertionResult[];
  scripts: ScriptResult[];
  variables: VariableResult[];
  response_status_code: number | null;
  response_time_ms: number | null;
  response_size_bytes: number | null;
  timings: Timings | null;
  /** Float seconds. */
  started_at: number;
  finished_at: number;
  /** Full exchange; kept in the step detail, left out of run summaries. */
  request: SentRequest | null;
  response: ReceivedResponse | null;
  /** The child run of a subtest step. */
  subtest_run_id?: string | null;
  /**
   * Every send of a request step whose environment resends after transport errors, first to last;
   * the step's own fields describe the last one.
   */
  attempts?: StepAttempt[];
}

/** One send of a request step. */
export interface StepAttempt {
  /** Float seconds. */
  started_at: number;
  finished_at: number;
  /** The transport error, or null when an HTTP answer came back. */
  error: string | null;
  response_status_code: number | null;
  response_time_ms: number | null;
  timings: Timings | null;
}

export interface RunCounters {
  requests_executed: number;
  assertions_defined: number;
  assertions_passed: number;
  assertions_failed: number;
  scripts_defined: number;
  scripts_passed: number;
  scripts_failed: number;
  variables_defined: number;
  variables_passed: number;
  variables_failed: number;
}

/** What the engine hands back for one attempt of one run. */
export interface RunOutcome extends RunCounters {
  result: 'pass' | 'fail' | 'canceled';
  started_at: number;
  finished_at: number;
  /** Why the run as a whole failed or was canceled (run limit, subtest cycle, canceled…). */
  error: string | null;
  initial_variables: Record<string, string>;
  variables: Record<string, string>;
  /** Output of the environment script. */
  environment_script: ScriptResult | null;
  requests: StepResult[];
  /** The failed first attempt, when `retry_on_failure` ran the test again. */
  previous_attempt?: RunOutcome | null;
}

export const ZERO_COUNTERS: Readonly<RunCounters> = Object.freeze({
  requests_executed: 0,
  assertions_defined: 0,
  assertions_passed: 0,
  assertions_failed: 0,
  scripts_defined: 0,
  scripts_passed: 0,
  scripts_failed: 0,
  variables_defined: 0,
  variables_passed: 0,
  variables_failed: 0,
});

/** The counters of a run, picked from anything that carries them. */
export function countersFrom(source: RunCounters): RunCounters {
  const counters = { ...ZERO_COUNTERS };
  for (const key of Object.keys(ZERO_COUNTERS) as (keyof RunCounters)[]) counters[key] = source[key];
  return counters;
}

export function countersOf(requests: readonly StepResult[]): RunCounters {
  const counters: RunCounters = { ...ZERO_COUNTERS };
  for (const step of requests) {
    if (step.response_status_code !== null || (step.request !== null && step.step_type === 'request')) {
      counters.requests_executed++;
    }
    for (const a of step.assertions) {
      counters.assertions_defined++;
      if (a.result === 'pass') counters.assertions_passed++;
      else counters.assertions_failed++;
    }
    for (const s of step.scripts) {
      counters.scripts_defined++;
      if (s.result === 'pass') counters.scripts_passed++;
      else counters.scripts_failed++;
    }
    for (const v of step.variables) {
      counters.variables_defined++;
      if (v.result === 'pass') counters.variables_passed++;
      else counters.variables_failed++;
    }
  }
  return counters;
}
