import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  covers,
  occurrences,
  timingOf,
  type Weekly,
  type WindowTiming,
  zonedToUnix,
} from '../../src/domain/maintenance.js';

const at = (iso: string) => Date.parse(iso) / 1000;
const weekly = (fields: Partial<Weekly>): WindowTiming => ({
  kind: 'weekly',
  weekly: { days: ['sun'], start_time: '02:00', duration_minutes: 60, time_zone: 'UTC', ...fields },
});

describe('maintenance window timing', () => {
  test('one-off: start included, end excluded', () => {
    const timing = timingOf({ starts_at: 100, ends_at: 200 });
    assert.deepEqual(timing, { kind: 'once', starts_at: 100, ends_at: 200 });
    const once = timing as WindowTiming;
    assert.equal(covers(once, 99.9), false);
    assert.equal(covers(once, 100), true);
    assert.equal(covers(once, 199.9), true);
    assert.equal(covers(once, 200), false);
  });

  test('timing problems name the field', () => {
    assert.deepEqual(timingOf({}), {
      field: '/starts_at',
      message: 'is required unless the window is weekly',
    });
    assert.deepEqual(timingOf({ starts_at: 5 }), {
      field: '/ends_at',
      message: 'is required unless the window is weekly',
    });
    assert.deepEqual(timingOf({ starts_at: 5, ends_at: 5 }), {
      field: '/ends_at',
      message: 'must be after starts_at',
    });
    assert.equal((timingOf({ starts_at: 5, weekly: weeklyFields() }) as { field: string }).field, '/weekly');
    assert.equal(
      (timingOf({ weekly: weeklyFields({ time_zone: 'Mars/Olympus' }) }) as { field: string }).field,
      '/weekly/time_zone',
    );
  });

  test('weekly in a time zone: the local start time on the listed days', () => {
    // Mondays and Wednesdays 22:30–01:00 in New York (EST, UTC-5 in January).
    const timing = weekly({
      days: ['mon', 'wed'],
      start_time: '22:30',
      duration_minutes: 150,
      time_zone: 'America/New_York',
    });
    assert.equal(covers(timing, at('2026-01-05T03:29:00Z')), false); // Sun 22:29 local
    assert.equal(covers(timing, at('2026-01-06T03:30:00Z')), true); // Mon 22:30 local
    assert.equal(covers(timing, at('2026-01-06T05:59:00Z')), true); // Tue 00:59 local, past midnight
    assert.equal(covers(timing, at('2026-01-06T06:00:00Z')), false); // Tue 01:00 local, ended
    assert.equal(covers(timing, at('2026-01-07T03:30:00Z')), false); // Tue 22:30 local
    assert.equal(covers(timing, at('2026-01-08T03:45:00Z')), true); // Wed 22:45 local
  });

  test('weekly across a DST change keeps its local start time', () => {
    // Sundays from 01:00 local for 180 minutes in Berlin. On 2026-03-29 clocks go from 02:00 CET
    // to 03:00 CEST: the window still starts at 01:00 local and lasts 180 elapsed minutes.
    const timing = weekly({
      days: ['sun'],
      start_time: '01:00',
      duration_minutes: 180,
      time_zone: 'Europe/Berlin',
    });
    // The Sunday before (CET, UTC+1): 01:00 local = 00:00Z.
    assert.equal(covers(timing, at('2026-03-21T23:59:00Z')), false);
    assert.equal(covers(timing, at('2026-03-22T00:00:00Z')), true);
    assert.equal(covers(timing, at('2026-03-22T02:59:00Z')), true);
    assert.equal(covers(timing, at('2026-03-22T03:00:00Z')), false);
    // The DST Sunday: 01:00 local is still CET = 00:00Z; 180 minutes later is 03:00Z (06:00 CEST).
    assert.equal(covers(timing, at('2026-03-29T00:00:00Z')), true);
    assert.equal(covers(timing, at('2026-03-29T02:59:00Z')), true);
    assert.equal(covers(timing, at('2026-03-29T03:00:00Z')), false);
    // The Sunday after (CEST, UTC+2): 01:00 local = 23:00Z on Saturday.
    assert.equal(covers(timing, at('2026-04-04T22:59:00Z')), false);
    assert.equal(covers(timing, at('2026-04-04T23:00:00Z')), true);
    assert.equal(covers(timing, at('2026-04-05T01:59:00Z')), true);
    assert.equal(covers(timing, at('2026-04-05T02:00:00Z')), false);
  });

  test('weekly across the autumn change: the local start moves with the clocks', () => {
    // Sundays 12:00 for 60 minutes in New York: 16:00Z under EDT, 17:00Z under EST (from 2026-11-01).
    const timing = weekly({
      days: ['sun'],
      start_time: '12:00',
      duration_minutes: 60,
      time_zone: 'America/New_York',
    });
    assert.equal(covers(timing, at('2026-10-25T16:00:00Z')), true);
    assert.equal(covers(timing, at('2026-11-01T16:30:00Z')), false);
    assert.equal(covers(timing, at('2026-11-01T17:00:00Z')), true);
    assert.equal(covers(timing, at('2026-11-01T17:59:00Z')), true);
  });

  test('local times skipped or repeated by a change', () => {
    // 02:30 does not exist in Berlin on 2026-03-29: moved forward by the change, to 03:30 CEST.
    assert.equal(
      zonedToUnix({ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, 'Europe/Berlin'),
      at('2026-03-29T01:30:00Z'),
    );
    // 02:30 happens twice in Berlin on 2026-10-25: the first, still CEST.
    assert.equal(
      zonedToUnix({ year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, 'Europe/Berlin'),
      at('2026-10-25T00:30:00Z'),
    );
  });

  test('a week-long weekly window reaches back over the days before', () => {
    const timing = weekly({ days: ['mon'], start_time: '00:00', duration_minutes: 7 * 24 * 60 - 1 });
    assert.equal(covers(timing, at('2026-01-11T23:58:00Z')), true); // the next Sunday
    assert.equal(covers(timing, at('2026-01-11T23:59:30Z')), false);
  });
  test('occurrences in a span: one-off windows that overlap it, weekly ones in their zone', () => {
    const once = { kind: 'once', starts_at: 100, ends_at: 200 } as const;
    assert.deepEqual(occurrences(once, 150, 400), [{ starts_at: 100, ends_at: 200 }]);
    assert.deepEqual(occurrences(once, 200, 400), []);
    assert.deepEqual(occurrences(once, 0, 100), []);

    // Tuesdays and Fridays 23:30 for two hours in New York, over the spring change (2024-03-10).
    const timing = weekly({
      days: ['tue', 'fri'],
      start_time: '23:30',
      duration_minutes: 120,
      time_zone: 'America/New_York',
    });
    const spans = occurrences(timing, at('2024-03-06T05:00:00Z'), at('2024-03-13T05:00:00Z'));
    assert.deepEqual(
      spans.map((s) => [new Date(s.starts_at * 1000).toISOString(), (s.ends_at - s.starts_at) / 60]),
      [
        ['2024-03-06T04:30:00.000Z', 120], // Tuesday 5 March, 23:30 EST, under way at the start
        ['2024-03-09T04:30:00.000Z', 120], // Friday 8 March, 23:30 EST
        ['2024-03-13T03:30:00.000Z', 120], // Tuesday 12 March, 23:30 EDT
      ],
    );
    // An occurrence under way at the start of the span is included.
    const during = occurrences(timing, at('2024-03-09T05:00:00Z'), at('2024-03-09T06:00:00Z'));
    assert.deepEqual(during, [
      { starts_at: at('2024-03-09T04:30:00Z'), ends_at: at('2024-03-09T06:30:00Z') },
    ]);
    for (const span of spans) assert.equal(covers(timing, span.starts_at), true);
  });
});

function weeklyFields(fields: Partial<Weekly> = {}): Weekly {
  return { days: ['sun'], start_time: '02:00', duration_minutes: 60, time_zone: 'UTC', ...fields };
}
