import { isEmptyValue } from './empty.js';
import { type Comparator, verdict } from './values.js';

/** The negation of `empty`; the target is ignored. */
export const notEmpty: Comparator = (actual) => verdict(!isEmptyValue(actual));
