import { type Comparator, compareNumbers } from './values.js';

export const isLessThanOrEqual: Comparator = (actual, target) =>
  compareNumbers(actual, target, (a, t) => a <= t);
