import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  alertDecision,
  emailDecision,
  historyNeeded,
  integrationDecision,
  roundDecision,
} from '../../src/notify/rules.js';

type R = 'pass' | 'fail';

/** Feeds results one by one (newest first history), answering which runs would mail. */
function mailed(emails: Parameters<typeof emailDecision>[0], results: R[]): boolean[] {
  const history: R[] = [];
  return results.map((result) => {
    const previous = history.slice(0, historyNeeded(emails));
    history.unshift(result);
    return emailDecision(emails, result, previous).send;
  });
}

describe('emailDecision', () => {
  test('all and failures', () => {
    assert.deepEqual(mailed({ notify_on: 'all', notify_threshold: null }, ['pass', 'fail', 'pass']), [
      true,
      true,
      true,
    ]);
    assert.deepEqual(
      mailed({ notify_on: 'failures', notify_threshold: null }, ['pass', 'fail', 'fail', 'pass']),
      [false, true, true, false],
    );
  });

  test('threshold: once when the streak reaches it, once on the recovery after it', () => {
    const emails = { notify_on: 'threshold' as const, notify_threshold: 3 };
    assert.deepEqual(
      mailed(emails, ['fail', 'fail', 'fail', 'fail', 'pass', 'fail', 'fail', 'pass', 'pass']),
      [false, false, true, false, true, false, false, false, false],
    );
    const recovery = emailDecision(emails, 'pass', ['fail', 'fail', 'fail']);
    assert.deepEqual(recovery, { send: true, recovered: true });
    // A null threshold means 1.
    assert.deepEqual(mailed({ notify_on: 'threshold', notify_threshold: null }, ['fail', 'fail', 'pass']), [
      true,
      false,
      true,
    ]);
  });

  test('switch: a change of result; a first run counts as following a pass', () => {
    const emails = { notify_on: 'switch' as const, notify_threshold: null };
    assert.deepEqual(mailed(emails, ['pass', 'fail', 'fail', 'pass', 'pass']), [
      false,
      true,
      false,
      true,
      false,
    ]);
    assert.deepEqual(mailed(emails, ['fail']), [true]);
  });

  test('canceled runs never mail', () => {
    for (const notify_on of ['all', 'failures', 'threshold', 'switch'] as const) {
      assert.deepEqual(emailDecision({ notify_on, notify_threshold: 1 }, 'canceled', ['fail']), {
        send: false,
        recovered: false,
      });
    }
  });
});

test('alertDecision: trigger on every fail, resolve on the first pass after a fail', () => {
  assert.equal(alertDecision('fail', []), 'trigger');
  assert.equal(alertDecision('fail', ['fail']), 'trigger');
  assert.equal(alertDecision('pass', ['fail']), 'resolve');
  assert.equal(alertDecision('pass', ['pass']), null);
  assert.equal(alertDecision('pass', []), null);
  assert.equal(alertDecision('canceled', ['fail']), null);
});

describe('integrationDecision', () => {
  const hook = { integration_type: 'webhook' as const, notify_threshold: null };
  const slack = { integration_type: 'slack' as const, notify_threshold: null };

  test('without notify_on each type keeps its own rule: webhooks every run, Slack fails and recoveries', () => {
    const own = { ...hook, notify_on: null };
    assert.equal(integrationDecision(own, 'pass', ['pass']), 'report');
    assert.equal(integrationDecision(own, 'canceled', []), 'report');
    const alerts = { ...slack, notify_on: null };
    assert.equal(integrationDecision(alerts, 'fail', ['fail']), 'trigger');
    assert.equal(integrationDecision(alerts, 'pass', ['fail']), 'resolve');
    assert.equal(integrationDecision(alerts, 'pass', ['pass']), null);
  });

  test('with notify_on the e-mail rule decides; recoveries resolve and canceled runs stay quiet', () => {
    const onSwitch = { ...hook, notify_on: 'switch' as const };
    assert.equal(integrationDecision(onSwitch, 'pass', []), null);
    assert.equal(integrationDecision(onSwitch, 'fail', ['pass']), 'trigger');
    assert.equal(integrationDecision(onSwitch, 'fail', ['fail']), null);
    assert.equal(integrationDecision(onSwitch, 'pass', ['fail']), 'resolve');
    assert.equal(integrationDecision(onSwitch, 'canceled', ['fail']), null);
    const failures = { ...slack, notify_on: 'failures' as const };
    assert.equal(integrationDecision(failures, 'pass', ['fail']), null);
    assert.equal(integrationDecision(failures, 'fail', ['fail']), 'trigger');
    const all = { ...hook, notify_on: 'all' as const };
    assert.equal(integrationDecision(all, 'pass', ['pass']), 'report');
    const threshold = { ...hook, notify_on: 'threshold' as const, notify_threshold: 2 };
    assert.equal(integrationDecision(threshold, 'fail', ['pass']), null);
    assert.equal(integrationDecision(threshold, 'fail', ['fail', 'pass']), 'trigger');
    assert.equal(integrationDecision(threshold, 'pass', ['fail', 'fail']), 'resolve');
  });
});

describe('roundDecision (alert quorum)', () => {
  const round = (...results: string[]) => results.map((result, i) => ({ region: `r${i + 1}`, result }));
  const cases: [string, number, ReturnType<typeof round>, ReturnType<typeof roundDecision>][] = [
    ['a run still queued', 2, round('fail', 'queued'), { complete: false }],
    ['a run still working', 1, round('pass', 'working'), { complete: false }],
    [
      '1 of 2 failed, quorum 2',
      2,
      round('fail', 'pass'),
      { complete: true, result: 'pass', failed: ['r1'], passed: ['r2'] },
    ],
    [
      '2 of 2 failed, quorum 2',
      2,
      round('fail', 'fail'),
      { complete: true, result: 'fail', failed: ['r1', 'r2'], passed: [] },
    ],
    [
      '1 of 3 failed, quorum 1',
      1,
      round('pass', 'fail', 'pass'),
      { complete: true, result: 'fail', failed: ['r2'], passed: ['r1', 'r3'] },
    ],
    [
      '2 of 3 failed, quorum 2',
      2,
      round('fail', 'pass', 'fail'),
      { complete: true, result: 'fail', failed: ['r1', 'r3'], passed: ['r2'] },
    ],
    [
      '2 of 3 failed, quorum 3',
      3,
      round('fail', 'pass', 'fail'),
      { complete: true, result: 'pass', failed: ['r1', 'r3'], passed: ['r2'] },
    ],
    [
      'quorum above the round size: every run must fail',
      5,
      round('fail', 'fail'),
      { complete: true, result: 'fail', failed: ['r1', 'r2'], passed: [] },
    ],
    [
      'quorum above the round size, one passed',
      5,
      round('fail', 'pass'),
      { complete: true, result: 'pass', failed: ['r1'], passed: ['r2'] },
    ],
    [
      'a canceled run counts neither way',
      2,
      round('fail', 'canceled'),
      { complete: true, result: 'canceled', failed: ['r1'], passed: [] },
    ],
    [
      'canceled and passed below the quorum',
      2,
      round('fail', 'canceled', 'pass'),
      { complete: true, result: 'pass', failed: ['r1'], passed: ['r3'] },
    ],
    [
      'every run canceled',
      2,
      round('canceled', 'canceled'),
      { complete: true, result: 'canceled', failed: [], passed: [] },
    ],
  ];
  for (const [name, quorum, members, expected] of cases) {
    test(name, () => assert.deepEqual(roundDecision(quorum, members), expected));
  }
});
