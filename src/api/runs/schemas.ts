import { Type } from '@sinclair/typebox';
import { TIMEFRAMES } from '../../domain/metrics.js';
import { StringEnum } from '../../domain/schema.js';
import { Nullable } from '../shared/envelope.js';

const Num = () => Nullable(Type.Number());
const AnyJson = Type.Unsafe<unknown>({});
const StringMapOut = Type.Record(Type.String(), Type.String());
const HeadersOut = Type.Record(Type.String(), Type.Array(Type.String()));

export const TimingsOut = Type.Object({
  dns_lookup_ms: Type.Number(),
  dial_ms: Type.Number(),
  tls_handshake_ms: Type.Number(),
  send_headers_ms: Type.Number(),
  send_body_ms: Type.Number(),
  wait_for_response_ms: Type.Number(),
  receive_response_ms: Type.Number(),
});

const AssertionResultOut = Type.Object({
  result: Type.String(),
  source: Type.String(),
  property: Type.String(),
  comparison: Type.String(),
  target_value: Type.Union([Type.String(), Type.Number()]),
  actual_value: AnyJson,
  error: Nullable(Type.String()),
});

const ScriptResultOut = Type.Object({
  result: Type.String(),
  output: Type.String(),
  error: Nullable(Type.String()),
});

const VariableResultOut = Type.Object({
  result: Type.String(),
  source: Type.String(),
  property: Type.String(),
  name: Type.String(),
  value: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

const stepSummaryProperties = {
  uuid: Type.String(),
  step_type: Type.String(),
  result: Type.String(),
  method: Nullable(Type.String()),
  url: Nullable(Type.String()),
  note: Type.String(),
  error: Nullable(Type.String()),
  assertions: Type.Array(AssertionResultOut),
  scripts: Type.Array(ScriptResultOut),
  variables: Type.Array(VariableResultOut),
  response_status_code: Num(),
  response_time_ms: Num(),
  response_size_bytes: Num(),
  timings: Type.Union([TimingsOut, Type.Null()]),
  started_at: Type.Number(),
  finished_at: Type.Number(),
  subtest_run_id: Type.Optional(Nullable(Type.String())),
  attempts: Type.Optional(
    Type.Array(
      Type.Object({
        started_at: Type.Number(),
        finished_at: Type.Number(),
        error: Nullable(Type.String()),
        response_status_code: Num(),
        response_time_ms: Num(),
        timings: Type.Union([TimingsOut, Type.Null()]),
      }),
      { description: 'Every send, when the environment resends after transport errors' },
    ),
  ),
};

export const StepSummaryOut = Type.Object(stepSummaryProperties);

const BodyProperties = {
  body: Type.String(),
  body_encoding: Type.String(),
  size_bytes: Type.Number(),
  truncated: Type.Boolean(),
};

/** One step of a run with the full request sent and response received. */
export const StepDetailOut = Type.Object({
  ...stepSummaryProperties,
  request: Type.Union([
    Type.Object({ method: Type.String(), url: Type.String(), headers: HeadersOut, ...BodyProperties }),
    Type.Null(),
  ]),
  response: Type.Union([
    Type.Object({ status: Type.Integer(), reason: Type.String(), headers: HeadersOut, ...BodyProperties }),
    Type.Null(),
  ]),
});

export const RunOut = Type.Object({
  test_run_id: Type.String(),
  test_id: Type.String(),
  bucket_key: Type.String(),
  environment_id: Type.String(),
  environment_name: Type.String(),
  region: Type.String(),
  agent: Nullable(Type.String()),
  source: Type.String(),
  result: Type.String(),
  queued_at: Type.Number(),
  started_at: Num(),
  finished_at: Num(),
  attempts: Type.Integer(),
  in_maintenance: Type.Boolean({
    description: 'A maintenance window covered the run when it was queued; its notifications are muted',
  }),
  error: Nullable(Type.String()),
  requests_executed: Type.Integer(),
  assertions_defined: Type.Integer(),
  assertions_passed: Type.Integer(),
  assertions_failed: Type.Integer(),
  scripts_defined: Type.Integer(),
  scripts_passed: Type.Integer(),
  scripts_failed: Type.Integer(),
  variables_defined: Type.Integer(),
  variables_passed: Type.Integer(),
  variables_failed: Type.Integer(),
  response_time_ms: Num(),
  parent_run_id: Nullable(Type.String()),
  test_run_url: Type.String(),
  initial_variables: StringMapOut,
  variables: StringMapOut,
  environment_script: Type.Union([ScriptResultOut, Type.Null()]),
  requests: Type.Array(StepSummaryOut),
  previous_attempt: Type.Union([
    Type.Object({
      result: Type.String(),
      started_at: Type.Number(),
      finished_at: Type.Number(),
      error: Nullable(Type.String()),
      requests: Type.Array(StepSummaryOut),
    }),
    Type.Null(),
  ]),
});

/** A run as a trigger answers it (DESIGN §4). */
export const StartedRunOut = Type.Object({
  test_run_id: Type.String(),
  test_id: Type.String(),
  test_name: Type.String(),
  bucket_key: Type.String(),
  environment_id: Type.String(),
  environment_name: Type.String(),
  region: Type.String(),
  agent: Nullable(Type.String()),
  status: Type.String(),
  test_run_url: Type.String(),
  test_url: Type.String(),
  url: Type.String({ description: 'Same as test_run_url; the name older clients read' }),
  variables: StringMapOut,
});

export const TriggerOut = Type.Object({
  runs: Type.Array(StartedRunOut),
  runs_started: Type.Integer(),
  runs_failed: Type.Integer(),
  runs_total: Type.Integer(),
});

export const ResultsQuery = Type.Object({
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Default 10, at most 50 (larger values are capped)',
    }),
  ),
  since: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only runs queued after this Unix time (seconds)' }),
  ),
  before: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only runs queued before this Unix time (seconds)' }),
  ),
});

export const MetricsQuery = Type.Object({
  timeframe: Type.Optional(StringEnum(TIMEFRAMES)),
  region: Type.Optional(Type.String({ pattern: '^(all|[a-z0-9][a-z0-9-]{0,63})$' })),
  environment_uuid: Type.Optional(Type.String({ anyOf: [{ const: 'all' }, { format: 'uuid' }] })),
});

const PeriodOut = Type.Object({
  response_time_50th_percentile: Num(),
  response_time_95th_percentile: Num(),
  response_time_99th_percentile: Num(),
  total_test_runs: Type.Integer(),
  success_ratio: Num(),
});

export const MetricsOut = Type.Object({
  response_times: Type.Array(
    Type.Object({ timestamp: Type.Number(), avg_response_time_ms: Num(), success_ratio: Num() }),
  ),
  this_time_period: PeriodOut,
  change_from_last_period: Type.Object({
    response_time_50th_percentile: Num(),
    response_time_95th_percentile: Num(),
    response_time_99th_percentile: Num(),
    total_test_runs: Num(),
    success_ratio: Num(),
  }),
});

/**
 * The metrics answer: the metrics object at the top level, as the original service answered it (its
 * Go client decodes the body straight into the metrics), and also in the envelope's `data`.
 */
export const MetricsAnswer = Type.Object({
  ...MetricsOut.properties,
  region: Type.String({ description: 'The region asked for, or "all"' }),
  timeframe: StringEnum(TIMEFRAMES),
  environment_uuid: Type.String({ description: 'The environment asked for, or "all"' }),
  data: Type.Object({
    ...MetricsOut.properties,
    region: Type.String(),
    timeframe: StringEnum(TIMEFRAMES),
    environment_uuid: Type.String(),
  }),
  meta: Type.Object({ status: Type.Literal('success') }),
  error: Type.Null(),
});

export const ManualRunBody = Type.Object({
  environment_id: Type.Optional(Type.String({ format: 'uuid' })),
  region: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' })),
  variables: Type.Optional(
    Type.Record(
      Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.\\-]{0,99}$' }),
      Type.String({ maxLength: 100_000 }),
      {
        maxProperties: 500,
      },
    ),
  ),
});

export const RunParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  test_run_id: Type.String(),
});
export const StepResultParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  test_run_id: Type.String(),
  step_id: Type.String(),
});

/** Where the runs of a data-driven batch go; the rows come in the body (CSV or JSON). */
export const BatchQuery = Type.Object({
  environment_id: Type.Optional(Type.String({ format: 'uuid' })),
  region: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' })),
});
