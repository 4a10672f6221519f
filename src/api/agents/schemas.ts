import { type Static, Type } from '@sinclair/typebox';
import { COMPARISONS, SOURCES } from '../../domain/assertions.js';
import { STEP_RESULTS } from '../../domain/results.js';
import { StringEnum, StringMap } from '../../domain/schema.js';
import { STEP_TYPES } from '../../domain/steps.js';
import { Nullable } from '../shared/envelope.js';

// ---------------------------------------------------------------------------------------------
// Registration (user API)

/** Region labels of agents: the form of REGION (config). */
export const AGENT_REGION_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';

export const AgentOut = Type.Object({
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  region: Type.String(),
  version: Nullable(Type.String()),
  hostname: Nullable(Type.String()),
  last_seen_at: Nullable(Type.Number()),
  status: StringEnum(['online', 'offline'] as const),
  created_at: Type.Number(),
});

export const AgentCreatedOut = Type.Composite([
  AgentOut,
  Type.Object({
    token: Type.String({ description: 'The agent token; shown only in this answer, stored hashed' }),
  }),
]);

export const AgentCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  region: Type.Optional(
    Type.String({
      pattern: AGENT_REGION_PATTERN,
      description: 'Region label of the runs this agent executes (default "remote")',
    }),
  ),
});

export const TeamParams = Type.Object({ team_id: Type.String() });
export const AgentParams = Type.Object({ team_id: Type.String(), agent_id: Type.String() });

// ---------------------------------------------------------------------------------------------
// The agent protocol (docs/agents.md)

export const RunIdParams = Type.Object({ run_id: Type.String() });

export const NextQuery = Type.Object({
  wait: Type.Optional(Type.Number({ minimum: 0, maximum: 30, description: 'Seconds to wait (default 25)' })),
});

const Text = (maxLength = 10_000_000) => Type.String({ maxLength });
const Seconds = () => Type.Number({ minimum: 0, maximum: 1e11 });
const Count = () => Type.Integer({ minimum: 0, maximum: 1e9 });
const Ms = () => Nullable(Type.Number({ minimum: 0, maximum: 1e12 }));
const Variables = StringMap({ minLength: 1, maxLength: 1_000 }, Text(), { maxProperties: 10_000 });
const Headers = StringMap(
  { minLength: 1, maxLength: 1_000 },
  Type.Array(Text(100_000), { maxItems: 1_000 }),
  {
    maxProperties: 1_000,
  },
);
const PassFail = StringEnum(['pass', 'fail'] as const);

const ScriptResultIn = Type.Object({
  result: PassFail,
  output: Text(),
  error: Nullable(Text()),
});

const BodyRecordIn = {
  body: Text(300_000_000),
  body_encoding: StringEnum(['text', 'base64'] as const),
  size_bytes: Count(),
  truncated: Type.Boolean(),
};

const StepResultIn = Type.Object({
  uuid: Type.String({ maxLength: 128 }),
  step_type: StringEnum(STEP_TYPES),
  result: StringEnum(STEP_RESULTS),
  method: Nullable(Text(100)),
  url: Nullable(Text(100_000)),
  note: Text(),
  error: Nullable(Text()),
  assertions: Type.Array(
    Type.Object({
      result: PassFail,
      source: StringEnum(SOURCES),
      property: Text(),
      comparison: StringEnum(COMPARISONS),
      target_value: Type.Union([Text(), Type.Number()]),
      actual_value: Type.Unknown(),
      error: Nullable(Text()),
    }),
    { maxItems: 10_000 },
  ),
  scripts: Type.Array(ScriptResultIn, { maxItems: 10_000 }),
  variables: Type.Array(
    Type.Object({
      result: PassFail,
      source: StringEnum([...SOURCES, 'script'] as const),
      property: Text(),
      name: Text(1_000),
      value: Nullable(Text()),
      error: Nullable(Text()),
    }),
    { maxItems: 10_000 },
  ),
  response_status_code: Nullable(Type.Integer({ minimum: 0, maximum: 999 })),
  response_time_ms: Ms(),
  response_size_bytes: Nullable(Count()),
  timings: Type.Union([
    Type.Object({
      dns_lookup_ms: Type.Number({ minimum: 0 }),
      dial_ms: Type.Number({ minimum: 0 }),
      tls_handshake_ms: Type.Number({ minimum: 0 }),
      send_headers_ms: Type.Number({ minimum: 0 }),
      send_body_ms: Type.Number({ minimum: 0 }),
      wait_for_response_ms: Type.Number({ minimum: 0 }),
      receive_response_ms: Type.Number({ minimum: 0 }),
    }),
    Type.Null(),
  ]),
  started_at: Seconds(),
  finished_at: Seconds(),
  request: Type.Union([
    Type.Object({ method: Text(100), url: Text(100_000), headers: Headers, ...BodyRecordIn }),
    Type.Null(),
  ]),
  response: Type.Union([
    Type.Object({
      status: Type.Integer({ minimum: 0, maximum: 999 }),
      reason: Text(10_000),
      headers: Headers,
      ...BodyRecordIn,
    }),
    Type.Null(),
  ]),
  subtest_run_id: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
});

const outcomeProperties = {
  result: StringEnum(['pass', 'fail', 'canceled'] as const),
  started_at: Seconds(),
  finished_at: Seconds(),
  error: Nullable(Text()),
  initial_variables: Variables,
  variables: Variables,
  environment_script: Type.Union([ScriptResultIn, Type.Null()]),
  requests: Type.Array(StepResultIn, { maxItems: 10_000 }),
  requests_executed: Count(),
  assertions_defined: Count(),
  assertions_passed: Count(),
  assertions_failed: Count(),
  scripts_defined: Count(),
  scripts_passed: Count(),
  scripts_failed: Count(),
  variables_defined: Count(),
  variables_passed: Count(),
  variables_failed: Count(),
};

/** A run outcome as an agent reports it: the engine's RunOutcome, checked field by field. */
export const RunOutcomeIn = Type.Object({
  ...outcomeProperties,
  previous_attempt: Type.Optional(Type.Union([Type.Object(outcomeProperties), Type.Null()])),
});

export const ResultBody = Type.Object({ outcome: RunOutcomeIn });
export type ResultBody = Static<typeof ResultBody>;

const SubtestTargetProperties = {
  test_uuid: Type.String({ maxLength: 64 }),
  environment_uuid: Type.Optional(Type.String({ maxLength: 64 })),
  bucket_key: Type.Optional(Type.String({ maxLength: 64 })),
  variables: Variables,
};

export const SubtestResolveBody = Type.Object(SubtestTargetProperties);
export const SubtestRecordBody = Type.Object({ ...SubtestTargetProperties, outcome: RunOutcomeIn });
