import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import {
  type Assertion,
  type Comparison,
  COMPARISONS,
  type Source,
  type Variable,
} from '../../src/domain/assertions.js';
import { renderTemplate } from '../../src/domain/templates.js';
import {
  ACTUAL_TEXT_LIMIT,
  evaluateAssertion,
  extractVariable,
  type Render,
  toJsonSafe,
} from '../../src/runner/assertions.js';
import { createParseCache, type ResponseSubject } from '../../src/runner/extract.js';

const BODY = {
  id: 42,
  name: 'Ada',
  price: '1.000',
  tags: ['a', 'b'],
  meta: { owner: 'x', count: 3 },
  empty: [],
  none: null,
  long: 'y'.repeat(ACTUAL_TEXT_LIMIT + 5),
};

const response: ResponseSubject = {
  status: 200,
  headers: { 'content-type': ['application/json; charset=utf-8'], 'x-trace': ['t1', 't2'] },
  body: Buffer.from(JSON.stringify(BODY), 'utf8'),
  timeMs: 250,
  sizeBytes: 321,
};

const xmlResponse: ResponseSubject = {
  status: 200,
  headers: {},
  body: '<r><item code="A1">one</item><item code="B2">two</item></r>',
  timeMs: 1,
  sizeBytes: 60,
};

const variables: Record<string, string> = { field: 'name', who: 'Ada', idx: '1', limit: '500' };
const render: Render = (text) => renderTemplate(text, { variables });

function assertion(
  source: Source,
  property: string,
  comparison: Comparison,
  value: string | number = '',
): Assertion {
  return { source, property, comparison, value };
}

function evaluate(a: Assertion, subject: ResponseSubject = response) {
  return evaluateAssertion(a, subject, render, createParseCache());
}

describe('evaluateAssertion: every comparison', () => {
  const cases: { a: Assertion; pass: boolean }[] = [
    { a: assertion('response_json', 'name', 'equal', 'Ada'), pass: true },
    { a: assertion('response_json', 'name', 'is_equal', 'Ada'), pass: true },
    { a: assertion('response_status', '', 'equal', '200'), pass: true },
    { a: assertion('response_json', 'name', 'not_equal', 'Bob'), pass: true },
    { a: assertion('response_json', 'empty', 'empty'), pass: true },
    { a: assertion('response_json', 'tags', 'not_empty'), pass: true },
    { a: assertion('response_json', 'tags', 'contains', 'b'), pass: true },
    { a: assertion('response_text', '', 'contains', '"Ada"'), pass: true },
    { a: assertion('response_json', 'tags', 'does_not_contain', 'z'), pass: true },
    { a: assertion('response_json', 'price', 'is_a_number'), pass: true },
    { a: assertion('response_json', 'price', 'equal_number', 1), pass: true },
    { a: assertion('response_status', '', 'equal_number', 200), pass: true },
    { a: assertion('response_time', '', 'is_less_than', 1000), pass: true },
    { a: assertion('response_time', '', 'is_less_than_or_equal', 250), pass: true },
    { a: assertion('response_size', '', 'is_greater_than', 300), pass: true },
    { a: assertion('response_size', '', 'is_greater_than_or_equal', '321'), pass: true },
    { a: assertion('response_json', 'meta', 'has_key', 'owner'), pass: true },
    { a: assertion('response_json', 'meta', 'has_value', '3'), pass: true },
    { a: assertion('response_json', 'none', 'is_null'), pass: true },
    { a: assertion('response_json', 'name', 'equal', 'Bob'), pass: false },
    { a: assertion('response_time', '', 'is_greater_than', 1000), pass: false },
    { a: assertion('response_json', 'missing', 'is_null'), pass: false },
  ];
  for (const { a, pass } of cases) {
    test(`${a.source} ${a.property} ${a.comparison} ${JSON.stringify(a.value)} → ${pass ? 'pass' : 'fail'}`, () => {
      const result = evaluate(a);
      assert.equal(result.result, pass ? 'pass' : 'fail', JSON.stringify(result));
      assert.equal(result.error, null);
    });
  }

  test('the cases cover every comparison', () => {
    const covered = new Set(cases.map((c) => c.a.comparison));
    assert.deepEqual(
      COMPARISONS.filter((c) => !covered.has(c)),
      [],
    );
  });
});

describe('evaluateAssertion: result fields', () => {
  test('records the source, property, comparison, target and actual value', () => {
    assert.deepEqual(evaluate(assertion('response_json', 'meta', 'has_key', 'owner')), {
      result: 'pass',
      source: 'response_json',
      property: 'meta',
      comparison: 'has_key',
      target_value: 'owner',
      actual_value: { owner: 'x', count: 3 },
      error: null,
    });
  });

  test('a numeric target stays a number', () => {
    const result = evaluate(assertion('response_status', '', 'equal_number', 200));
    assert.equal(result.target_value, 200);
    assert.equal(result.actual_value, 200);
  });

  test('a missing value is recorded as null', () => {
    const result = evaluate(assertion('response_json', 'nothing.here', 'empty'));
    assert.equal(result.result, 'pass');
    assert.equal(result.actual_value, null);
  });

  test('a long string is cut at the limit and ends with "…"', () => {
    const result = evaluate(assertion('response_json', 'long', 'not_empty'));
    assert.equal(result.actual_value, `${'y'.repeat(ACTUAL_TEXT_LIMIT)}…`);
  });

  test('the whole text body is recorded as text, never as bytes', () => {
    const result = evaluate(assertion('response_text', '', 'not_empty'));
    assert.equal(typeof result.actual_value, 'string');
  });

  test('the comparison runs on the full value, not the cut one', () => {
    const result = evaluate(assertion('response_json', 'long', 'contains', 'yyyyy'.repeat(2001)));
    assert.equal(result.result, 'pass');
  });

  test('a comparison error is recorded', () => {
    const result = evaluate(assertion('response_json', 'name', 'is_less_than', 5));
    assert.equal(result.result, 'fail');
    assert.match(result.error ?? '', /is not a number/);
  });
});

describe('evaluateAssertion: templates', () => {
  test('the property and a string value are rendered first', () => {
    const result = evaluate(assertion('response_json', '{{field}}', 'equal', '{{who}}'));
    assert.equal(result.result, 'pass');
    assert.equal(result.property, 'name');
    assert.equal(result.target_value, 'Ada');
  });

  test('templates work inside paths and numeric targets stay strings when written as strings', () => {
    const result = evaluate(assertion('response_json', 'tags[{{idx}}]', 'equal', 'b'));
    assert.equal(result.result, 'pass');
    const time = evaluate(assertion('response_time', '', 'is_less_than', '{{limit}}'));
    assert.equal(time.result, 'pass');
    assert.equal(time.target_value, '500');
  });

  test('a render error in the property fails the assertion with that error', () => {
    const result = evaluate(assertion('response_json', '{{nope}}', 'equal', 'x'));
    assert.equal(result.result, 'fail');
    assert.match(result.error ?? '', /nope/);
    assert.equal(result.property, '{{nope}}');
    assert.equal(result.actual_value, null);
  });

  test('a render error in the value fails the assertion with that error', () => {
    const result = evaluate(assertion('response_json', 'name', 'equal', '{{nope}}'));
    assert.equal(result.result, 'fail');
    assert.match(result.error ?? '', /nope/);
    assert.equal(result.target_value, '{{nope}}');
  });
});

describe('evaluateAssertion: sources', () => {
  test('headers are read case-insensitively and multi-values joined', () => {
    assert.equal(evaluate(assertion('response_headers', 'Content-Type', 'contains', 'json')).result, 'pass');
    assert.equal(evaluate(assertion('response_headers', 'X-TRACE', 'equal', 't1, t2')).result, 'pass');
  });

  test('a missing header is empty, and fails not_empty without an error', () => {
    assert.equal(evaluate(assertion('response_headers', 'x-none', 'empty')).result, 'pass');
    const result = evaluate(assertion('response_headers', 'x-none', 'not_empty'));
    assert.equal(result.result, 'fail');
    assert.equal(result.error, null);
  });

  test('XPath values are compared', () => {
    assert.equal(
      evaluate(assertion('response_xml', '//item[2]', 'equal', 'two'), xmlResponse).result,
      'pass',
    );
    assert.equal(
      evaluate(assertion('response_xml', '//item/@code', 'equal', 'A1'), xmlResponse).result,
      'pass',
    );
    assert.equal(
      evaluate(assertion('response_xml', 'count(//item)', 'equal_number', 2), xmlResponse).result,
      'pass',
    );
  });

  test('an extraction error fails the assertion with that error', () => {
    const result = evaluate(assertion('response_json', 'a', 'empty'), xmlResponse);
    assert.equal(result.result, 'fail');
    assert.equal(result.error, 'response body is not valid JSON');
    assert.equal(result.actual_value, null);
    const xpath = evaluate(assertion('response_xml', '//item[', 'empty'), xmlResponse);
    assert.match(xpath.error ?? '', /^invalid XPath/);
  });

  test('a __proto__ path reads nothing', () => {
    const result = evaluate(assertion('response_json', '__proto__', 'empty'));
    assert.equal(result.result, 'pass');
    assert.equal(result.actual_value, null);
  });
});

describe('extractVariable', () => {
  function variable(source: Source, property: string, name = 'v'): Variable {
    return { name, source, property };
  }
  function extract(v: Variable, subject: ResponseSubject = response) {
    return extractVariable(v, subject, render, createParseCache());
  }

  test('a string is kept as it is', () => {
    assert.deepEqual(extract(variable('response_json', 'name', 'user')), {
      result: 'pass',
      source: 'response_json',
      property: 'name',
      name: 'user',
      value: 'Ada',
      error: null,
    });
  });

  test('numbers, booleans, null, objects and arrays become text', () => {
    assert.equal(extract(variable('response_json', 'id')).value, '42');
    assert.equal(extract(variable('response_status', '')).value, '200');
    assert.equal(extract(variable('response_json', 'none')).value, 'null');
    assert.equal(extract(variable('response_json', 'meta')).value, '{"owner":"x","count":3}');
    assert.equal(extract(variable('response_json', 'tags')).value, '["a","b"]');
    assert.equal(extract(variable('response_xml', 'boolean(//item)'), xmlResponse).value, 'true');
  });

  test('headers and XPath values are read', () => {
    assert.equal(extract(variable('response_headers', 'X-Trace')).value, 't1, t2');
    assert.equal(extract(variable('response_xml', '//item[2]/@code'), xmlResponse).value, 'B2');
  });

  test('the property is rendered first', () => {
    const result = extract(variable('response_json', 'tags[{{idx}}]'));
    assert.equal(result.value, 'b');
    assert.equal(result.property, 'tags[1]');
  });

  test('a missing value fails with a "not found" error and no value', () => {
    const json = extract(variable('response_json', 'data.nothing'));
    assert.equal(json.result, 'fail');
    assert.equal(json.value, null);
    assert.equal(json.error, 'JSON path "data.nothing" not found');
    assert.equal(extract(variable('response_headers', 'x-none')).error, 'header "x-none" not found');
    assert.match(extract(variable('response_xml', '//none'), xmlResponse).error ?? '', /not found$/);
  });

  test('an extraction or render error fails the variable', () => {
    const bad = extract(variable('response_json', 'a'), xmlResponse);
    assert.equal(bad.result, 'fail');
    assert.equal(bad.error, 'response body is not valid JSON');
    const unrendered = extract(variable('response_json', '{{nope}}'));
    assert.equal(unrendered.result, 'fail');
    assert.match(unrendered.error ?? '', /nope/);
  });

  test('an empty string is a value, not a missing one', () => {
    const subject: ResponseSubject = { ...response, body: '{"blank":""}' };
    const result = extract(variable('response_json', 'blank'), subject);
    assert.equal(result.result, 'pass');
    assert.equal(result.value, '');
  });
});

describe('toJsonSafe', () => {
  test('keeps a __proto__ key as a plain key', () => {
    const parsed: unknown = JSON.parse('{"__proto__":{"x":"y"}}');
    const safe = toJsonSafe(parsed);
    assert.equal(Object.getPrototypeOf(safe), Object.prototype);
    assert.deepEqual(Object.keys(safe as object), ['__proto__']);
  });

  test('maps undefined to null, non-finite numbers to text and bytes to text', () => {
    assert.equal(toJsonSafe(undefined), null);
    assert.deepEqual(toJsonSafe([undefined, 1]), [null, 1]);
    assert.equal(toJsonSafe(Number.NaN), 'NaN');
    assert.equal(toJsonSafe(Buffer.from('hi')), 'hi');
  });

  test('caps very deep nesting', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = [deep];
    assert.doesNotThrow(() => JSON.stringify(toJsonSafe(deep)));
    assert.match(JSON.stringify(toJsonSafe(deep)), /"…"/);
  });
});
