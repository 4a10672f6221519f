import { type Comparator, isRecord, toComparableString, verdict } from './values.js';

/**
 * Arrays: some element equals the target as text. Objects: an own key named the target.
 * Anything else: the target is a substring of the value's text (`200` contains `"20"`).
 */
export function containsValue(actual: unknown, target: string | number): boolean {
  const wanted = toComparableString(target);
  if (Array.isArray(actual)) return actual.some((item) => toComparableString(item) === wanted);
  if (isRecord(actual)) return Object.hasOwn(actual, wanted);
  return toComparableString(actual).includes(wanted);
}

export const contains: Comparator = (actual, target) => verdict(containsValue(actual, target));
