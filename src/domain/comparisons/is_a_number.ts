import { type Comparator, parseNumber, verdict } from './values.js';

/** A finite number or a string holding a decimal number; the target is ignored. */
export const isANumber: Comparator = (actual) => verdict(parseNumber(actual) !== undefined);
