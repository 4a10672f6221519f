import { type Static, type TLiteral, type TObject, type TUnsafe, Type } from '@sinclair/typebox';
import { COMPARISONS, SOURCES } from '../../domain/assertions.js';
import { StringEnum } from '../../domain/schema.js';
import { StepInput } from '../../domain/steps.js';
import { AuthOut } from '../environments/schemas.js';

export { StepInput };

const AssertionOut = Type.Object({
  source: StringEnum(SOURCES),
  property: Type.String(),
  comparison: StringEnum(COMPARISONS),
  value: Type.Unsafe<number | string>({ type: ['number', 'string'] }),
});
const VariableOut = Type.Object({
  name: Type.String(),
  source: StringEnum(SOURCES),
  property: Type.String(),
});
const StringMap = (description: string) =>
  Type.Record(
    Type.String(),
    Type.Unsafe<string | string[]>({ description: 'A string or an array of strings' }),
    {
      description,
    },
  );

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
/**
 * A choice of step schemas by `step_type`, as an if/then/else chain: the serialiser tests one constant
 * per branch instead of validating the step against every branch as it would for anyOf.
 */
function byStepType<T extends TObject[]>(branches: [...T]): TUnsafe<Static<T[number]>> {
  const chain = branches.reduceRight<Record<string, unknown> | undefined>((otherwise, branch) => {
    if (!otherwise) return branch;
    return {
      if: {
        type: 'object',
        properties: { step_type: { const: (branch.properties.step_type as TLiteral).const } },
        required: ['step_type'],
      },
      then: branch,
      else: otherwise,
    };
  }, undefined);
  return Type.Unsafe<Static<T[number]>>(chain!);
}

const EmbeddedStepOut = byStepType([RequestStepOut, PauseStepOut, SubtestStepOut, PartnerInspectorStepOut]);
const ConditionStepOut = Type.Object({
  id: Type.String(),
  step_type: Type.Literal('condition'),
  left_value: Type.String(),
  comparison: StringEnum(COMPARISONS),
  right_value: Type.String(),
  steps: Type.Array(EmbeddedStepOut),
});

/** A step as served (spec 2.4). */
export const StepOut = byStepType([
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
