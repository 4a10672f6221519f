import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

/**
 * The dashboard under both API_COMPAT modes: the answers that differ between them (a new step's
 * answer) and the ones the Runscope compatibility changed for everyone (GET /regions as
 * data.regions, environment headers) still drive the pages.
 */
for (const mode of ['spec', 'runscope'] as const) {
  describe(`Dashboard with API_COMPAT=${mode}`, { skip: skipReason() }, () => {
    let dash: Dashboard;
    let context: BrowserContext;
    let page: Page;
    let testId = '';
    const testPath = () => `/buckets/${dash.bucket}/tests/${testId}`;
    const errors: string[] = [];

    before(async () => {
      dash = await startDashboard({ env: { API_COMPAT: mode } });
      const created = await dash.api<{ id: string }>('POST', `/buckets/${dash.bucket}/tests`, {
        name: `Compat ${mode}`,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      testId = created.data.id;
      ({ context, page } = await dash.signedIn());
      page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    });

    after(async () => {
      await context?.close();
      await dash?.close();
    });

    test('a captured message is added as a step of an existing test', async () => {
      const posted = await dash.api<{ uuid: string }[]>('POST', `/buckets/${dash.bucket}/messages`, {
        request: { method: 'POST', url: 'https://api.example.org/orders?x=1', body: '{"n":1}' },
        response: { status: 201, body: '{"id":7}' },
      });
      assert.equal(posted.status, 201, JSON.stringify(posted.body));
      await page.goto(`${dash.base}/app/b/${dash.bucket}/messages/${posted.data[0]!.uuid}`);
      await page.getByRole('button', { name: 'Add as a step to a test' }).click();
      await page.getByLabel('Test', { exact: true }).selectOption({ label: `Compat ${mode}` });
      await page.getByRole('button', { name: 'Add step' }).click();
      await page.waitForURL(new RegExp(`/tests/${testId}$`));
      const stored = await dash.api<{ steps: { method: string; url: string }[] }>('GET', testPath());
      assert.equal(stored.data.steps.length, 2);
      assert.equal(stored.data.steps[1]!.method, 'POST');
      assert.equal(stored.data.steps[1]!.url, 'https://api.example.org/orders?x=1');
    });

    test('the environment editor lists live regions and keeps the headers it does not show', async () => {
      const regions = await dash.api<{ regions: { region_code: string }[] }>('GET', '/regions');
      const live = regions.data.regions.map((r) => r.region_code).find((code) => code !== '*');
      assert.ok(live, JSON.stringify(regions.data));
      const env = await dash.api<{ id: string }>('POST', `${testPath()}/environments`, {
        name: 'Headed',
        headers: { 'X-Team': ['qa'] },
      });
      assert.equal(env.status, 201, JSON.stringify(env.body));
      await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${testId}/environments`);
      await page.getByRole('button', { name: /Edit Headed/ }).click();
      await page.getByLabel(live, { exact: true }).check();
      await page.getByRole('button', { name: 'Save environment' }).click();
      await page.getByText('was saved').waitFor();
      const stored = await dash.api<{ regions: string[]; headers: Record<string, string[]> }>(
        'GET',
        `${testPath()}/environments/${env.data.id}`,
      );
      assert.deepEqual(stored.data.regions, [live]);
      assert.deepEqual(stored.data.headers, { 'X-Team': ['qa'] });
    });

    test('the account page lists the regions of the live workers', async () => {
      await page.goto(`${dash.base}/app/account/agents`);
      await page.getByRole('heading', { name: "Regions of the server's workers" }).waitFor();
      const regions = await dash.api<{ regions: { region_code: string }[] }>('GET', '/regions');
      const live = regions.data.regions[0]!.region_code;
      await page
        .locator('section', { hasText: "Regions of the server's workers" })
        .getByText(live)
        .first()
        .waitFor();
      assert.deepEqual(errors, []);
    });
  });
}
