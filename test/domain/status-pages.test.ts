import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publicStatus, type TestFacts, UPTIME_DAYS } from '../../src/domain/status-pages.js';

const today = 20_000; // 2024-10-04
const page = {
  title: 'Acme',
  groups: [
    {
      name: 'API',
      tests: [
        { test_id: 'a', name: 'REST' },
        { test_id: 'b', name: 'Checkout' },
      ],
    },
    { name: 'Web', tests: [{ test_id: 'c', name: 'Site' }] },
  ],
};

test('states, 90 days oldest first, uptime rounded down, incidents oldest first', () => {
  const facts = new Map<string, TestFacts>([
    ['a', { last: 'pass', failingSince: null, daily: new Map([[today, { passes: 2, fails: 1 }]]) }],
    [
      'b',
      {
        last: 'fail',
        failingSince: 1_700_000_000,
        daily: new Map([
          [today - UPTIME_DAYS, { passes: 0, fails: 50 }], // 91 days ago: not shown, not counted
          [today - UPTIME_DAYS + 1, { passes: 1, fails: 0 }],
        ]),
      },
    ],
  ]);
  const status = publicStatus(page, facts, { today, now: 1_728_000_000 });
  assert.equal(status.status, 'degraded');
  const [rest, checkout] = status.groups[0]!.tests;
  assert.equal(rest!.state, 'pass');
  assert.equal(rest!.uptime_percent, 66.66);
  assert.equal(rest!.days.length, UPTIME_DAYS);
  assert.deepEqual(rest!.days.at(-1), { date: '2024-10-04', passes: 2, fails: 1 });
  assert.deepEqual(checkout!.days[0], { date: '2024-07-07', passes: 1, fails: 0 });
  assert.equal(checkout!.uptime_percent, 100);
  assert.equal(checkout!.failing_since, 1_700_000_000);
  const site = status.groups[1]!.tests[0]!;
  assert.equal(site.state, 'unknown');
  assert.equal(site.uptime_percent, null);
  assert.deepEqual(status.incidents, [{ group: 'API', test: 'Checkout', since: 1_700_000_000 }]);
  assert.deepEqual(status.maintenance, []);
  assert.ok(!JSON.stringify(status).includes('"a"'), 'no test id');
});

test('no failing test: operational, no incidents', () => {
  const status = publicStatus(page, new Map(), { today, now: 1_728_000_000 });
  assert.equal(status.status, 'operational');
  assert.deepEqual(status.incidents, []);
});
