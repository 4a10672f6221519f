import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

/** A string enum as a plain JSON Schema `enum`, so validation errors list the allowed values. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** Header-like maps: a name to one string or an array of strings. */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$";

/**
 * A map whose every key must match `key` (as `propertyNames`, so a bad name is refused with the name
 * in the error rather than slipping past a `patternProperties` match) and every value `value`.
 */
export function StringMap<V extends TSchema>(
  key: { pattern?: string; minLength?: number; maxLength?: number },
  value: V,
  options: { maxProperties: number },
): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>({
    type: 'object',
    propertyNames: { type: 'string', ...key },
    additionalProperties: value,
    maxProperties: options.maxProperties,
  });
}
