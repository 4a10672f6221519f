import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { alertDecision, emailDecision, historyNeeded } from '../../src/notify/rules.js';

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
