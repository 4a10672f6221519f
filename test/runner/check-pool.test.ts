import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { after, describe, test } from 'node:test';
import type { Assertion, Variable } from '../../src/domain/assertions.js';
import { templateBudget } from '../../src/domain/templates.js';
import {
  type CheckJob,
  type CheckList,
  type CheckResult,
  INLINE_BODY_BYTES,
  needsThread,
} from '../../src/runner/check-batch.js';
import { CheckPool, describeBudget } from '../../src/runner/check-pool.js';
import type { ResponseSubject } from '../../src/runner/extract.js';

/** About 18 KB of XML: 4,500 `<a/>`, as in the report of the event loop frozen for 7 s. */
const XML = Buffer.from(`<r>${'<a/>'.repeat(4_500)}</r>`);
/** Quadratic in the number of `a` elements. */
const HOSTILE_XPATH = 'count(//a[count(//a) > 0])';

function subject(body: Buffer, contentType = 'application/xml'): ResponseSubject {
  return { status: 200, headers: { 'content-type': [contentType] }, body, timeMs: 5, sizeBytes: body.length };
}

function assertion(source: Assertion['source'], property: string, value: string | number = ''): Assertion {
  return { source, property, comparison: source === 'response_text' ? 'contains' : 'equal', value };
}

function job(checks: CheckList, body: ResponseSubject, values: Record<string, string> = {}): CheckJob {
  return { checks, subject: body, values, nowMs: Date.now(), budget: templateBudget() };
}

const pool = new CheckPool({ threads: 1 });
after(() => pool.close());

async function run(checks: CheckList, body: ResponseSubject, limitMs: number, values = {}) {
  const results: CheckResult[] = [];
  const outcome = await pool.run(job(checks, body, values), { limitMs, leftMs: limitMs }, (r) =>
    results.push(r),
  );
  return { outcome, results };
}

describe('which checks go to a thread', () => {
  const small = subject(Buffer.from('{"a":1}'), 'application/json');
  const large = subject(Buffer.alloc(INLINE_BODY_BYTES + 1, 0x20), 'application/json');
  const only = (a: Assertion): CheckList => ({ variables: [], assertions: [a] });

  test('XPath always; JSON and text only over a large body; status and headers never', () => {
    assert.equal(needsThread(only(assertion('response_xml', '/a')), small), true);
    assert.equal(needsThread(only(assertion('response_json', 'a')), small), false);
    assert.equal(needsThread(only(assertion('response_text', '', 'x')), small), false);
    assert.equal(needsThread(only(assertion('response_json', 'a')), large), true);
    assert.equal(needsThread(only(assertion('response_text', '', 'x')), large), true);
    assert.equal(needsThread(only(assertion('response_status', '', 200)), large), false);
    assert.equal(needsThread(only(assertion('response_headers', 'content-type')), large), false);
    const variable: Variable = { name: 'v', source: 'response_xml', property: '/a' };
    assert.equal(needsThread({ variables: [variable], assertions: [] }, small), true);
  });
});

describe('the check threads', () => {
  test('evaluate XPath checks, variables first and each set before the next is templated', async () => {
    const body = subject(Buffer.from('<r><a id="x">one</a><b>two</b></r>'));
    const { outcome, results } = await run(
      {
        variables: [{ name: 'first', source: 'response_xml', property: 'string(//a/@id)' }],
        assertions: [
          assertion('response_xml', '//*[@id="{{first}}"]', 'one'),
          assertion('response_xml', 'count(//b)', 2),
          assertion('response_status', '', 200),
        ],
      },
      body,
      1000,
    );
    assert.equal(outcome.complete, true);
    assert.deepEqual(
      results.map((r) => [r.index, r.kind, r.result.result, r.result.error]),
      [
        [0, 'variable', 'pass', null],
        [1, 'assertion', 'pass', null],
        [2, 'assertion', 'fail', null],
        [3, 'assertion', 'pass', null],
      ],
    );
    const [variable] = results;
    assert.equal(variable?.kind === 'variable' && variable.result.value, 'x');
  });

  test('a hostile XPath fails at the time limit, naming XPath; the checks before it keep their results', async () => {
    const { outcome, results } = await run(
      {
        variables: [],
        assertions: [
          assertion('response_xml', 'count(//a)', 4_500),
          assertion('response_xml', HOSTILE_XPATH, 1),
        ],
      },
      subject(XML),
      1000,
    );
    assert.equal(outcome.complete, false);
    assert.ok(!outcome.complete);
    assert.equal(outcome.error, 'xpath: took longer than 1 s');
    assert.equal(outcome.index, 1);
    assert.equal(results.length, 1);
    assert.equal(results[0]?.result.result, 'pass');
  });

  test('a JSON check over a huge body fails at the time limit, naming JSON', async () => {
    const items = Array.from({ length: 400_000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] }));
    const body = subject(Buffer.from(JSON.stringify({ items })), 'application/json');
    const { outcome } = await run(
      { variables: [], assertions: [assertion('response_json', 'items[0].id', 0)] },
      body,
      5,
    );
    assert.ok(!outcome.complete);
    assert.equal(outcome.error, 'json: took longer than 5 ms');
    assert.equal(outcome.index, 0);
  });

  test('text checks over a huge body fail at the time limit, naming text', async () => {
    const body = subject(Buffer.alloc(20 * 1024 * 1024, 'abcdefgh'), 'text/plain');
    // Each `contains` scans the whole 20 MiB text for something it does not hold.
    const assertions = Array.from({ length: 100 }, (_, i) => assertion('response_text', '', `missing ${i}`));
    const { outcome } = await run({ variables: [], assertions }, body, 5);
    assert.ok(!outcome.complete);
    assert.match(outcome.error, /^text: took longer than 5 ms$/);
  });

  test('a template in a check that runs out of time is named as a template', async () => {
    // 1,000 format_timestamp calls with long formats, then the check itself is trivial.
    const format = '%Y%m%d%H%M%S%j%A%B'.repeat(14);
    const property = `{{format_timestamp(0, '${format}')}}`.repeat(1_000);
    const { outcome } = await run(
      { variables: [], assertions: [assertion('response_headers', property)] },
      subject(Buffer.from('<r/>')),
      1,
    );
    // Either the template was still being rendered, or it had just finished.
    assert.ok(!outcome.complete);
    assert.match(outcome.error, /^(template|headers): took longer than 1 ms$/);
  });

  test('after a thread was ended, the next job gets a new one and works', async () => {
    const { outcome, results } = await run(
      { variables: [], assertions: [assertion('response_xml', 'count(//a)', 4_500)] },
      subject(XML),
      1000,
    );
    assert.equal(outcome.complete, true);
    assert.equal(results[0]?.result.result, 'pass');
    assert.equal(pool.threads, 1);
  });

  test('aborting a running job ends it with the reason', async () => {
    const controller = new AbortController();
    const running = pool.run(
      job({ variables: [], assertions: [assertion('response_xml', HOSTILE_XPATH, 1)] }, subject(XML)),
      { limitMs: 60_000, leftMs: 60_000 },
      () => undefined,
      controller.signal,
    );
    setTimeout(() => controller.abort(new Error('stopped by the test')), 50);
    await assert.rejects(running, /stopped by the test/);
    assert.equal(pool.threads, 0);
  });

  test('a check that needs more memory than a thread has fails saying so', async () => {
    const small = new CheckPool({ threads: 1, heapMb: 16 });
    try {
      const items = Array.from({ length: 300_000 }, (_, i) => ({ id: i, name: `item ${i}` }));
      const body = subject(Buffer.from(JSON.stringify(items)), 'application/json');
      const results: CheckResult[] = [];
      const outcome = await small.run(
        job(
          {
            variables: [],
            assertions: [assertion('response_status', '', 200), assertion('response_json', '[0].id', 0)],
          },
          body,
        ),
        { limitMs: 60_000, leftMs: 60_000 },
        (r) => results.push(r),
      );
      assert.ok(!outcome.complete);
      assert.equal(outcome.error, 'json: used more than 16 MB of memory');
      assert.equal(outcome.index, 1);
    } finally {
      await small.close();
    }
  });

  test('time limits read as seconds or milliseconds', () => {
    assert.equal(describeBudget(1000), '1 s');
    assert.equal(describeBudget(1500), '1.5 s');
    assert.equal(describeBudget(250), '250 ms');
  });
});
