import { type Comparator, verdict } from './values.js';

/**
 * Only a real `null` (such as JSON `null` read by a path). A missing value is not null, nor is the
 * text `"null"`. The target is ignored.
 */
export const isNull: Comparator = (actual) => verdict(actual === null);
