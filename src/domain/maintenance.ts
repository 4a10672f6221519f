/**
 * Maintenance windows (docs/alerting.md): a one-off span, or a weekly one in an IANA time zone,
 * during which a bucket's (or one test's) schedules pause or run with their notifications muted.
 * Pure: the weekly recurrence is worked out in wall-clock time of the zone, so a window keeps its
 * local start across daylight-saving changes.
 */
import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from './schema.js';

export const MAINTENANCE_MODES = ['pause', 'mute'] as const;
export type MaintenanceMode = (typeof MAINTENANCE_MODES)[number];

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The longest weekly window: one week (a longer one would overlap itself). */
export const MAX_WEEKLY_MINUTES = 7 * 24 * 60;

export const WeeklySchema = Type.Object(
  {
    days: Type.Array(StringEnum(WEEKDAYS), { minItems: 1, maxItems: 7, uniqueItems: true }),
    start_time: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, local' }),
    duration_minutes: Type.Integer({ minimum: 1, maximum: MAX_WEEKLY_MINUTES }),
    time_zone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA name, e.g. Europe/Berlin' }),
  },
  { additionalProperties: false },
);
export type Weekly = Static<typeof WeeklySchema>;

const windowFields = {
  test_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
  mode: StringEnum(MAINTENANCE_MODES),
  note: Type.Optional(Type.Union([Type.String({ maxLength: 1_000 }), Type.Null()])),
  starts_at: Type.Optional(
    Type.Union([Type.Number({ minimum: 0, description: 'One-off start, Unix seconds' }), Type.Null()]),
  ),
  ends_at: Type.Optional(
    Type.Union([Type.Number({ minimum: 0, description: 'One-off end, Unix seconds' }), Type.Null()]),
  ),
  weekly: Type.Optional(Type.Union([WeeklySchema, Type.Null()])),
};

export const MaintenanceWindowInput = Type.Object(windowFields);
export type MaintenanceWindowInput = Static<typeof MaintenanceWindowInput>;

export const MaintenanceWindowPatch = Type.Partial(Type.Object(windowFields));
export type MaintenanceWindowPatch = Static<typeof MaintenanceWindowPatch>;

/** When a window applies: a one-off span, or weekly recurrence. */
export type WindowTiming =
  { kind: 'once'; starts_at: number; ends_at: number } | { kind: 'weekly'; weekly: Weekly };

/** A problem with a window's timing, naming the field. */
export interface TimingProblem {
  field: string;
  message: string;
}

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The timing of a window from its fields: exactly one of a one-off span and `weekly`. */
export function timingOf(fields: {
  starts_at?: number | null | undefined;
  ends_at?: number | null | undefined;
  weekly?: Weekly | null | undefined;
}): WindowTiming | TimingProblem {
  const { starts_at, ends_at, weekly } = fields;
  const once = starts_at != null || ends_at != null;
  if (weekly != null) {
    if (once)
      return { field: '/weekly', message: 'is given with starts_at/ends_at; a window is one or the other' };
    if (!isTimeZone(weekly.time_zone)) {
      return { field: '/weekly/time_zone', message: `"${weekly.time_zone}" is not an IANA time zone` };
    }
    return { kind: 'weekly', weekly: { ...weekly, days: [...weekly.days] } };
  }
  if (starts_at == null) return { field: '/starts_at', message: 'is required unless the window is weekly' };
  if (ends_at == null) return { field: '/ends_at', message: 'is required unless the window is weekly' };
  if (ends_at <= starts_at) return { field: '/ends_at', message: 'must be after starts_at' };
  return { kind: 'once', starts_at, ends_at };
}

/** Whether the window covers the instant `at` (Unix seconds): start included, end excluded. */
export function covers(timing: WindowTiming, at: number): boolean {
  if (timing.kind === 'once') return timing.starts_at <= at && at < timing.ends_at;
  const { days, start_time, duration_minutes, time_zone } = timing.weekly;
  const [hour, minute] = start_time.split(':').map(Number) as [number, number];
  const durationSeconds = duration_minutes * 60;
  // An occurrence covering `at` started on the local day of `at` or up to a week before it.
  const today = localDate(at, time_zone);
  for (let back = 0; back <= Math.ceil(duration_minutes / (24 * 60)); back++) {
    const day = addDays(today, -back);
    if (!days.includes(WEEKDAYS[day.weekday]!)) continue;
    const start = zonedToUnix({ ...day, hour, minute }, time_zone);
    if (start <= at && at < start + durationSeconds) return true;
  }
  return false;
}

/**
 * The spans of the window that overlap `[from, until)` (Unix seconds), oldest first: the one-off
 * window itself, or each weekly occurrence (an occurrence may have started before `from`).
 */
export function occurrences(
  timing: WindowTiming,
  from: number,
  until: number,
): { starts_at: number; ends_at: number }[] {
  if (timing.kind === 'once')
    return timing.starts_at < until && timing.ends_at > from
      ? [{ starts_at: timing.starts_at, ends_at: timing.ends_at }]
      : [];
  const { days, start_time, duration_minutes, time_zone } = timing.weekly;
  const [hour, minute] = start_time.split(':').map(Number) as [number, number];
  const durationSeconds = duration_minutes * 60;
  const found: { starts_at: number; ends_at: number }[] = [];
  const first = addDays(localDate(from, time_zone), -Math.ceil(duration_minutes / (24 * 60)));
  const last = localDate(until, time_zone);
  for (let day = first; ; day = addDays(day, 1)) {
    if (days.includes(WEEKDAYS[day.weekday]!)) {
      const start = zonedToUnix({ ...day, hour, minute }, time_zone);
      if (start < until && start + durationSeconds > from)
        found.push({ starts_at: start, ends_at: start + durationSeconds });
    }
    if (day.year === last.year && day.month === last.month && day.day === last.day) break;
  }
  return found;
}

interface LocalDate {
  year: number;
  month: number;
  day: number;
  /** 0 = Sunday. */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let known = formatters.get(timeZone);
  if (!known) {
    known = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, known);
  }
  return known;
}

/** The wall-clock fields of an instant in a zone. */
function wallClock(unixSeconds: number, timeZone: string) {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(unixSeconds * 1000))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

function localDate(unixSeconds: number, timeZone: string): LocalDate {
  const { year, month, day } = wallClock(unixSeconds, timeZone);
  return { year, month, day, weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay() };
}

function addDays(date: LocalDate, days: number): LocalDate {
  const shifted = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
    weekday: shifted.getUTCDay(),
  };
}

/** The zone's offset from UTC at an instant, in seconds. */
function offsetAt(unixSeconds: number, timeZone: string): number {
  const w = wallClock(unixSeconds, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) / 1000;
  return asUtc - Math.floor(unixSeconds);
}

/**
 * The instant a local wall-clock time happens in the zone. A time skipped by a spring-forward
 * change is moved forward by the change (02:30 becomes 03:30); a time that happens twice is the first.
 */
export function zonedToUnix(
  local: { year: number; month: number; day: number; hour: number; minute: number },
  timeZone: string,
): number {
  const naive = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute) / 1000;
  // The zone's offsets a day either side hold both sides of any change near this day.
  const before = offsetAt(naive - 86_400, timeZone);
  const after = offsetAt(naive + 86_400, timeZone);
  const shows = (t: number) => {
    const w = wallClock(t, timeZone);
    return w.hour === local.hour && w.minute === local.minute && w.day === local.day;
  };
  const candidates = [naive - before, naive - after].filter(shows).sort((a, b) => a - b);
  // None shows the time: it was skipped; the offset before the change moves it forward.
  return candidates[0] ?? naive - before;
}
