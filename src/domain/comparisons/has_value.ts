import { type Comparator, describeValue, failure, isRecord, toComparableString, verdict } from './values.js';

/**
 * Objects and arrays: some direct value (not a nested one) equals the target as text. Other values
 * cannot hold values and fail with an error.
 */
export const hasValue: Comparator = (actual, target) => {
  const values = Array.isArray(actual) ? actual : isRecord(actual) ? Object.values(actual) : undefined;
  if (values === undefined) {
    return failure(`actual value ${describeValue(actual)} is not an object or an array`);
  }
  const wanted = toComparableString(target);
  return verdict(values.some((value) => toComparableString(value) === wanted));
};
