/**
 * What a finished run tells the outside world (DESIGN §5): the webhook payload, and the facts the
 * e-mail, Slack and PagerDuty messages are written from. Pure: rows in, plain data out.
 */
import type { AssertionResult, StepResult } from '../domain/results.js';
import type { BucketRow, TestRow, TestRunRow } from '../store/database.js';

type StepSummary = Omit<StepResult, 'request' | 'response'>;

interface StoredSummary {
  requests?: StepSummary[];
  initial_variables?: Record<string, string>;
  variables?: Record<string, string>;
}

export interface RunFacts {
  run: TestRunRow;
  test: Pick<TestRow, 'id' | 'name' | 'trigger_id'>;
  bucket: Pick<BucketRow, 'key' | 'name'>;
  publicUrl: string;
  /** Set when an alert quorum decided the run's round: `run` is the round's first failed run. */
  round?: RoundFacts;
}

/** A round of runs (one start fanned out to regions) as an alert quorum decided it. */
export interface RoundFacts {
  round_id: string;
  quorum: number;
  result: 'pass' | 'fail' | 'canceled';
  /** Region labels (the agent's name for a remote agent), in the order the runs were created. */
  failed_regions: string[];
  passed_regions: string[];
}

/** Where a run ran, as rounds name it: the remote agent's name, else the region. */
export const regionLabel = (run: Pick<TestRunRow, 'region' | 'agent'>): string => run.agent ?? run.region;

const counts = (items: readonly { result: string }[]) => {
  const pass = items.filter((item) => item.result === 'pass').length;
  return { pass, fail: items.length - pass, total: items.length };
};

export function summaryOf(run: TestRunRow): Required<StoredSummary> {
  const parsed = run.summary ? (JSON.parse(run.summary) as StoredSummary) : {};
  return {
    requests: parsed.requests ?? [],
    initial_variables: parsed.initial_variables ?? {},
    variables: parsed.variables ?? {},
  };
}

export const testUrlOf = (facts: RunFacts) =>
  `${facts.publicUrl}/buckets/${facts.bucket.key}/tests/${facts.test.id}`;
export const runUrlOf = (facts: RunFacts) => `${testUrlOf(facts)}/results/${facts.run.id}`;

/** The webhook payload of DESIGN §5. */
export function runPayload(facts: RunFacts) {
  const { run, test, bucket, publicUrl } = facts;
  const summary = summaryOf(run);
  return {
    test_run_id: run.id,
    test_id: test.id,
    test_name: test.name,
    test_url: testUrlOf(facts),
    test_run_url: runUrlOf(facts),
    trigger_url: `${publicUrl}/radar/${test.trigger_id}/trigger`,
    bucket_key: bucket.key,
    bucket_name: bucket.name,
    environment_uuid: run.environment_id,
    environment_name: run.environment_name,
    region: run.region,
    agent: run.agent,
    result: run.result,
    started_at: run.started_at,
    finished_at: run.finished_at,
    initial_variables: summary.initial_variables,
    variables: summary.variables,
    requests: summary.requests.map((step) => ({
      step_type: step.step_type,
      url: step.url,
      method: step.method,
      result: step.result,
      note: step.note,
      response_status_code: step.response_status_code,
      response_time_ms: step.response_time_ms,
      response_size_bytes: step.response_size_bytes,
      assertions: counts(step.assertions),
      scripts: counts(step.scripts),
      variables: counts(step.variables),
    })),
    ...(facts.round ? { round: facts.round } : {}),
  };
}

/** Where a failed run went wrong, for messages people read. */
export interface Failure {
  step: { index: number; step_type: string; note: string; method: string | null; url: string | null } | null;
  assertion: Pick<
    AssertionResult,
    'source' | 'property' | 'comparison' | 'target_value' | 'actual_value'
  > | null;
  error: string | null;
}

/** The first failing step and its first failing assertion, and the error that says why. */
export function failureOf(run: TestRunRow): Failure {
  const steps = summaryOf(run).requests;
  const index = steps.findIndex((step) => step.result === 'fail');
  const step = index >= 0 ? steps[index] : undefined;
  const assertion = step?.assertions.find((a) => a.result === 'fail') ?? null;
  const script = step?.scripts.find((s) => s.result === 'fail');
  return {
    step: step
      ? { index, step_type: step.step_type, note: step.note, method: step.method, url: step.url }
      : null,
    assertion: assertion && {
      source: assertion.source,
      property: assertion.property,
      comparison: assertion.comparison,
      target_value: assertion.target_value,
      actual_value: assertion.actual_value,
    },
    error: run.error ?? step?.error ?? assertion?.error ?? script?.error ?? null,
  };
}
