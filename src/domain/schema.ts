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

/**
 * An optional property that also takes `null`, which on a write means "not given": clients of the
 * original service serialise an unset field as null (docs/runscope-compat.md).
 */
export function OrNull<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  const nullable =
    typeof type === 'string'
      ? { ...schema, type: [type, 'null'] }
      : { anyOf: [schema, { type: 'null' }], description: (schema as { description?: string }).description };
  return Type.Optional(Type.Unsafe<Static<T> | null>(nullable));
}

type WithoutNull<T, K extends keyof T> = Omit<T, K> & { [P in K]?: Exclude<T[P], null> };

/** A copy of `input` without the listed properties that hold null ("not given" on a write). */
export function dropNulls<T extends object, K extends keyof T>(
  input: T,
  keys: readonly K[],
): WithoutNull<T, K> {
  const out = { ...input } as Record<PropertyKey, unknown>;
  for (const key of keys) if (out[key] === null) delete out[key];
  return out as WithoutNull<T, K>;
}
