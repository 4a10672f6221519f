import type { Comparison } from '../assertions.js';
import { contains } from './contains.js';
import { doesNotContain } from './does_not_contain.js';
import { empty } from './empty.js';
import { equal } from './equal.js';
import { equalNumber } from './equal_number.js';
import { hasKey } from './has_key.js';
import { hasValue } from './has_value.js';
import { isANumber } from './is_a_number.js';
import { isGreaterThan } from './is_greater_than.js';
import { isGreaterThanOrEqual } from './is_greater_than_or_equal.js';
import { isLessThan } from './is_less_than.js';
import { isLessThanOrEqual } from './is_less_than_or_equal.js';
import { isNull } from './is_null.js';
import { notEmpty } from './not_empty.js';
import { notEqual } from './not_equal.js';
import type { Comparator, ComparisonResult } from './values.js';

export type { Comparator, ComparisonResult } from './values.js';

/** Every comparison of `COMPARISONS` to its implementation; a missing entry fails the build. */
const COMPARATORS: Readonly<Record<Comparison, Comparator>> = {
  equal,
  is_equal: equal,
  not_equal: notEqual,
  empty,
  not_empty: notEmpty,
  contains,
  does_not_contain: doesNotContain,
  is_a_number: isANumber,
  equal_number: equalNumber,
  is_less_than: isLessThan,
  is_less_than_or_equal: isLessThanOrEqual,
  is_greater_than: isGreaterThan,
  is_greater_than_or_equal: isGreaterThanOrEqual,
  has_key: hasKey,
  has_value: hasValue,
  is_null: isNull,
};

/** Compares the actual value with the target using `comparison` (DESIGN §4). Pure. */
export function compare(comparison: Comparison, actual: unknown, target: string | number): ComparisonResult {
  const comparator = Object.hasOwn(COMPARATORS, comparison) ? COMPARATORS[comparison] : undefined;
  if (comparator === undefined)
    return { pass: false, error: `unknown comparison ${JSON.stringify(comparison)}` };
  return comparator(actual, target);
}
