import { equal } from './equal.js';
import { type Comparator, verdict } from './values.js';

/** The negation of `equal`. */
export const notEqual: Comparator = (actual, target) => verdict(!equal(actual, target).pass);
