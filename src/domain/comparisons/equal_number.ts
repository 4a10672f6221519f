import { type Comparator, compareNumbers } from './values.js';

/** Both sides parsed as numbers: `"1.000"` equals `1`. */
export const equalNumber: Comparator = (actual, target) => compareNumbers(actual, target, (a, t) => a === t);
