import { StringEnum } from './schema.js';
import { SCHEDULE_INTERVALS } from './vocabulary.js';

export { SCHEDULE_INTERVALS };

export type ScheduleInterval = keyof typeof SCHEDULE_INTERVALS;
export const INTERVAL_NAMES = Object.keys(SCHEDULE_INTERVALS) as ScheduleInterval[];
export const IntervalSchema = StringEnum(INTERVAL_NAMES);
