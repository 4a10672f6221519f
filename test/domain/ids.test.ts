import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId, newTimeOrderedId, UUID_PATTERN } from '../../src/domain/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('ids', () => {
  test('row ids are version 7 UUIDs carrying the time they were made', () => {
    const before = Date.now();
    const id = newId();
    assert.match(id, V7);
    assert.match(id, UUID_PATTERN);
    const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    assert.ok(ms >= before && ms <= Date.now() + 1, `${ms} within the call`);
  });

  test('ids made one after another sort in the order they were made, also within one millisecond', () => {
    const ids = Array.from({ length: 5_000 }, () => newId());
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
  });

  test('more ids in one millisecond than the sequence holds still sort, and stay version 7', () => {
    const now = Date.now() + 60_000;
    const ids = Array.from({ length: 10_000 }, () => newTimeOrderedId(now));
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
    for (const id of ids) assert.match(id, V7);
    // A clock that steps back does not undo the order either.
    assert.ok(newTimeOrderedId(now - 5_000) > ids.at(-1)!);
  });
});
