import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Comparison, COMPARISONS } from '../../src/domain/assertions.js';
import { compare } from '../../src/domain/comparisons/index.js';
import { CANONICAL_COMPARISONS, canonicalComparison } from '../../src/domain/vocabulary.js';
import { parseNumber, toComparableString } from '../../src/domain/comparisons/values.js';

type Target = string | number;

function passes(comparison: Comparison, actual: unknown, target: Target = ''): void {
  const result = compare(comparison, actual, target);
  assert.equal(
    result.pass,
    true,
    `${comparison}(${JSON.stringify(actual)}, ${JSON.stringify(target)}) should pass`,
  );
  assert.equal(result.error, undefined);
}

function fails(comparison: Comparison, actual: unknown, target: Target = ''): void {
  const result = compare(comparison, actual, target);
  assert.equal(
    result.pass,
    false,
    `${comparison}(${JSON.stringify(actual)}, ${JSON.stringify(target)}) should fail`,
  );
  assert.equal(result.error, undefined, 'a plain mismatch carries no error');
}

function errors(comparison: Comparison, actual: unknown, target: Target, message: RegExp): void {
  const result = compare(comparison, actual, target);
  assert.equal(result.pass, false);
  assert.match(result.error ?? '', message);
}

const nested = { data: { items: [{ id: 1 }] }, ok: true, none: null };

describe('toComparableString', () => {
  test('strings stay as they are, without trimming', () => {
    assert.equal(toComparableString(' a '), ' a ');
  });

  test('numbers and booleans read as String() writes them', () => {
    assert.equal(toComparableString(200), '200');
    assert.equal(toComparableString(1.5), '1.5');
    assert.equal(toComparableString(true), 'true');
    assert.equal(toComparableString(false), 'false');
  });

  test('null reads as "null" and a missing value as ""', () => {
    assert.equal(toComparableString(null), 'null');
    assert.equal(toComparableString(undefined), '');
  });

  test('objects and arrays read as compact JSON', () => {
    assert.equal(toComparableString({ a: 1, b: [1, 'x'] }), '{"a":1,"b":[1,"x"]}');
    assert.equal(toComparableString([]), '[]');
    assert.equal(toComparableString({}), '{}');
  });
});

describe('parseNumber', () => {
  test('finite numbers are numbers', () => {
    assert.equal(parseNumber(0), 0);
    assert.equal(parseNumber(-2.5), -2.5);
  });

  test('NaN and infinities are not numbers', () => {
    assert.equal(parseNumber(Number.NaN), undefined);
    assert.equal(parseNumber(Number.POSITIVE_INFINITY), undefined);
    assert.equal(parseNumber('Infinity'), undefined);
  });

  test('decimal strings parse after trimming', () => {
    assert.equal(parseNumber('1.000'), 1);
    assert.equal(parseNumber('  42\n'), 42);
    assert.equal(parseNumber('-3'), -3);
    assert.equal(parseNumber('+3'), 3);
    assert.equal(parseNumber('.5'), 0.5);
    assert.equal(parseNumber('1e3'), 1000);
  });

  test('other strings are not numbers', () => {
    for (const text of ['', '   ', 'abc', '12abc', '0x10', '1_000', '1,5', '--1', 'e5']) {
      assert.equal(parseNumber(text), undefined, JSON.stringify(text));
    }
  });

  test('booleans, null, missing values, objects and arrays are not numbers', () => {
    for (const value of [true, false, null, undefined, {}, [], [1], { n: 1 }]) {
      assert.equal(parseNumber(value), undefined, JSON.stringify(value));
    }
  });
});

describe('compare dispatcher', () => {
  test('every entry of COMPARISONS is handled', () => {
    for (const comparison of COMPARISONS) {
      const result = compare(comparison, 'x', 'x');
      assert.equal(typeof result.pass, 'boolean', comparison);
      assert.doesNotMatch(result.error ?? '', /unknown comparison/, comparison);
    }
  });

  test('is_equal behaves as equal', () => {
    const cases: [unknown, Target][] = [
      [200, '200'],
      ['a', 'b'],
      [null, 'null'],
      [{ a: 1 }, '{"a":1}'],
      [undefined, ''],
    ];
    for (const [actual, target] of cases) {
      assert.deepEqual(compare('is_equal', actual, target), compare('equal', actual, target));
    }
  });

  test('is_equal is the one synonym: its canonical name is equal, and editors offer each meaning once', () => {
    assert.equal(canonicalComparison('is_equal'), 'equal');
    for (const comparison of COMPARISONS) {
      if (comparison !== 'is_equal') assert.equal(canonicalComparison(comparison), comparison);
    }
    assert.deepEqual(
      [...CANONICAL_COMPARISONS],
      COMPARISONS.filter((c) => c !== 'is_equal'),
    );
    assert.equal(CANONICAL_COMPARISONS.filter((c) => canonicalComparison(c) === 'equal').length, 1);
  });

  test('a comparison outside the list fails with an error instead of throwing', () => {
    const result = compare('matches' as Comparison, 'x', 'x');
    assert.equal(result.pass, false);
    assert.match(result.error ?? '', /unknown comparison "matches"/);
  });

  test('inherited object keys are not comparisons', () => {
    const result = compare('toString' as Comparison, 'x', 'x');
    assert.equal(result.pass, false);
    assert.match(result.error ?? '', /unknown comparison/);
  });
});

describe('equal', () => {
  test('equal strings pass, different strings fail', () => {
    passes('equal', 'ok', 'ok');
    fails('equal', 'ok', 'OK');
    fails('equal', 'ok ', 'ok');
  });

  test('numbers compare as their text: 200 equals "200"', () => {
    passes('equal', 200, '200');
    passes('equal', '200', 200);
    passes('equal', 200, 200);
    fails('equal', 200, '201');
  });

  test('equal is not numeric: 1 does not equal "1.0"', () => {
    fails('equal', 1, '1.0');
    fails('equal', '1.000', 1);
  });

  test('booleans compare as "true" and "false"', () => {
    passes('equal', true, 'true');
    passes('equal', false, 'false');
    fails('equal', true, '1');
  });

  test('null compares as "null"', () => {
    passes('equal', null, 'null');
    fails('equal', null, '');
  });

  test('a missing value compares as ""', () => {
    passes('equal', undefined, '');
    fails('equal', undefined, 'undefined');
  });

  test('objects and arrays compare as their JSON text', () => {
    passes('equal', { a: 1, b: 'x' }, '{"a":1,"b":"x"}');
    passes('equal', [1, '2'], '[1,"2"]');
    passes('equal', nested, JSON.stringify(nested));
    fails('equal', { a: 1 }, '{ "a": 1 }');
    fails('equal', { a: 1 }, '[object Object]');
  });
});

describe('not_equal', () => {
  test('is the negation of equal', () => {
    passes('not_equal', 'a', 'b');
    passes('not_equal', 200, '201');
    passes('not_equal', null, '');
    fails('not_equal', 200, '200');
    fails('not_equal', null, 'null');
    fails('not_equal', undefined, '');
    fails('not_equal', [1], '[1]');
  });
});

describe('empty and not_empty', () => {
  const emptyValues: unknown[] = [undefined, null, '', [], {}];
  const nonEmptyValues: unknown[] = [' ', 'a', 0, false, true, [null], [''], { a: null }, nested];

  test('empty: missing, null, "", [] and {}', () => {
    for (const value of emptyValues) passes('empty', value);
    for (const value of nonEmptyValues) fails('empty', value);
  });

  test('not_empty is the negation of empty', () => {
    for (const value of emptyValues) fails('not_empty', value);
    for (const value of nonEmptyValues) passes('not_empty', value);
  });

  test('the target is ignored', () => {
    passes('empty', '', 'anything');
    passes('not_empty', 'x', '');
  });
});

describe('contains and does_not_contain', () => {
  test('strings: substring', () => {
    passes('contains', 'hello world', 'lo w');
    passes('contains', 'hello', '');
    fails('contains', 'hello', 'Hello');
    passes('does_not_contain', 'hello', 'Hello');
    fails('does_not_contain', 'hello world', 'world');
  });

  test('numbers and booleans: substring of their text', () => {
    passes('contains', 200, '20');
    passes('contains', 200, 0);
    fails('contains', 200, '3');
    passes('contains', true, 'ru');
    passes('does_not_contain', 404, 5);
  });

  test('arrays: an element equal to the target as text', () => {
    passes('contains', ['a', 'b'], 'b');
    passes('contains', [1, 2, 3], '2');
    passes('contains', ['2'], 2);
    passes('contains', [null], 'null');
    passes('contains', [{ id: 1 }], '{"id":1}');
    fails('contains', ['abc'], 'b');
    fails('contains', [], 'a');
    passes('does_not_contain', ['abc'], 'b');
    fails('does_not_contain', [1, 2], 1);
  });

  test('objects: an own key named the target', () => {
    passes('contains', { id: 1, name: 'x' }, 'name');
    fails('contains', { id: 1 }, 'x');
    fails('contains', { id: 1 }, '1');
    fails('contains', {}, 'toString');
    passes('does_not_contain', { id: 1 }, 'name');
    fails('does_not_contain', nested, 'data');
  });

  test('null and a missing value read as "null" and ""', () => {
    passes('contains', null, 'nul');
    fails('contains', undefined, 'a');
    passes('does_not_contain', undefined, 'a');
  });
});

describe('is_a_number', () => {
  test('finite numbers and numeric strings pass', () => {
    for (const value of [0, -1, 3.14, '42', ' 1.000 ', '-2e3']) passes('is_a_number', value);
  });

  test('everything else fails', () => {
    for (const value of [
      '',
      'abc',
      '12px',
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      null,
      undefined,
      [],
      [1],
      {},
    ]) {
      fails('is_a_number', value);
    }
  });
});

describe('equal_number', () => {
  test('parses both sides: "1.000" equals 1', () => {
    passes('equal_number', '1.000', 1);
    passes('equal_number', 1, '1.000');
    passes('equal_number', ' 200 ', '200');
    passes('equal_number', 1000, '1e3');
    passes('equal_number', -0, 0);
    fails('equal_number', 1, '1.001');
    fails('equal_number', '200', 201);
  });

  test('a non-numeric actual fails with an error naming the actual side', () => {
    errors('equal_number', 'abc', 1, /^actual value "abc" is not a number$/);
    errors('equal_number', true, 1, /actual value "true" is not a number/);
    errors('equal_number', null, 0, /actual value "null" is not a number/);
    errors('equal_number', undefined, 0, /actual value \(missing\) is not a number/);
    errors('equal_number', [1], 1, /actual value "\[1\]" is not a number/);
    errors('equal_number', '', 0, /actual value "" is not a number/);
  });

  test('a non-numeric target fails with an error naming the target side', () => {
    errors('equal_number', 1, 'one', /^target value "one" is not a number$/);
    errors('equal_number', 1, '', /target value "" is not a number/);
  });

  test('when both sides are not numbers the actual side is named', () => {
    errors('equal_number', 'x', 'y', /^actual value "x"/);
  });

  test('long values are shortened in errors', () => {
    const result = compare('equal_number', 'x'.repeat(5_000), 1);
    assert.ok((result.error ?? '').length < 200);
  });
});

describe('ordering comparisons', () => {
  const table: [Comparison, number, number, boolean][] = [
    ['is_less_than', 1, 2, true],
    ['is_less_than', 2, 2, false],
    ['is_less_than', 3, 2, false],
    ['is_less_than_or_equal', 1, 2, true],
    ['is_less_than_or_equal', 2, 2, true],
    ['is_less_than_or_equal', 3, 2, false],
    ['is_greater_than', 1, 2, false],
    ['is_greater_than', 2, 2, false],
    ['is_greater_than', 3, 2, true],
    ['is_greater_than_or_equal', 1, 2, false],
    ['is_greater_than_or_equal', 2, 2, true],
    ['is_greater_than_or_equal', 3, 2, true],
  ];

  test('numbers against numbers', () => {
    for (const [comparison, actual, target, expected] of table) {
      if (expected) passes(comparison, actual, target);
      else fails(comparison, actual, target);
    }
  });

  test('numeric strings on either side compare as numbers, not as text', () => {
    for (const [comparison, actual, target, expected] of table) {
      const a = ` ${actual}.0 `;
      const t = `${target}.000`;
      if (expected) passes(comparison, a, t);
      else fails(comparison, a, t);
    }
    passes('is_less_than', '9', '10');
    passes('is_greater_than', 10, '9');
    passes('is_less_than', '-1.5', -1);
  });

  test('non-numeric sides fail with an error naming the side', () => {
    const ordering: Comparison[] = [
      'is_less_than',
      'is_less_than_or_equal',
      'is_greater_than',
      'is_greater_than_or_equal',
    ];
    for (const comparison of ordering) {
      errors(comparison, 'fast', 100, /actual value "fast" is not a number/);
      errors(comparison, 100, 'fast', /target value "fast" is not a number/);
      errors(comparison, false, 100, /actual value "false" is not a number/);
      errors(comparison, { ms: 1 }, 100, /actual value "\{\\"ms\\":1\}" is not a number/);
    }
  });
});

describe('has_key', () => {
  test('objects: an own key named the target', () => {
    passes('has_key', { id: 1 }, 'id');
    passes('has_key', { none: null }, 'none');
    passes('has_key', { '1': 'x' }, 1);
    passes('has_key', nested, 'data');
    fails('has_key', nested, 'items');
    fails('has_key', { id: 1 }, 'ID');
    fails('has_key', {}, 'toString');
    fails('has_key', {}, 'constructor');
  });

  test('arrays: an index in range', () => {
    passes('has_key', ['a', 'b'], 0);
    passes('has_key', ['a', 'b'], '1');
    fails('has_key', ['a', 'b'], 2);
    fails('has_key', ['a', 'b'], -1);
    fails('has_key', ['a', 'b'], '0.5');
    fails('has_key', ['a', 'b'], 'length');
    fails('has_key', [], 0);
  });

  test('other values fail with an error', () => {
    for (const value of ['id', 1, true, null, undefined]) {
      errors('has_key', value, 'id', /is not an object or an array/);
    }
  });
});

describe('has_value', () => {
  test('objects: a direct value equal to the target as text', () => {
    passes('has_value', { id: 1 }, '1');
    passes('has_value', { id: '1' }, 1);
    passes('has_value', { ok: true }, 'true');
    passes('has_value', { none: null }, 'null');
    passes('has_value', { a: { b: 1 } }, '{"b":1}');
    fails('has_value', { id: 1 }, 'id');
    fails('has_value', { a: { b: 1 } }, '1');
    fails('has_value', {}, '');
  });

  test('arrays: an element equal to the target as text', () => {
    passes('has_value', ['a', 'b'], 'b');
    passes('has_value', [200, 201], '201');
    passes('has_value', [[1, 2]], '[1,2]');
    fails('has_value', ['abc'], 'b');
    fails('has_value', [[1, 2]], 1);
  });

  test('other values fail with an error', () => {
    for (const value of ['abc', 1, false, null, undefined]) {
      errors('has_value', value, 'a', /is not an object or an array/);
    }
  });
});

describe('is_null', () => {
  test('only a real null passes', () => {
    passes('is_null', null);
    passes('is_null', nested.none);
    passes('is_null', JSON.parse('{"v":null}').v);
  });

  test('a missing value, the text "null", empty and falsy values are not null', () => {
    for (const value of [undefined, 'null', '', 0, false, [], {}, [null]]) fails('is_null', value);
  });

  test('the target is ignored', () => {
    passes('is_null', null, 'not null');
  });
});
