import { newId } from '../../domain/ids.js';
import { countersFrom, type RunOutcome, type StepResult, ZERO_COUNTERS } from '../../domain/results.js';
import type { TestRunRow } from '../../store/database.js';
import { agentRegion } from '../workers.js';

/**
 * A run's job is delivered again when the worker that took it vanished before starting the run
 * (the job expires or its lease lapses); once the run has started, the reaper hands it over instead.
 */
export const RUN_JOB_RETRY = { limit: 2, delaySeconds: 1, backoff: false } as const;

/** The queue region a run's job goes to: its agent's own, or its region. */
export function queueRegionOf(run: Pick<TestRunRow, 'region' | 'agent_id'>): string {
  return run.agent_id ? agentRegion(run.agent_id) : run.region;
}

/** What sets one run row apart from another; every other column starts the same. */
export type NewRun = Pick<
  TestRunRow,
  | 'test_id'
  | 'bucket_key'
  | 'environment_id'
  | 'environment_name'
  | 'region'
  | 'agent'
  | 'agent_id'
  | 'source'
  | 'result'
  | 'parent_run_id'
  | 'queued_at'
  | 'started_at'
  | 'attempts'
  | 'executions'
  | 'notification_url'
  | 'planned_at'
  | 'schedule_id'
  | 'round_id'
> & { variables: Record<string, string>; in_maintenance?: number };

/** A new `test_runs` row: not finished, no counters, no summary, on no worker. */
export function newRunRow({ variables, in_maintenance = 0, ...run }: NewRun): TestRunRow {
  return {
    id: newId(),
    ...run,
    in_maintenance,
    finished_at: null,
    ...ZERO_COUNTERS,
    response_time_ms: null,
    error: null,
    trigger_variables: JSON.stringify(variables),
    summary: null,
    worker_id: null,
    handovers: 0,
    interrupted_attempts: null,
  };
}

/** A step as the run detail lists it: everything but the full request and response. */
export function stepSummary(step: StepResult): Omit<StepResult, 'request' | 'response'> {
  const { request: _request, response: _response, ...rest } = step;
  return rest;
}

/** An attempt of a run cut short by a stopping worker, as the run's summary keeps it. */
export interface InterruptedAttempt {
  result: 'interrupted';
  started_at: number;
  finished_at: number;
  error: string;
  requests: ReturnType<typeof stepSummary>[];
}

export function parseInterrupted(json: string | null): InterruptedAttempt[] {
  return json ? (JSON.parse(json) as InterruptedAttempt[]) : [];
}

/**
 * The columns of a finished run. Every attempt counts: those cut short by stopping workers, the
 * one that completed, and its retry. `previous_attempt` is the attempt before the last one.
 */
export function finishFields(outcome: RunOutcome, interrupted: readonly InterruptedAttempt[] = []) {
  const responseTimes = outcome.requests
    .map((r) => r.response_time_ms)
    .filter((t): t is number => t !== null);
  const retried = outcome.previous_attempt;
  const previous = retried
    ? {
        result: retried.result,
        started_at: retried.started_at,
        finished_at: retried.finished_at,
        error: retried.error,
        requests: retried.requests.map(stepSummary),
      }
    : (interrupted.at(-1) ?? null);
  return {
    result: outcome.result,
    started_at: interrupted[0]?.started_at ?? retried?.started_at ?? outcome.started_at,
    finished_at: outcome.finished_at,
    attempts: interrupted.length + (retried ? 2 : 1),
    ...countersFrom(outcome),
    response_time_ms: responseTimes.length > 0 ? responseTimes.reduce((a, b) => a + b, 0) : null,
    error: outcome.error,
    summary: JSON.stringify({
      requests: outcome.requests.map(stepSummary),
      initial_variables: outcome.initial_variables,
      variables: outcome.variables,
      environment_script: outcome.environment_script,
      previous_attempt: previous,
      interrupted_attempts: interrupted,
    }),
  };
}

/** The step rows of a finished run: the retried attempt's steps, then the last attempt's. */
export function stepRows(runId: string, outcome: RunOutcome) {
  const steps = [...(outcome.previous_attempt?.requests ?? []), ...outcome.requests];
  return steps.map((step, position) => ({
    run_id: runId,
    position,
    step_id: step.uuid,
    detail: JSON.stringify(step),
  }));
}

/** Trigger ids and step ids as URLs carry them. */
export function isSafeId(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,128}$/.test(value);
}
