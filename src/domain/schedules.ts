import { StringEnum } from './schema.js';
import { SCHEDULE_INTERVALS } from './vocabulary.js';

export { SCHEDULE_INTERVALS };

export type ScheduleInterval = keyof typeof SCHEDULE_INTERVALS;
export const INTERVAL_NAMES = Object.keys(SCHEDULE_INTERVALS) as ScheduleInterval[];

/** The original service's fractional spelling of each interval (`1.0h`), accepted on writes. */
const FRACTIONAL_NAMES = INTERVAL_NAMES.map((name) => name.replace(/^(\d+)/, '$1.0'));

export const IntervalSchema = StringEnum([...INTERVAL_NAMES, ...FRACTIONAL_NAMES] as readonly string[], {
  description: `One of ${INTERVAL_NAMES.join(', ')}; the fractional form (1.0h) is accepted and answered canonically`,
});

/** The canonical name of an interval given in either form (`1.0h` → `1h`). */
export function canonicalInterval(value: string): ScheduleInterval {
  const name = value.replace(/^(\d+)\.0(?=[a-z]$)/, '$1');
  if (!(INTERVAL_NAMES as string[]).includes(name)) throw new Error(`unknown schedule interval ${value}`);
  return name as ScheduleInterval;
}
