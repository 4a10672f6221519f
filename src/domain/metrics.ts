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
  const { period, step } = TIMEFRAME_SPANS[timeframe];
  const start = now - period;
  const current = runs.filter((r) => r.finished_at >= start && r.finished_at < now);
  const previous = runs.filter((r) => r.finished_at >= start - period && r.finished_at < start);
  // period / step points, the last one holding `now`.
  const count = Math.round(period / step);
  const lastPoint = Math.floor(now / step) * step;
  const points = new Map<number, MetricRun[]>();
  for (let i = count - 1; i >= 0; i--) points.set(lastPoint - i * step, []);
  for (const run of current) points.get(Math.floor(run.finished_at / step) * step)?.push(run);
  const response_times = [...points].map(([timestamp, inPoint]) => {
    const times = inPoint.map((r) => r.response_time_ms).filter((t): t is number => t !== null);
    return {
      timestamp,
      avg_response_time_ms: times.length > 0 ? round(times.reduce((a, b) => a + b, 0) / times.length) : null,
      success_ratio:
        inPoint.length > 0
          ? round(inPoint.filter((r) => r.result === 'pass').length / inPoint.length, 4)
          : null,
    };
  });
  const thisPeriod = periodFigures(current);
  const lastPeriod = periodFigures(previous);
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
