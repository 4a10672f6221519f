import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BODY_SHOWN_CHARS, renderHtmlReport } from '../../src/reports/html.js';
import { reportRun, stepResult } from './report-runs.js';

const MB = 1024 * 1024;

describe('html report', () => {
  test('a 50-step run with ordinary bodies (about 8 KB each) stays under 2 MB', () => {
    const body = JSON.stringify({
      rows: Array.from({ length: 150 }, (_, i) => ({
        id: i,
        name: `row number ${i}`,
        ok: true,
        tags: ['a', 'b'],
      })),
    });
    assert.ok(body.length > 6000);
    const steps = Array.from({ length: 50 }, (_, i) => stepResult(i + 1, { body, fail: i % 10 === 0 }));
    const html = renderHtmlReport({
      title: 'vigil run',
      generated_at: 1_700_000_100,
      runs: [reportRun(steps)],
    });
    assert.ok(Buffer.byteLength(html) < 2 * MB, `${Buffer.byteLength(html)} bytes`);
    assert.equal(html.match(/<details class="step /g)?.length, 50);
    assert.equal(html.match(/<tr class="r-fail">/g)?.length, 5);
  });

  test('even 50 steps of 1 MB bodies stay under 2 MB: bodies are cut, then cut shorter once the budget is spent', () => {
    const huge = 'x'.repeat(MB);
    const steps = Array.from({ length: 50 }, (_, i) => stepResult(i + 1, { body: huge }));
    const html = renderHtmlReport({ title: 'big', generated_at: 1_700_000_100, runs: [reportRun(steps)] });
    assert.ok(Buffer.byteLength(html) < 2 * MB, `${Buffer.byteLength(html)} bytes`);
    assert.equal(html.match(/<details class="long-body">/g)?.length, 100);
    assert.match(
      html,
      new RegExp(`showing the first ${BODY_SHOWN_CHARS.toLocaleString('en-US')} of 1,048,576 characters`),
    );
    assert.match(html, /showing the first 1,024 of 1,048,576 characters/);
  });

  test('a body the run kept only in part says so; binary bodies are named, not shown', () => {
    const step = stepResult(1);
    step.response = { ...step.response!, body: '{"cut":', truncated: true, size_bytes: 5_000_000 };
    step.request = { ...step.request!, body: 'AAEC', body_encoding: 'base64', size_bytes: 3 };
    const html = renderHtmlReport({ title: 't', generated_at: 0, runs: [reportRun([step])] });
    assert.match(html, /the run kept only the start of the 5,000,000 bytes/);
    assert.match(html, /Binary body, 3 bytes; not shown\./);
  });

  test('a data row is named in the run heading; a run error and a retried attempt are shown', () => {
    const run = reportRun([stepResult(1, { fail: true })]);
    run.iteration = 'row 3';
    run.outcome.error = 'the run took longer than <60 s>';
    run.outcome.previous_attempt = { ...run.outcome, previous_attempt: null };
    const html = renderHtmlReport({ title: 't', generated_at: 0, runs: [run] });
    assert.match(html, /<h2>Items API · row 3<\/h2>/);
    assert.match(html, /Run error: the run took longer than &lt;60 s&gt;/);
    assert.match(html, /First attempt \(fail\), retried under retry_on_failure/);
  });
});
