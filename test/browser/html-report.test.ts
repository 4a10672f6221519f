import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { renderHtmlReport } from '../../src/reports/html.js';
import { CHROMIUM, launchChromium } from '../helpers/browser.js';
import { reportRun, stepResult } from '../reports/report-runs.js';

// Under CI the browser must be there (.ci/run installs Debian's chromium); elsewhere the suite says why it skips.
const skip = !fs.existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} is not installed` : false;

describe('html report in Chromium with JavaScript disabled', { skip }, () => {
  let browser: Browser;
  let dir: string;
  let url: string;

  before(async () => {
    browser = await launchChromium();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-html-report-'));
    const failing = [3, 7, 12];
    const steps = Array.from({ length: 15 }, (_, i) => stepResult(i + 1, { fail: failing.includes(i + 1) }));
    const passing = reportRun([stepResult(1), stepResult(2)], 'Passing API');
    const file = path.join(dir, 'report.html');
    fs.writeFileSync(
      file,
      renderHtmlReport({
        title: 'vigil run',
        generated_at: 1_700_000_100,
        runs: [passing, reportRun(steps)],
      }),
    );
    url = pathToFileURL(file).href;
  });

  after(async () => {
    await browser?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('every failed assertion shows expected and actual; "Show failed only" hides what passed', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      await page.goto(url);
      // Nothing but the file itself: no fonts, images, scripts or styles from elsewhere.
      assert.deepEqual(requested, [url]);

      const failedRows = page.locator('tr.r-fail');
      assert.equal(await failedRows.count(), 3);
      for (const index of [3, 7, 12]) {
        const row = page.locator('tr.r-fail', { hasText: `expected-${index}` });
        assert.ok(await row.locator('td.expected').isVisible(), `expected of step ${index}`);
        assert.equal(await row.locator('td.expected').innerText(), `expected-${index}`);
        assert.ok(await row.locator('td.actual').isVisible(), `actual of step ${index}`);
        assert.equal(await row.locator('td.actual').innerText(), `actual-${index}`);
      }
      const passedStep = page.locator('details.step.pass').first();
      const passedRun = page.locator('section.run.pass');
      assert.ok(await passedStep.isVisible());
      assert.ok(await passedRun.isVisible());

      await page.getByText('Show failed only').click();
      assert.ok(await page.locator('#failed-only').isChecked());
      assert.equal(await passedStep.isVisible(), false);
      assert.equal(await passedRun.isVisible(), false);
      assert.equal(await page.locator('details.step.fail').count(), 3);
      for (const step of await page.locator('details.step.fail').all()) assert.ok(await step.isVisible());
      for (const cell of await page.locator('tr.r-fail td.actual').all()) assert.ok(await cell.isVisible());

      await page.getByText('Show failed only').click();
      assert.ok(await passedStep.isVisible());
    } finally {
      await context.close();
    }
  });
});
