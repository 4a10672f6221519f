import { type Comparator, toComparableString, verdict } from './values.js';

/** Both sides compared as text (see `toComparableString`): `200` equals `"200"`, `1` does not equal `"1.0"`. */
export const equal: Comparator = (actual, target) =>
  verdict(toComparableString(actual) === toComparableString(target));
