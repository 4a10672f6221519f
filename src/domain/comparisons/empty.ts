import { type Comparator, isRecord, verdict } from './values.js';

/** A missing value, `null`, `""`, `[]` or `{}`. Whitespace, `0` and `false` are not empty. */
export function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isRecord(value) && Object.keys(value).length === 0;
}

/** Passes when the actual value is empty; the target is ignored. */
export const empty: Comparator = (actual) => verdict(isEmptyValue(actual));
