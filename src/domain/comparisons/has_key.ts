import { type Comparator, describeValue, failure, isRecord, toComparableString, verdict } from './values.js';

/**
 * Objects: an own key named the target. Arrays: the target is an index in range (`0` … `length - 1`,
 * written as a whole number). Other values cannot have keys and fail with an error.
 */
export const hasKey: Comparator = (actual, target) => {
  const key = toComparableString(target).trim();
  if (isRecord(actual)) return verdict(Object.hasOwn(actual, toComparableString(target)));
  if (Array.isArray(actual)) return verdict(/^\d+$/.test(key) && Number(key) < actual.length);
  return failure(`actual value ${describeValue(actual)} is not an object or an array`);
};
