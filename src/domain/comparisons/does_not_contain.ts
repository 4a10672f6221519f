import { containsValue } from './contains.js';
import { type Comparator, verdict } from './values.js';

/** The negation of `contains`. */
export const doesNotContain: Comparator = (actual, target) => verdict(!containsValue(actual, target));
