import type { ScriptResult, StepResult } from '../../domain/results.js';
import type { HtmlReport, ReportRun } from '../../reports/html.js';
import type { StartedRun } from '../../services/runs/launcher.js';
import type { stepSummary } from '../../services/runs/rows.js';
import type { TestRunRow } from '../../store/database.js';

export function testUrl(publicUrl: string, bucketKey: string, testId: string): string {
  return `${publicUrl}/buckets/${bucketKey}/tests/${testId}`;
}

export function runUrl(publicUrl: string, run: Pick<TestRunRow, 'bucket_key' | 'test_id' | 'id'>): string {
  return `${testUrl(publicUrl, run.bucket_key, run.test_id)}/results/${run.id}`;
}

type StepSummary = ReturnType<typeof stepSummary>;

/** What `test_runs.summary` holds once a run has finished. */
interface Summary {
  requests: StepSummary[];
  initial_variables: Record<string, string>;
  variables: Record<string, string>;
  environment_script: ScriptResult | null;
  previous_attempt: {
    result: string;
    started_at: number;
    finished_at: number;
    error: string | null;
    requests: StepSummary[];
  } | null;
}

const EMPTY_SUMMARY: Summary = {
  requests: [],
  initial_variables: {},
  variables: {},
  environment_script: null,
  previous_attempt: null,
};

export function presentRun(row: TestRunRow, publicUrl: string) {
  const summary = row.summary
    ? { ...EMPTY_SUMMARY, ...(JSON.parse(row.summary) as Partial<Summary>) }
    : EMPTY_SUMMARY;
  return {
    test_run_id: row.id,
    test_id: row.test_id,
    bucket_key: row.bucket_key,
    environment_id: row.environment_id,
    environment_name: row.environment_name,
    region: row.region,
    agent: row.agent,
    source: row.source,
    result: row.result,
    queued_at: row.queued_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    attempts: row.attempts,
    in_maintenance: row.in_maintenance === 1,
    error: row.error,
    requests_executed: row.requests_executed,
    assertions_defined: row.assertions_defined,
    assertions_passed: row.assertions_passed,
    assertions_failed: row.assertions_failed,
    scripts_defined: row.scripts_defined,
    scripts_passed: row.scripts_passed,
    scripts_failed: row.scripts_failed,
    variables_defined: row.variables_defined,
    variables_passed: row.variables_passed,
    variables_failed: row.variables_failed,
    response_time_ms: row.response_time_ms,
    parent_run_id: row.parent_run_id,
    test_run_url: runUrl(publicUrl, row),
    initial_variables: summary.initial_variables,
    variables: summary.variables,
    environment_script: summary.environment_script,
    requests: summary.requests,
    previous_attempt: summary.previous_attempt,
  };
}

export function presentStartedRuns(runs: readonly StartedRun[], publicUrl: string) {
  return {
    runs: runs.map(({ row, testName, variables }) => ({
      test_run_id: row.id,
      test_id: row.test_id,
      test_name: testName,
      bucket_key: row.bucket_key,
      environment_id: row.environment_id,
      environment_name: row.environment_name,
      region: row.region,
      agent: row.agent,
      status: 'init',
      test_run_url: runUrl(publicUrl, row),
      test_url: testUrl(publicUrl, row.bucket_key, row.test_id),
      url: runUrl(publicUrl, row),
      variables,
    })),
    runs_started: runs.length,
    runs_failed: 0,
    runs_total: runs.length,
  };
}

/**
 * The HTML report of a stored run: its summary, with each step's full result (request and
 * response) where the store still keeps it.
 */
export function reportOfRun(
  testName: string,
  row: TestRunRow,
  details: readonly StepResult[],
  publicUrl: string,
  now: number,
): HtmlReport {
  const run = presentRun(row, publicUrl);
  const previous = run.previous_attempt;
  // The kept steps run in order: the retried attempt's, then the last attempt's.
  const split = previous ? previous.requests.length : 0;
  const full = (summaries: readonly StepSummary[], kept: readonly StepResult[]): StepResult[] =>
    summaries.map((summary, i) =>
      kept[i]?.uuid === summary.uuid ? kept[i]! : { ...summary, request: null, response: null },
    );
  const finishedAt = run.finished_at ?? now;
  const outcome: ReportRun['outcome'] = {
    result: run.result === 'pass' || run.result === 'fail' || run.result === 'canceled' ? run.result : 'fail',
    started_at: run.started_at ?? run.queued_at,
    finished_at: finishedAt,
    error: run.error ?? (run.finished_at === null ? `the run is ${run.result}` : null),
    initial_variables: run.initial_variables,
    variables: run.variables,
    environment_script: run.environment_script,
    requests: full(run.requests, details.slice(split)),
    previous_attempt: previous
      ? {
          result: previous.result === 'pass' ? 'pass' : 'fail',
          started_at: previous.started_at,
          finished_at: previous.finished_at,
          error: previous.error,
          initial_variables: {},
          variables: {},
          environment_script: null,
          requests: full(previous.requests, details.slice(0, split)),
        }
      : null,
  };
  return {
    title: `${testName} · result ${row.id}`,
    generated_at: now,
    runs: [
      {
        test_name: testName,
        iteration: null,
        environment_name: `${row.environment_name}, region ${row.region}`,
        source: run.test_run_url,
        outcome,
      },
    ],
  };
}
