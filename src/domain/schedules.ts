import { StringEnum } from './schema.js';

/** How often a schedule runs its test (DESIGN §3), with the length of each in seconds. */
export const SCHEDULE_INTERVALS = {
  '1m': 60,
  '5m': 300,
  '15m': 900,
  '30m': 1_800,
  '1h': 3_600,
  '6h': 21_600,
  '1d': 86_400,
} as const;
export type ScheduleInterval = keyof typeof SCHEDULE_INTERVALS;
export const INTERVAL_NAMES = Object.keys(SCHEDULE_INTERVALS) as ScheduleInterval[];
export const IntervalSchema = StringEnum(INTERVAL_NAMES);
