import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from './schema.js';
import { COMPARISONS, SOURCES } from './vocabulary.js';

export { COMPARISONS, SOURCES };

export type Source = (typeof SOURCES)[number];

export type Comparison = (typeof COMPARISONS)[number];

export const MAX_PROPERTY_LENGTH = 1_000;
export const MAX_VALUE_LENGTH = 10_000;

export const AssertionSchema = Type.Object({
  source: StringEnum(SOURCES),
  property: Type.Optional(Type.String({ maxLength: MAX_PROPERTY_LENGTH })),
  comparison: StringEnum(COMPARISONS),
  value: Type.Optional(Type.Union([Type.Number(), Type.String({ maxLength: MAX_VALUE_LENGTH })])),
});
export type AssertionInput = Static<typeof AssertionSchema>;

export interface Assertion {
  source: Source;
  property: string;
  comparison: Comparison;
  value: number | string;
}

export const VARIABLE_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_.\\-]{0,99}$';

export const VariableSchema = Type.Object({
  name: Type.String({ pattern: VARIABLE_NAME_PATTERN }),
  source: StringEnum(SOURCES),
  property: Type.Optional(Type.String({ maxLength: MAX_PROPERTY_LENGTH })),
});
export type VariableInput = Static<typeof VariableSchema>;

export interface Variable {
  name: string;
  source: Source;
  property: string;
}

export function normalizeAssertion(input: AssertionInput): Assertion {
  return {
    source: input.source,
    property: input.property ?? '',
    comparison: input.comparison,
    value: input.value ?? '',
  };
}

export function normalizeVariable(input: VariableInput): Variable {
  return { name: input.name, source: input.source, property: input.property ?? '' };
}
