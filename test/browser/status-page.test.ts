import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { loadConfig } from '../../src/config/config.js';
import { nowFloat } from '../../src/domain/ids.js';
import { createServer, type Server } from '../../src/main.js';
import { axeViolations, CHROMIUM, describeViolation, launchChromium } from '../helpers/browser.js';
import { freePort } from '../helpers/cli.js';
import { fillRunHistory } from '../helpers/status-history.js';

const skip = !fs.existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} is not installed` : false;

/** The public status page in Chromium: what it shows, and axe-core finds no violation of any impact. */
describe('public status page in Chromium', { skip }, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-status-'));
  let server: Server;
  let browser: Browser;
  let base = '';

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = { ...loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: base, LOG_LEVEL: 'error' }), port };
    server = await createServer(config, { scheduler: false, dashboardDir: path.join(dataDir, 'none') });
    await server.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();

    const boot = await server.services.accounts.bootstrap({
      email: 'status@example.com',
      name: 'Status',
      password: 'correct horse battery',
    });
    const api = async (method: string, url: string, body: unknown) => {
      const response = await server.app.inject({
        method: method as 'POST',
        url,
        headers: { authorization: `Bearer ${boot.access_token}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      assert.ok(response.statusCode < 300, response.body);
      return response.json().data;
    };
    const tests = [];
    for (const name of ['API', 'Checkout', 'Login']) {
      const created = await api('POST', `/buckets/${boot.bucket_key}/tests`, { name });
      tests.push({ id: created.id as string, environmentId: created.default_environment_id as string });
    }
    // A month of hourly runs: Checkout failed on some days and fails now; Login has no runs.
    await fillRunHistory(server.store, {
      bucketKey: boot.bucket_key,
      tests: tests.slice(0, 2),
      days: 30,
      runsPerDay: 24,
      now: nowFloat(),
      fails: (index, daysAgo, run) => index === 1 && (daysAgo % 9 === 3 || (daysAgo === 0 && run >= 20)),
    });
    await api('POST', `/buckets/${boot.bucket_key}/status-pages`, {
      slug: 'acme',
      title: 'Acme status',
      groups: [
        {
          name: 'Public API',
          tests: [
            { test_id: tests[0]!.id, name: 'REST API' },
            { test_id: tests[1]!.id, name: 'Checkout' },
          ],
        },
        { name: 'Accounts', tests: [{ test_id: tests[2]!.id, name: 'Sign-in' }] },
      ],
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('shows states, incidents and uptime bars, with no accessibility violation', async () => {
    // axe-core is injected as an inline script, which the page's CSP forbids: the test bypasses it.
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const response = await page.goto(`${base}/status/acme`);
    assert.equal(response?.status(), 200);
    assert.equal(await page.title(), 'Acme status');
    await page.getByRole('heading', { level: 1, name: 'Acme status' }).waitFor();
    assert.equal(await page.getByRole('status').textContent(), '1 check is failing');
    const incidents = page.getByRole('region', { name: 'Open incidents' });
    assert.match((await incidents.textContent()) ?? '', /Checkout \(Public API\) failing since/);
    const bars = page.getByRole('img');
    assert.equal(await bars.count(), 3);
    const label = (await bars.nth(1).getAttribute('aria-label')) ?? '';
    const [, percent, days] =
      /^Checkout: (\d+(?:\.\d+)?)% of runs passed in the last 90 days; (\d+) days with failures$/.exec(
        label,
      ) ?? [];
    assert.ok(Number(percent) > 80 && Number(percent) < 100, label);
    assert.ok(Number(days) >= 4, label);
    assert.equal(await bars.nth(2).getAttribute('aria-label'), 'Sign-in: no runs in the last 90 days');
    assert.equal(await bars.nth(0).locator('span').count(), 90);

    assert.deepEqual((await axeViolations(page)).map(describeViolation), []);
    // The dark scheme is checked too: contrast is computed from its colours.
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual((await axeViolations(page)).map(describeViolation), []);
    await context.close();
  });

  test('an unknown slug answers a 404 page', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${base}/status/nothing-here`);
    assert.equal(response?.status(), 404);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.close();
  });
});
