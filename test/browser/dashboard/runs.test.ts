import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

interface Env {
  id: string;
  name: string;
  initial_variables: Record<string, string>;
  parent_environment_id: string | null;
}
interface TestDetail {
  id: string;
  default_environment_id: string;
  environments: Env[];
  steps: { id: string; assertions: { value: string | number }[] }[];
  schedules: { interval: string; note: string }[];
}

/**
 * Environments, runs, results, metrics, revisions and schedules in the dashboard, against a real
 * server with its in-process worker and a local upstream the test's request step calls.
 */
describe('Dashboard runs and environments', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamUrl = '';
  let testId = '';
  let stepId = '';
  let page: Page;
  const testPath = () => `/buckets/${dash.bucket}/tests/${testId}`;
  const app = (tab = '') => `${dash.base}/app/b/${dash.bucket}/tests/${testId}${tab ? `/${tab}` : ''}`;
  const detail = async () => (await dash.api<TestDetail>('GET', testPath())).data;
  const setExpected = async (status: number) => {
    const answer = await dash.api('PUT', `${testPath()}/steps/${stepId}`, {
      step_type: 'request',
      method: 'GET',
      url: '{{base_url}}/items',
      assertions: [{ source: 'response_status', property: '', comparison: 'equal_number', value: status }],
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  };

  before(async () => {
    // Answers slowly enough that the result page is seen while the run is still going.
    upstream = http.createServer((_request, response) => {
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ok: true, items: [{ id: 1, name: 'first' }] }));
      }, 1200);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
    const created = await dash.api<TestDetail>('POST', `/buckets/${dash.bucket}/tests`, {
      name: 'Items API',
      description: 'checks the items endpoint',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    testId = created.data.id;
    stepId = created.data.steps[0]!.id;
    await setExpected(200);
    ({ page } = await dash.signedIn());
    page.on('dialog', (dialog) => void dialog.accept());
  });

  after(async () => {
    await dash?.close();
    upstream?.close();
  });

  test('a shared environment is created on the bucket page', async () => {
    await page.goto(`${dash.base}/app/b/${dash.bucket}/environments`);
    await page.getByRole('button', { name: 'New environment' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Shared staging');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name of variable 1').fill('token');
    await page.getByLabel('Value of token').fill('s3cret');
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('heading', { name: 'Shared staging' }).waitFor();
    const shared = await dash.api<Env[]>('GET', `/buckets/${dash.bucket}/environments`);
    assert.deepEqual(
      shared.data.map((env) => [env.name, env.initial_variables]),
      [['Shared staging', { token: 's3cret' }]],
    );
    await dash.checkA11y(page, 'shared environments');
  });

  test('a variable set in the environment editor is saved, and inherited ones are shown', async () => {
    await page.goto(app('environments'));
    await page.getByRole('button', { name: /^Edit/ }).first().click();
    await page.getByLabel('Inherits from').selectOption({ label: 'Shared staging' });
    await page.locator('tr.inherited', { hasText: 'from Shared staging' }).waitFor();
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name of variable 1').fill('base_url');
    await page.getByLabel('Value of base_url').fill(upstreamUrl);
    await dash.screenshot(page, 'environments');
    await dash.checkA11y(page, 'environment editor');
    await page.getByRole('button', { name: 'Save environment' }).click();
    await page.getByText(/was saved/).waitFor();
    const env = (await detail()).environments[0]!;
    assert.deepEqual(env.initial_variables, { base_url: upstreamUrl });
    assert.ok(env.parent_environment_id, 'the parent is saved');
  });

  test('Run now shows live progress, then pass', async () => {
    await page.goto(app());
    // The bucket's shared environments can be run too.
    await page
      .getByLabel('Environment to run')
      .locator('option', { hasText: 'Shared staging' })
      .waitFor({ state: 'attached' });
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    const badge = page.locator('.run-title .badge');
    await badge.waitFor();
    assert.match((await badge.textContent()) ?? '', /queued|working/, 'the run is seen while in progress');
    await page.locator('.run-title .badge', { hasText: 'pass' }).waitFor({ timeout: 20_000 });
    await page.locator('.step-result.step-pass').waitFor();
    await page.locator('.step-summary').first().click();
    await page.getByRole('heading', { name: 'Response received' }).waitFor();
    await page.getByRole('region', { name: 'Response body' }).getByText('"name": "first"').waitFor();
    await page.locator('.waterfall').waitFor();
    await dash.screenshot(page, 'result-pass');
    await dash.checkA11y(page, 'result (pass)');
  });

  test("the e-mail's own subject and body are written, previewed on the last result and saved", async () => {
    await page.goto(app('environments'));
    await page.getByRole('button', { name: /^Edit/ }).first().click();
    await page.getByLabel("Write the e-mail's subject and body myself").check();
    await page.getByLabel('E-mail subject').fill('[{{result}}] {{test_name}}');
    await page.getByLabel('E-mail body').fill('{{test_name}} took {{nope}} ms');
    await page.getByRole('button', { name: 'Save environment' }).click();
    // An unknown placeholder is refused, named beside the body.
    await page
      .locator('.field.invalid')
      .filter({ has: page.getByLabel('E-mail body') })
      .waitFor();
    await page.getByLabel('E-mail body').fill('{{test_name}} took {{duration_ms}} ms in {{region}}');
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByTestId('template-preview');
    await preview.getByText('Subject: [pass] Items API').waitFor();
    await preview.getByText(/^Items API took \d+ ms in /).waitFor();
    await dash.checkA11y(page, 'environment editor with an e-mail template');
    await page.getByRole('button', { name: 'Save environment' }).click();
    await page.getByText(/was saved/).waitFor();
    const env = (await detail()).environments[0]! as Env & { emails: { template?: unknown } };
    assert.deepEqual(env.emails.template, {
      subject: '[{{result}}] {{test_name}}',
      body: '{{test_name}} took {{duration_ms}} ms in {{region}}',
    });

    // Unticked, the standard message comes back. (The notice of the first save may still be on
    // screen, so the stored environment is what is waited for.)
    await page.getByRole('button', { name: /^Edit/ }).first().click();
    await page.getByLabel("Write the e-mail's subject and body myself").uncheck();
    await page.getByRole('button', { name: 'Save environment' }).click();
    for (const deadline = Date.now() + 10_000; ;) {
      const env = (await detail()).environments[0]! as Env & { emails: { template?: unknown } };
      if (env.emails.template === undefined) break;
      assert.ok(Date.now() < deadline, 'the template is still stored 10 s after saving without it');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  test('the steps a working run has finished appear before it ends', async () => {
    // Three requests of 1.2 s each: the first shows while the others are still on their way.
    const request = {
      step_type: 'request',
      method: 'GET',
      url: `${upstreamUrl}/items`,
      assertions: [{ source: 'response_status', property: '', comparison: 'equal_number', value: 200 }],
    };
    const created = await dash.api<TestDetail>('POST', `/buckets/${dash.bucket}/tests`, {
      name: 'Three slow requests',
      steps: [request, request, request],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${created.data.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.getByText('Running… 1 step finished so far.').waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('.step-result.step-pass').count(), 1);
    await page.locator('.run-title .badge', { hasText: 'pass' }).waitFor({ timeout: 20_000 });
    assert.equal(await page.locator('.step-result.step-pass').count(), 3);
    const removed = await dash.api('DELETE', `/buckets/${dash.bucket}/tests/${created.data.id}`);
    assert.equal(removed.status, 204);
  });

  test('a failing assertion shows expected against actual', async () => {
    await setExpected(201);
    await page.goto(app());
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.locator('.run-title .badge', { hasText: 'fail' }).waitFor({ timeout: 20_000 });
    // The failing step opens on its own.
    const row = page.locator('table.assertions tbody tr').first();
    assert.equal((await row.locator('td[data-label="expected"]').textContent())?.trim(), '201');
    assert.equal((await row.locator('td[data-label="actual"]').textContent())?.trim(), '200');
    await dash.screenshot(page, 'result-fail');
    await dash.checkA11y(page, 'result (fail)');
  });

  test('Download report saves the HTML report of the run on screen', async () => {
    // The page of the failed run the previous test left open.
    const runId = page.url().split('/').pop()!;
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download report' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `vigil-report-${runId}.html`);
    const html = fs.readFileSync(await download.path(), 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.match(html, /<td class="expected">201<\/td><td class="actual">200<\/td>/);
  });

  test('the results history lists both runs and filters by result', async () => {
    await page.goto(app('results'));
    await page.locator('tr[data-result]').nth(1).waitFor();
    assert.deepEqual(
      await page
        .locator('tr[data-result]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-result'))),
      ['fail', 'pass'],
    );
    await page.getByLabel('Result', { exact: true }).selectOption('fail');
    await page.getByText('1 of 2 loaded runs match').waitFor();
    assert.equal(await page.locator('tr[data-result]').count(), 1);
    assert.equal(await page.locator('tr[data-result="fail"]').count(), 1);
    await page.getByLabel('Result', { exact: true }).selectOption('all');
    await dash.screenshot(page, 'results');
    await dash.checkA11y(page, 'results');
  });

  test('a queued run is canceled from the results', async () => {
    const env = await dash.api<Env>('POST', `${testPath()}/environments`, {
      name: 'Nowhere',
      regions: ['nowhere'],
    });
    assert.equal(env.status, 201, JSON.stringify(env.body));
    const started = await dash.api<{ runs: { test_run_id: string }[] }>('POST', `${testPath()}/runs`, {
      environment_id: env.data.id,
    });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const runId = started.data.runs[0]!.test_run_id;
    await page.goto(app('results'));
    const row = page.locator(`tr[data-run="${runId}"]`);
    await row.and(page.locator('[data-result="queued"]')).waitFor();
    await row.getByRole('button', { name: /^Cancel/ }).click();
    await page.locator(`tr[data-run="${runId}"][data-result="canceled"]`).waitFor();
    const run = await dash.api<{ result: string }>('GET', `${testPath()}/results/${runId}`);
    assert.equal(run.data.result, 'canceled');
  });

  test('the metrics tab shows percentiles and draws the charts', async () => {
    await page.goto(app('metrics'));
    await page.getByText('p50 response time').waitFor();
    await page.getByText('p95 response time').waitFor();
    await page.getByText('p99 response time').waitFor();
    await page.locator('.chart canvas').nth(1).waitFor();
    await dash.screenshot(page, 'metrics');
    await dash.checkA11y(page, 'metrics');
  });

  test('revisions show a diff, and restore brings the earlier assertion back', async () => {
    await page.goto(app('revisions'));
    const updates = page.getByRole('button', { name: /^Test: update/ });
    await updates.nth(1).click();
    await page.locator('.diff-line.added').first().waitFor();
    await page.getByLabel('the current state').check();
    await page.locator('.diff-line.removed', { hasText: '201' }).waitFor();
    await dash.screenshot(page, 'revisions');
    await dash.checkA11y(page, 'revisions');
    await page.getByRole('button', { name: 'Restore this revision' }).click();
    await page.getByText(/^Restored test/).waitFor();
    const restored = await detail();
    assert.equal(Number(restored.steps[0]!.assertions[0]!.value), 200);
  });

  test('a schedule is added', async () => {
    await page.goto(app('schedules'));
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel('Interval').selectOption('5m');
    await page.getByLabel('Note').fill('keeps an eye on items');
    await page.getByRole('button', { name: 'Add schedule' }).click();
    await page.getByText('every 5 minutes', { exact: true }).waitFor();
    await dash.checkA11y(page, 'schedules');
    assert.deepEqual(
      (await detail()).schedules.map((s) => [s.interval, s.note]),
      [['5m', 'keeps an eye on items']],
    );
  });

  test('results and a result are usable at 390 px', async () => {
    const narrow = await dash.signedIn({ width: 390, height: 844 });
    await narrow.page.goto(app('results'));
    await narrow.page.locator('tr[data-result]').first().waitFor();
    const overflow = await narrow.page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    await dash.screenshot(narrow.page, 'results-390');
    const wide = await narrow.page.evaluate(() =>
      Array.from(document.querySelectorAll('body *'))
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 8)
        .map((e) => `${e.tagName}.${String(e.className)} ${Math.round(e.getBoundingClientRect().right)}`),
    );
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px: ${wide.join(', ')}`);
    // The dark theme: the charts take their colours from the theme's variables.
    await narrow.page.evaluate(() => localStorage.setItem('vigil.theme', 'dark'));
    await narrow.page.goto(app('metrics'));
    await narrow.page.locator('.chart canvas').nth(1).waitFor();
    await dash.checkA11y(narrow.page, 'metrics (dark, 390 px)');
    await dash.screenshot(narrow.page, 'metrics-dark-390');
    await narrow.context.close();
  });
});
