import { TIMEFRAMES } from './vocabulary.js';

export { TIMEFRAMES };

/**
 * Response-time and success metrics over a timeframe (DESIGN §4, metrics). Pure: takes finished
 * runs and answers the series and the percentiles of this period and the change from the last.
 */
export type Timeframe = (typeof TIMEFRAMES)[number];

/** Length of each timeframe and of one point of its series, in seconds. */
export const TIMEFRAME_SPANS: Readonly<Record<Timeframe, { period: number; step: number }>> = {
  hour: { period: 3_600, step: 60 },
  day: { period: 86_400, step: 3_600 },
  week: { period: 7 * 86_400, step: 6 * 3_600 },
  month: { period: 30 * 86_400, step: 86_400 },
};

export interface MetricRun {
  finished_at: number;
  result: string;
  response_time_ms: number | null;
}

export interface PeriodFigures {
  response_time_50th_percentile: number | null;
  response_time_95th_percentile: number | null;
  response_time_99th_percentile: number | null;
  total_test_runs: number;
  success_ratio: number | null;
}

export interface Metrics {
  response_times: { timestamp: number; avg_response_time_ms: number | null; success_ratio: number | null }[];
  this_time_period: PeriodFigures;
  /** Relative change from the previous period of the same length (0.1 = 10 % more); null without data. */
  change_from_last_period: {
    response_time_50th_percentile: number | null;
    response_time_95th_percentile: number | null;
    response_time_99th_percentile: number | null;
    total_test_runs: number | null;
    success_ratio: number | null;
  };
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

function round(value: number | null, digits = 3): number | null {
  if (value === null) return null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function periodFigures(runs: readonly MetricRun[]): PeriodFigures {
  const times = runs
    .map((r) => r.response_time_ms)
    .filter((t): t is number => t !== null)
    .sort((a, b) => a - b);
  const passed = runs.filter((r) => r.result === 'pass').length;
  return {
    response_time_50th_percentile: round(percentile(times, 50)),
    response_time_95th_percentile: round(percentile(times, 95)),
    response_time_99th_percentile: round(percentile(times, 99)),
    total_test_runs: runs.length,
    success_ratio: runs.length > 0 ? round(passed / runs.length, 4) : null,
  };
}

function change(current: number | null, previous: number | null): number | null {
  if (current === null || previous === null || previous === 0) return null;
  return round((current - previous) / previous, 4);
}

/**
 * `runs` covers the previous and this period (`now - 2 × period` to `now`); the series has
 * `period / step` points at multiples of the step, the last one holding `now`.
 */
export function computeMetrics(timeframe: Timeframe, runs: readonly MetricRun[], now: number): Metrics {
  const { period } = TIMEFRAME_SPANS[timeframe];
  const start = now - period;
  const current = runs.filter((r) => r.finished_at >= start && r.finished_at < now);
  const previous = runs.filter((r) => r.finished_at >= start - period && r.finished_at < start);
  const asSlots = current.map((r) => ({
    start: r.finished_at,
    runs: 1,
    passes: r.result === 'pass' ? 1 : 0,
    timed: r.response_time_ms === null ? 0 : 1,
    response_time_sum: r.response_time_ms ?? 0,
  }));
  return withChange(seriesOf(timeframe, now, asSlots), periodFigures(current), periodFigures(previous));
}

/** The series: `period / step` points at multiples of the step, the last one holding `now`. */
function seriesOf(
  timeframe: Timeframe,
  now: number,
  slots: readonly RollupSlot[],
): Metrics['response_times'] {
  const { step, count, lastPoint } = rollupWindow(timeframe, now);
  const points = new Map<number, { runs: number; passes: number; timed: number; sum: number }>();
  for (let i = count - 1; i >= 0; i--)
    points.set(lastPoint - i * step, { runs: 0, passes: 0, timed: 0, sum: 0 });
  for (const slot of slots) {
    const point = points.get(Math.floor(slot.start / step) * step);
    if (!point) continue;
    point.runs += slot.runs;
    point.passes += slot.passes;
    point.timed += slot.timed;
    point.sum += slot.response_time_sum;
  }
  return [...points].map(([timestamp, point]) => ({
    timestamp,
    avg_response_time_ms: point.timed > 0 ? round(point.sum / point.timed) : null,
    success_ratio: point.runs > 0 ? round(point.passes / point.runs, 4) : null,
  }));
}

function withChange(
  response_times: Metrics['response_times'],
  thisPeriod: PeriodFigures,
  lastPeriod: PeriodFigures,
): Metrics {
  return {
    response_times,
    this_time_period: thisPeriod,
    change_from_last_period: {
      response_time_50th_percentile: change(
        thisPeriod.response_time_50th_percentile,
        lastPeriod.response_time_50th_percentile,
      ),
      response_time_95th_percentile: change(
        thisPeriod.response_time_95th_percentile,
        lastPeriod.response_time_95th_percentile,
      ),
      response_time_99th_percentile: change(
        thisPeriod.response_time_99th_percentile,
        lastPeriod.response_time_99th_percentile,
      ),
      total_test_runs: change(thisPeriod.total_test_runs, lastPeriod.total_test_runs),
      success_ratio: change(thisPeriod.success_ratio, lastPeriod.success_ratio),
    },
  };
}

/**
 * Metric rollups: for the day, week and month timeframes, metrics are read from per-hour and
 * per-day rows of counts kept as runs finish, so that they cost the same whatever the length of a
 * test's history, and still count runs that result retention has since removed.
 *
 * Each row counts the runs of one test, environment and region in one hour or day whose response
 * time fell in one bucket of a logarithmic histogram (ratios of `LATENCY_BUCKET_RATIO`), or in
 * `NO_RESPONSE_TIME` when the run made no request. Percentiles are then read from the histogram: the
 * nearest-rank bucket's midpoint, within 2 % of the true value.
 */
export const LATENCY_BUCKET_RATIO = 1.04;
export const NO_RESPONSE_TIME = -1;
const LOG_RATIO = Math.log(LATENCY_BUCKET_RATIO);

/** The rollup grain a timeframe reads (the hour timeframe reads the runs themselves). */
export const ROLLUP_GRAIN: Readonly<Record<Timeframe, number | null>> = {
  hour: null,
  day: 3_600,
  week: 3_600,
  month: 86_400,
};
/** Every grain rows are kept for, in seconds. */
export const ROLLUP_GRAINS = [3_600, 86_400] as const;

/**
 * The histogram bucket of a response time: bucket b holds times in [r^b − 1, r^(b+1) − 1). This
 * function is part of the stored data: changing it would mix incompatible rows.
 */
export function latencyBucket(ms: number | null): number {
  if (ms === null || !Number.isFinite(ms)) return NO_RESPONSE_TIME;
  return Math.max(0, Math.floor(Math.log(Math.max(0, ms) + 1) / LOG_RATIO));
}

/** The value a bucket stands for: the middle of its range. */
export function bucketValue(bucket: number): number {
  const low = Math.exp(bucket * LOG_RATIO) - 1;
  const high = Math.exp((bucket + 1) * LOG_RATIO) - 1;
  return (low + high) / 2;
}

/** The runs of one grain-sized slot, every response-time bucket added up. */
export interface RollupSlot {
  /** Start of the slot, Unix seconds, a multiple of the grain. */
  start: number;
  runs: number;
  passes: number;
  /** Runs with a response time, and the sum of their response times. */
  timed: number;
  response_time_sum: number;
}

/** What metrics read from the rollups: the slots of both periods, and each period's histogram. */
export interface RollupRead {
  slots: RollupSlot[];
  /** Response-time bucket → runs, this period and the previous one. */
  current: ReadonlyMap<number, number>;
  previous: ReadonlyMap<number, number>;
}

/**
 * The series and periods of a timeframe read from rollups: the series' points are whole steps, the
 * last one holding `now`; this period is the span of the series (from its first point to `now`), the
 * previous one the same number of steps before it.
 */
export function rollupWindow(timeframe: Timeframe, now: number) {
  const { period, step } = TIMEFRAME_SPANS[timeframe];
  const count = Math.round(period / step);
  const lastPoint = Math.floor(now / step) * step;
  const first = lastPoint - (count - 1) * step;
  return { step, count, lastPoint, first, previousFirst: first - count * step };
}

/** Nearest-rank percentile of a histogram (bucket → count), as the bucket's value. */
function histogramPercentile(
  histogram: ReadonlyMap<number, number>,
  total: number,
  p: number,
): number | null {
  if (total === 0) return null;
  const rank = Math.min(total, Math.max(1, Math.ceil((p / 100) * total)));
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket)!;
    if (seen >= rank) return bucketValue(bucket);
  }
  return null;
}

function rollupFigures(
  slots: readonly RollupSlot[],
  histogram: ReadonlyMap<number, number>,
  exactTimes: readonly number[] | undefined,
): PeriodFigures {
  let runs = 0;
  let passes = 0;
  let timed = 0;
  for (const slot of slots) {
    runs += slot.runs;
    passes += slot.passes;
    timed += slot.timed;
  }
  // The stored runs give exact percentiles while they are all still there.
  const exact =
    exactTimes !== undefined && exactTimes.length === timed ? [...exactTimes].sort((a, b) => a - b) : null;
  const at = (p: number) => round(exact ? percentile(exact, p) : histogramPercentile(histogram, timed, p));
  return {
    response_time_50th_percentile: at(50),
    response_time_95th_percentile: at(95),
    response_time_99th_percentile: at(99),
    total_test_runs: runs,
    success_ratio: runs > 0 ? round(passes / runs, 4) : null,
  };
}

/**
 * Metrics of the day, week or month timeframe from what the rollups hold for both periods
 * (`rollupWindow`). `exact`, when given, holds the response times of the runs still stored in each
 * period; a period whose stored runs are all there takes its percentiles from them.
 */
export function computeRollupMetrics(
  timeframe: Timeframe,
  read: RollupRead,
  now: number,
  exact?: { current: readonly number[]; previous: readonly number[] },
): Metrics {
  const { first, previousFirst } = rollupWindow(timeframe, now);
  const current = read.slots.filter((slot) => slot.start >= first && slot.start <= now);
  const previous = read.slots.filter((slot) => slot.start >= previousFirst && slot.start < first);
  return withChange(
    seriesOf(timeframe, now, current),
    rollupFigures(current, read.current, exact?.current),
    rollupFigures(previous, read.previous, exact?.previous),
  );
}
