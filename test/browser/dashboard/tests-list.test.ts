import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { DASHBOARD_DIR, type Dashboard, skipReason, startDashboard } from './harness.js';

/**
 * The tests list: 500 tests with their last result, schedules and sparklines, search and the
 * status filter, at desktop and phone widths; and how long the first render of 500 tests takes.
 */
describe('Dashboard tests list', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamUrl = '';
  const failing = new Set<string>();

  before(async () => {
    upstream = http.createServer((request, response) => {
      const fail = request.url?.startsWith('/fail');
      response.writeHead(fail ? 500 : 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: !fail }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
    // The API keeps a bucket to 100 tests (each test has its own environment, and a bucket holds at
    // most 100 test environments), so 100 come through the API and the other 400 are copies of the
    // first written straight to the store: the list's rendering is what is measured.
    const body = Array.from({ length: 100 }, (_, i) => ({
      name: `Test ${String(i + 1).padStart(3, '0')}`,
      description: i % 10 === 0 ? 'checks the orders API' : null,
    }));
    const created = await dash.api<
      { id: string; default_environment_id: string; created_by: { id: string } }[]
    >('POST', `/buckets/${dash.bucket}/tests`, body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const template = created.data[0]!;
    const now = Math.floor(Date.now() / 1000);
    const copies = Array.from({ length: 400 }, (_, i) => ({
      id: randomUUID(),
      bucket_key: dash.bucket,
      name: `Test ${String(i + 101).padStart(3, '0')}`,
      description: i % 10 === 0 ? 'checks the orders API' : null,
      created_by: template.created_by.id,
      created_at: now,
      updated_at: now,
      default_environment_id: template.default_environment_id,
      trigger_id: randomUUID().replace(/-/g, ''),
    }));
    await dash.server.store.db.insertInto('tests').values(copies).execute();
  });

  after(async () => {
    await dash?.close();
    upstream?.close();
  });

  /** Points the test's default step at the upstream and runs it `times` times, waiting for each. */
  async function runTest(id: string, urlPath: string, times: number) {
    const detail = await dash.api<{ steps: { id: string }[] }>('GET', `/buckets/${dash.bucket}/tests/${id}`);
    const step = detail.data.steps[0]!;
    const put = await dash.api('PUT', `/buckets/${dash.bucket}/tests/${id}/steps/${step.id}`, {
      url: `${upstreamUrl}${urlPath}`,
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    for (let i = 0; i < times; i++) {
      const started = await dash.api<{ runs: { test_run_id: string }[] }>(
        'POST',
        `/buckets/${dash.bucket}/tests/${id}/runs`,
      );
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const runId = started.data.runs[0]!.test_run_id;
      for (let wait = 0; wait < 200; wait++) {
        const run = await dash.api<{ result: string }>(
          'GET',
          `/buckets/${dash.bucket}/tests/${id}/results/${runId}`,
        );
        if (run.data.result !== 'queued' && run.data.result !== 'working') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  test('renders 500 tests with results, schedules and sparklines; search and filter', async () => {
    const list = await dash.api<{ id: string; name: string }[]>(
      'GET',
      `/buckets/${dash.bucket}/tests?count=1000`,
    );
    const byName = new Map(list.data.map((t) => [t.name, t.id]));
    await runTest(byName.get('Test 001')!, '/ok', 4);
    await runTest(byName.get('Test 002')!, '/fail', 2);
    failing.add('Test 002');
    const scheduled = await dash.api(
      'POST',
      `/buckets/${dash.bucket}/tests/${byName.get('Test 003')!}/schedules`,
      {
        interval: '1h',
      },
    );
    assert.equal(scheduled.status, 201, JSON.stringify(scheduled.body));

    const { context, page } = await dash.signedIn();
    const url = `${dash.base}/app/b/${dash.bucket}/tests`;
    // Time from navigation start to the 500th row on screen, with the token already in place.
    const timings: number[] = [];
    for (let round = 0; round < 5; round++) {
      await page.goto(url);
      await page.locator('[data-testid="tests-table"] tbody tr').nth(499).waitFor();
      timings.push(await page.evaluate(() => performance.now()));
    }
    // The figure is recorded for bench/README.md (target: best under 1 s); a test does not time.
    fs.mkdirSync('test-results/dashboard', { recursive: true });
    fs.writeFileSync(
      'test-results/dashboard/tests-list-timing.json',
      JSON.stringify({ tests: 500, render_ms: timings.map(Math.round) }, null, 2),
    );
    console.log(`tests list, 500 tests: first render ${timings.map((t) => t.toFixed(0)).join(' / ')} ms`);

    // Every script the first page loaded, gzipped as a server would send it: the budget is 500 KB.
    const scripts = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((entry) => new URL(entry.name).pathname)
        .filter((name) => name.startsWith('/app/assets/') && name.endsWith('.js')),
    );
    assert.ok(scripts.length > 0);
    const gzipped = [...new Set(scripts)].reduce((total, name) => {
      const file = fs.readFileSync(path.join(DASHBOARD_DIR, name.slice('/app/'.length)));
      return total + zlib.gzipSync(file, { level: 9 }).length;
    }, 0);
    console.log(
      `tests list: ${scripts.length} scripts, ${(gzipped / 1024).toFixed(1)} KB of JavaScript gzipped`,
    );
    assert.ok(gzipped < 500 * 1024, `the first page loads ${gzipped} bytes of gzipped JavaScript`);
    fs.writeFileSync(
      path.join('test-results/dashboard', 'tests-list-timing.json'),
      JSON.stringify({ tests: 500, first_render_ms: timings, first_page_js_gzip_bytes: gzipped }, null, 2),
    );

    const rows = page.locator('[data-testid="tests-table"] tbody tr');
    assert.equal(await rows.count(), 500);
    const passing = rows.filter({ hasText: 'Test 001' });
    assert.match((await passing.textContent()) ?? '', /pass/);
    assert.equal(await passing.locator('svg.sparkline').count(), 1);
    assert.match((await passing.locator('svg.sparkline').getAttribute('aria-label')) ?? '', /4 runs/);
    assert.match((await rows.filter({ hasText: 'Test 002' }).textContent()) ?? '', /fail/);
    assert.match((await rows.filter({ hasText: 'Test 003' }).textContent()) ?? '', /1h/);

    await page.getByLabel('Search tests').fill('orders');
    await assert.doesNotReject(page.getByText('50 of 500 tests').waitFor());
    await page.getByLabel('Search tests').fill('');
    await page.getByLabel('Show').selectOption('fail');
    await page.getByText('1 of 500 tests').waitFor();
    assert.deepEqual(await rows.locator('td.name a').allTextContents(), [...failing]);
    await page.getByLabel('Show').selectOption('all');
    await dash.checkA11y(page, 'tests list');
    await dash.screenshot(page, 'tests-list-1280', { fullPage: false });

    const narrow = await context.newPage();
    await narrow.setViewportSize({ width: 390, height: 844 });
    await narrow.goto(url);
    await narrow.locator('[data-testid="tests-table"] tbody tr').first().waitFor();
    const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px at 390 px`);
    await dash.checkA11y(narrow, 'tests list (390 px)');
    await dash.screenshot(narrow, 'tests-list-390', { fullPage: false });
    await context.close();
  });

  test('a browser that came by another name moves to PUBLIC_URL first', async () => {
    const { context, page } = await dash.signedIn();
    const other = dash.base.replace('127.0.0.1', 'localhost');
    await page.goto(`${other}/app/b/${dash.bucket}/tests`);
    await page.waitForURL(`${dash.base}/app/b/${dash.bucket}/tests`);
    await page.locator('[data-testid="tests-table"] tbody tr').first().waitFor();
    await context.close();
  });

  test('New test opens an unsaved editor; its first save creates it, and at the limit the error shows', async () => {
    const { context, page } = await dash.signedIn();
    // The first bucket is full (100 test environments): the API's refusal is shown, nothing is lost.
    await page.goto(`${dash.base}/app/b/${dash.bucket}/tests`);
    await page.getByRole('button', { name: 'New test' }).click();
    await page.waitForURL(/\/tests\/new$/);
    await page.getByLabel('Test name', { exact: true }).fill('One too many');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'the limit is 100' }).waitFor();
    assert.equal(await page.getByLabel('Test name', { exact: true }).inputValue(), 'One too many');

    const bucket = await dash.api<{ key: string }>('POST', '/buckets', { name: 'Second' });
    assert.equal(bucket.status, 201, JSON.stringify(bucket.body));
    // Leaving the unsaved test asks first; the answer here is "leave".
    page.once('dialog', (dialog) => void dialog.accept());
    await page.goto(`${dash.base}/app/b/${bucket.data.key}/tests`);
    await page.getByText('No tests in this bucket yet.').waitFor();
    await page.getByRole('button', { name: 'New test' }).click();
    await page.waitForURL(/\/tests\/new$/);
    await page.getByLabel('Test name', { exact: true }).fill('First of the bucket');
    await Promise.all([
      page.waitForURL(/\/tests\/[0-9a-f-]{36}$/),
      page.getByRole('button', { name: 'Save', exact: true }).click(),
    ]);
    const id = page.url().split('/').pop()!;
    const created = await dash.api<{ name: string }>('GET', `/buckets/${bucket.data.key}/tests/${id}`);
    assert.equal(created.status, 200);
    assert.equal(created.data.name, 'First of the bucket');
    await context.close();
  });
});
