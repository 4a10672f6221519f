import { type Comparator, compareNumbers } from './values.js';

export const isGreaterThan: Comparator = (actual, target) => compareNumbers(actual, target, (a, t) => a > t);
