import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SignInThrottle } from '../../src/auth/throttle.js';

function throttle() {
  let now = 1_000_000;
  const t = new SignInThrottle({
    perPair: 5,
    perAddress: 20,
    perAccount: 10,
    windowMs: 60_000,
    now: () => now,
  });
  return { t, advance: (ms: number) => (now += ms) };
}

test('five failures hold back that account from that address only', () => {
  const { t, advance } = throttle();
  for (let i = 0; i < 5; i++) t.failed('Owner@Example.com', '203.0.113.9');
  assert.ok(t.retryAfter('owner@example.com', '203.0.113.9') > 0);
  assert.equal(t.retryAfter('owner@example.com', '198.51.100.7'), 0, 'the owner elsewhere is not locked out');
  assert.equal(t.retryAfter('other@example.com', '203.0.113.9'), 0);
  advance(60_001);
  assert.equal(t.retryAfter('owner@example.com', '203.0.113.9'), 0, 'the window passes');
});

test('an address failing on many accounts is held back for all of them', () => {
  const { t } = throttle();
  for (let i = 0; i < 20; i++) t.failed(`user${i}@example.com`, '203.0.113.9');
  assert.ok(t.retryAfter('someone-new@example.com', '203.0.113.9') > 0);
  assert.equal(t.retryAfter('someone-new@example.com', '198.51.100.7'), 0);
});

test('a guess spread over many addresses holds back those addresses, never a clean one', () => {
  const { t } = throttle();
  for (let i = 0; i < 10; i++) t.failed('owner@example.com', `203.0.113.${i}`);
  for (let i = 0; i < 10; i++) assert.ok(t.retryAfter('owner@example.com', `203.0.113.${i}`) > 0, String(i));
  assert.equal(t.retryAfter('owner@example.com', '198.51.100.7'), 0);
});

test('a success forgets the failures of that account from that address', () => {
  const { t } = throttle();
  for (let i = 0; i < 4; i++) t.failed('owner@example.com', '198.51.100.7');
  t.succeeded('owner@example.com', '198.51.100.7');
  t.failed('owner@example.com', '198.51.100.7');
  assert.equal(t.retryAfter('owner@example.com', '198.51.100.7'), 0);
});
