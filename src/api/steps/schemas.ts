import { Type } from '@sinclair/typebox';
import { COMPARISONS, SOURCES } from '../../domain/assertions.js';
import { StringEnum } from '../../domain/schema.js';
import { StepInput } from '../../domain/steps.js';
import { AuthOut } from '../environments/schemas.js';

export { StepInput };

const AssertionOut = Type.Object({
  source: StringEnum(SOURCES),
  property: Type.String(),
  comparison: StringEnum(COMPARISONS),
  value: Type.Union([Type.Number(), Type.String()]),
});
const VariableOut = Type.Object({
  name: Type.String(),
  source: StringEnum(SOURCES),
  property: Type.String(),
});
const StringMap = (description: string) =>
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), { description });

const RequestStepOut = Type.Object({
  id: Type.String(),
  step_type: Type.Literal('request'),
  method: Type.String(),
  url: Type.String(),
  body: Type.String(),
  form: StringMap('Form field to a string or an array of strings'),
  headers: Type.Record(Type.String(), Type.Array(Type.String())),
  auth: AuthOut,
  assertions: Type.Array(AssertionOut),
  variables: Type.Array(VariableOut),
  scripts: Type.Array(Type.String()),
  before_scripts: Type.Array(Type.String()),
  skipped: Type.Boolean(),
  note: Type.String(),
});
const PauseStepOut = Type.Object({
  id: Type.String(),
  step_type: Type.Literal('pause'),
  duration: Type.Integer({ description: 'Seconds' }),
});
const SubtestStepOut = Type.Object({
  id: Type.String(),
  step_type: Type.Literal('subtest'),
  test_uuid: Type.String(),
  environment_uuid: Type.String(),
  bucket_key: Type.String(),
  assertions: Type.Array(AssertionOut),
  variables: Type.Array(VariableOut),
  params: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
});
const PartnerInspectorStepOut = Type.Object({
  id: Type.String(),
  step_type: Type.Literal('partner-inspector'),
  integration_id: Type.String(),
  suite_id: Type.String(),
  test_id: Type.String(),
  is_custom_start_url: Type.Boolean(),
  start_url: Type.String(),
  assertions: Type.Array(AssertionOut),
  variables: Type.Array(VariableOut),
});
const EmbeddedStepOut = Type.Union([RequestStepOut, PauseStepOut, SubtestStepOut, PartnerInspectorStepOut]);
const ConditionStepOut = Type.Object({
  id: Type.String(),
  step_type: Type.Literal('condition'),
  left_value: Type.String(),
  comparison: StringEnum(COMPARISONS),
  right_value: Type.String(),
  steps: Type.Array(EmbeddedStepOut),
});

/** A step as served (spec 2.4). */
export const StepOut = Type.Union([
  RequestStepOut,
  PauseStepOut,
  ConditionStepOut,
  SubtestStepOut,
  PartnerInspectorStepOut,
]);

/** A reorder body (spec 4.3): step ids in order; a condition as `{id, steps:[ids]}`. */
export const ReorderBody = Type.Array(
  Type.Union([
    Type.String({ maxLength: 64 }),
    Type.Object({
      id: Type.String({ maxLength: 64 }),
      steps: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 }),
    }),
  ]),
  { maxItems: 1_000 },
);

/** PUT of one step: properties of its type to change (validated after merging with the stored step). */
export const StepPatch = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Properties of the step type to change',
});

export const StepParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  step_id: Type.String(),
});
