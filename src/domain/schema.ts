import { type TUnsafe, Type } from '@sinclair/typebox';

/** A string enum as a plain JSON Schema `enum`, so validation errors list the allowed values. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** Header-like maps: a name to one string or an array of strings. */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$";
