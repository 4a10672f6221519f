import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bucketValue,
  computeMetrics,
  computeRollupMetrics,
  latencyBucket,
  NO_RESPONSE_TIME,
  type RollupRead,
  type RollupSlot,
  rollupWindow,
} from '../../src/domain/metrics.js';

/** What the rollups of a set of runs hold at one grain, split into two periods at `split`. */
function readOf(
  runs: { finished_at: number; result: string; response_time_ms: number | null }[],
  grain: number,
  split: number,
): RollupRead {
  const slots = new Map<number, RollupSlot>();
  const current = new Map<number, number>();
  const previous = new Map<number, number>();
  for (const run of runs) {
    const start = Math.floor(run.finished_at / grain) * grain;
    const slot = slots.get(start) ?? { start, runs: 0, passes: 0, timed: 0, response_time_sum: 0 };
    slot.runs += 1;
    slot.passes += run.result === 'pass' ? 1 : 0;
    slots.set(start, slot);
    const bucket = latencyBucket(run.response_time_ms);
    if (bucket === NO_RESPONSE_TIME) continue;
    slot.timed += 1;
    slot.response_time_sum += run.response_time_ms!;
    const histogram = start >= split ? current : previous;
    histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
  }
  return { slots: [...slots.values()], current, previous };
}

describe('metric rollups', () => {
  test('a bucket’s value is within 2 % of (time + 1 ms) of every time in it', () => {
    assert.equal(latencyBucket(null), NO_RESPONSE_TIME);
    assert.equal(latencyBucket(0), 0);
    let previous = -1;
    for (let ms = 0; ms < 600_000; ms = ms < 10 ? ms + 0.25 : ms * 1.013) {
      const bucket = latencyBucket(ms);
      assert.ok(bucket >= previous, `buckets grow with the time (${ms} ms)`);
      previous = bucket;
      const value = bucketValue(bucket);
      // Buckets are 4 % of (time + 1 ms) wide: their middle is within 2 % of it.
      assert.ok(Math.abs(value - ms) <= 0.02 * (ms + 1) + 1e-9, `${ms} ms stands as ${value}`);
    }
  });

  test('the periods are whole steps, the last one holding now', () => {
    const now = Date.UTC(2026, 10, 25, 13, 20) / 1000;
    const month = rollupWindow('month', now);
    assert.equal(month.count, 30);
    assert.equal(month.lastPoint, Date.UTC(2026, 10, 25) / 1000);
    assert.equal(month.first, Date.UTC(2026, 9, 27) / 1000);
    assert.equal(month.previousFirst, Date.UTC(2026, 8, 27) / 1000);
    const day = rollupWindow('day', now);
    assert.equal(day.first, Date.UTC(2026, 10, 24, 14) / 1000);
  });

  test('counts, ratios and averages are exact; histogram percentiles are within 2 %; stored runs make them exact', () => {
    const now = Date.UTC(2026, 10, 25, 13, 20) / 1000;
    const { first, previousFirst } = rollupWindow('day', now);
    // 3,000 runs over both periods, response times spread over three orders of magnitude.
    const runs = Array.from({ length: 3_000 }, (_, i) => ({
      finished_at: previousFirst + ((now - previousFirst) * i) / 3_000,
      result: i % 7 === 0 ? 'fail' : 'pass',
      response_time_ms: i % 50 === 0 ? null : 5 + ((i * 7919) % 2_000) * 1.7,
    }));
    const cells = readOf(runs, 3_600, first);
    const estimated = computeRollupMetrics('day', cells, now);
    const current = runs.filter((r) => r.finished_at >= first);
    const previous = runs.filter((r) => r.finished_at < first);
    const times = (list: typeof runs) =>
      list.flatMap((r) => (r.response_time_ms === null ? [] : [r.response_time_ms]));
    const exact = computeRollupMetrics('day', cells, now, {
      current: times(current),
      previous: times(previous),
    });

    // What the stored runs say, computed the plain way over the same span.
    const plain = computeMetrics('day', current, now);
    assert.equal(estimated.this_time_period.total_test_runs, current.length);
    assert.equal(estimated.this_time_period.success_ratio, plain.this_time_period.success_ratio);
    assert.deepEqual(estimated.response_times, plain.response_times);
    // With every stored run there, the percentiles are the plain ones.
    assert.deepEqual(exact.this_time_period, plain.this_time_period);
    for (const p of ['50th', '95th', '99th'] as const) {
      const key = `response_time_${p}_percentile` as const;
      const truth = plain.this_time_period[key]!;
      const guess = estimated.this_time_period[key]!;
      assert.ok(Math.abs(guess - truth) <= truth * 0.02, `${p}: ${guess} for ${truth}`);
    }
    assert.ok(estimated.change_from_last_period.total_test_runs !== null);

    // A period whose stored runs are not all there (retention removed some) keeps the estimate.
    const partial = computeRollupMetrics('day', cells, now, {
      current: times(current).slice(1),
      previous: times(previous),
    });
    assert.deepEqual(partial.this_time_period, estimated.this_time_period);
  });

  test('no runs: null figures and a full series', () => {
    const metrics = computeRollupMetrics(
      'week',
      { slots: [], current: new Map(), previous: new Map() },
      Date.UTC(2026, 10, 25) / 1000,
    );
    assert.equal(metrics.response_times.length, 28);
    assert.equal(metrics.this_time_period.total_test_runs, 0);
    assert.equal(metrics.this_time_period.response_time_50th_percentile, null);
    assert.equal(metrics.change_from_last_period.total_test_runs, null);
  });
});
