import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from './schema.js';

/** Where an assertion or a variable reads from (DESIGN §4). */
export const SOURCES = [
  'response_status',
  'response_headers',
  'response_json',
  'response_xml',
  'response_text',
  'response_time',
  'response_size',
] as const;
export type Source = (typeof SOURCES)[number];

/** How an assertion or a condition compares; `is_equal` is a synonym of `equal`. */
export const COMPARISONS = [
  'equal',
  'not_equal',
  'empty',
  'not_empty',
  'contains',
  'does_not_contain',
  'is_a_number',
  'equal_number',
  'is_less_than',
  'is_less_than_or_equal',
  'is_greater_than',
  'is_greater_than_or_equal',
  'has_key',
  'has_value',
  'is_null',
  'is_equal',
] as const;
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
