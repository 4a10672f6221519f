import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  type Assertion,
  AssertionSchema,
  COMPARISONS,
  type Comparison,
  normalizeAssertion,
  normalizeVariable,
  type Variable,
  VariableSchema,
} from './assertions.js';
import { type Auth, AuthSchema, normalizeAuth } from './auth.js';
import { HEADER_NAME_PATTERN, OrNull, StringEnum, StringMap } from './schema.js';
import { STEP_TYPES } from './vocabulary.js';

export { STEP_TYPES };

export type StepType = (typeof STEP_TYPES)[number];

export const LIMITS = {
  stepsPerTest: 200,
  stepsPerCondition: 100,
  assertionsPerStep: 100,
  variablesPerStep: 100,
  scriptsPerStep: 20,
  scriptLength: 100_000,
  urlLength: 8_192,
  bodyLength: 1_000_000,
  noteLength: 2_000,
  headerCount: 100,
  pauseSeconds: { min: 1, max: 180 },
} as const;

// Every optional field of a step write also takes null, meaning "not given" (clients of the original
// service send unset fields as null).
const text = (maxLength: number) => OrNull(Type.String({ maxLength }));
const uuidOrEmpty = () => OrNull(Type.String({ anyOf: [{ format: 'uuid' }, { maxLength: 0 }] }));

/** Header name to one string or an array of strings. */
export const HeaderMapSchema = StringMap(
  { pattern: HEADER_NAME_PATTERN },
  Type.Union([
    Type.String({ maxLength: 16_384 }),
    Type.Array(Type.String({ maxLength: 16_384 }), { maxItems: 100 }),
  ]),
  { maxProperties: LIMITS.headerCount },
);
export const FormMapSchema = StringMap(
  { minLength: 1, maxLength: 1_000 },
  Type.Union([
    Type.String({ maxLength: 100_000 }),
    Type.Array(Type.String({ maxLength: 100_000 }), { maxItems: 100 }),
  ]),
  { maxProperties: 1_000 },
);

const assertions = () => OrNull(Type.Array(AssertionSchema, { maxItems: LIMITS.assertionsPerStep }));
const variables = () => OrNull(Type.Array(VariableSchema, { maxItems: LIMITS.variablesPerStep }));
const scripts = () =>
  OrNull(Type.Array(Type.String({ maxLength: LIMITS.scriptLength }), { maxItems: LIMITS.scriptsPerStep }));
const stepId = () => Type.Optional(Type.String({ maxLength: 64 }));

export const RequestStepInput = Type.Object({
  id: stepId(),
  step_type: Type.Literal('request'),
  method: OrNull(Type.String({ pattern: '^[A-Za-z]{1,20}$' })),
  url: text(LIMITS.urlLength),
  body: text(LIMITS.bodyLength),
  form: OrNull(FormMapSchema),
  headers: OrNull(HeaderMapSchema),
  auth: OrNull(AuthSchema),
  assertions: assertions(),
  variables: variables(),
  scripts: scripts(),
  before_scripts: scripts(),
  skipped: OrNull(Type.Boolean()),
  note: text(LIMITS.noteLength),
});

export const PauseStepInput = Type.Object({
  id: stepId(),
  step_type: Type.Literal('pause'),
  duration: OrNull(Type.Integer({ minimum: LIMITS.pauseSeconds.min, maximum: LIMITS.pauseSeconds.max })),
});

export const SubtestStepInput = Type.Object({
  id: stepId(),
  step_type: Type.Literal('subtest'),
  test_uuid: Type.String({ format: 'uuid' }),
  environment_uuid: uuidOrEmpty(),
  bucket_key: text(64),
  assertions: assertions(),
  variables: variables(),
  params: OrNull(
    Type.Array(
      Type.Object({
        name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.\\-]{0,99}$' }),
        value: Type.String({ maxLength: 10_000 }),
      }),
      { maxItems: 100 },
    ),
  ),
});

export const PartnerInspectorStepInput = Type.Object({
  id: stepId(),
  step_type: Type.Literal('partner-inspector'),
  integration_id: uuidOrEmpty(),
  suite_id: text(256),
  test_id: text(256),
  is_custom_start_url: OrNull(Type.Boolean()),
  start_url: text(LIMITS.urlLength),
  assertions: assertions(),
  variables: variables(),
});

/** Oneof by `step_type`; validators pick the branch by the tag, so errors speak of that type only. */
function discriminated<T extends TSchema[]>(branches: [...T]) {
  return Type.Unsafe<Static<T[number]>>({
    type: 'object',
    required: ['step_type'],
    discriminator: { propertyName: 'step_type' },
    oneOf: branches,
  });
}

/** Steps that may sit inside a condition: every type but condition. */
export const EmbeddedStepInput = discriminated([
  RequestStepInput,
  PauseStepInput,
  SubtestStepInput,
  PartnerInspectorStepInput,
]);

export const ConditionStepInput = Type.Object({
  id: stepId(),
  step_type: Type.Literal('condition'),
  left_value: text(LIMITS.urlLength),
  comparison: OrNull(StringEnum(COMPARISONS)),
  right_value: text(LIMITS.urlLength),
  steps: OrNull(Type.Array(EmbeddedStepInput, { maxItems: LIMITS.stepsPerCondition })),
});

/** Properties a step of each type must have: null cannot stand for them ("not given"). */
export const REQUIRED_STEP_FIELDS: Record<StepType, readonly string[]> = {
  request: RequestStepInput.required ?? [],
  pause: PauseStepInput.required ?? [],
  condition: ConditionStepInput.required ?? [],
  subtest: SubtestStepInput.required ?? [],
  'partner-inspector': PartnerInspectorStepInput.required ?? [],
};

export const StepInput = discriminated([
  RequestStepInput,
  PauseStepInput,
  ConditionStepInput,
  SubtestStepInput,
  PartnerInspectorStepInput,
]);
export type StepInput = Static<typeof StepInput>;
export type EmbeddedStepInput = Static<typeof EmbeddedStepInput>;

export interface RequestStep {
  id: string;
  step_type: 'request';
  method: string;
  url: string;
  body: string;
  form: Record<string, string | string[]>;
  headers: Record<string, string[]>;
  auth: Auth;
  assertions: Assertion[];
  variables: Variable[];
  scripts: string[];
  before_scripts: string[];
  skipped: boolean;
  note: string;
}

export interface PauseStep {
  id: string;
  step_type: 'pause';
  /** Seconds. */
  duration: number;
}

export interface SubtestStep {
  id: string;
  step_type: 'subtest';
  test_uuid: string;
  environment_uuid: string;
  bucket_key: string;
  assertions: Assertion[];
  variables: Variable[];
  params: { name: string; value: string }[];
}

export interface PartnerInspectorStep {
  id: string;
  step_type: 'partner-inspector';
  integration_id: string;
  suite_id: string;
  test_id: string;
  is_custom_start_url: boolean;
  start_url: string;
  assertions: Assertion[];
  variables: Variable[];
}

export type EmbeddedStep = RequestStep | PauseStep | SubtestStep | PartnerInspectorStep;

export interface ConditionStep {
  id: string;
  step_type: 'condition';
  left_value: string;
  comparison: Comparison;
  right_value: string;
  steps: EmbeddedStep[];
}

export type Step = EmbeddedStep | ConditionStep;

/** Header values given as one string become one-element arrays. */
export function normalizeHeaders(
  headers: Record<string, string | string[]> | null | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {}))
    out[name] = Array.isArray(value) ? value : [value];
  return out;
}

/**
 * Turns validated input into a complete step with every field of its type, defaults filled in and
 * unknown properties dropped. `idFor` chooses the id (a kept one or a new one) for each step.
 */
export function normalizeStep(input: StepInput, idFor: (input: { id?: string }) => string): Step {
  if (input.step_type === 'condition') {
    return {
      id: idFor(input),
      step_type: 'condition',
      left_value: input.left_value ?? '',
      comparison: input.comparison ?? 'equal',
      right_value: input.right_value ?? '',
      steps: (input.steps ?? []).map((s) => normalizeEmbeddedStep(s, idFor)),
    };
  }
  return normalizeEmbeddedStep(input, idFor);
}

export function normalizeEmbeddedStep(
  input: EmbeddedStepInput,
  idFor: (input: { id?: string }) => string,
): EmbeddedStep {
  switch (input.step_type) {
    case 'request':
      return {
        id: idFor(input),
        step_type: 'request',
        method: (input.method ?? 'GET').toUpperCase(),
        url: input.url ?? '',
        body: input.body ?? '',
        form: input.form ?? {},
        headers: normalizeHeaders(input.headers),
        auth: normalizeAuth(input.auth),
        assertions: (input.assertions ?? []).map(normalizeAssertion),
        variables: (input.variables ?? []).map(normalizeVariable),
        scripts: input.scripts ?? [],
        before_scripts: input.before_scripts ?? [],
        skipped: input.skipped ?? false,
        note: input.note ?? '',
      };
    case 'pause':
      return { id: idFor(input), step_type: 'pause', duration: input.duration ?? 1 };
    case 'subtest':
      return {
        id: idFor(input),
        step_type: 'subtest',
        test_uuid: input.test_uuid,
        environment_uuid: input.environment_uuid ?? '',
        bucket_key: input.bucket_key ?? '',
        assertions: (input.assertions ?? []).map(normalizeAssertion),
        variables: (input.variables ?? []).map(normalizeVariable),
        params: (input.params ?? []).map((p) => ({ name: p.name, value: p.value })),
      };
    case 'partner-inspector':
      return {
        id: idFor(input),
        step_type: 'partner-inspector',
        integration_id: input.integration_id ?? '',
        suite_id: input.suite_id ?? '',
        test_id: input.test_id ?? '',
        is_custom_start_url: input.is_custom_start_url ?? false,
        start_url: input.start_url ?? '',
        assertions: (input.assertions ?? []).map(normalizeAssertion),
        variables: (input.variables ?? []).map(normalizeVariable),
      };
  }
}

/** The step every new test starts with (spec 2.2). */
export function defaultRequestStep(id: string): RequestStep {
  return normalizeEmbeddedStep(
    {
      step_type: 'request',
      method: 'GET',
      url: '',
      assertions: [{ source: 'response_status', comparison: 'is_equal', value: 200 }],
    },
    () => id,
  ) as RequestStep;
}

/** Every step id of a step list, embedded steps included, in order. */
export function stepIds(steps: readonly Step[]): string[] {
  const ids: string[] = [];
  for (const step of steps) {
    ids.push(step.id);
    if (step.step_type === 'condition') for (const inner of step.steps) ids.push(inner.id);
  }
  return ids;
}

export function findStep(steps: readonly Step[], id: string): Step | undefined {
  for (const step of steps) {
    if (step.id === id) return step;
    if (step.step_type === 'condition') {
      const inner = step.steps.find((s) => s.id === id);
      if (inner) return inner;
    }
  }
  return undefined;
}
