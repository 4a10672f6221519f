import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

/**
 * What must not be lost or skipped: unsaved edits when a run starts or Back is pressed, typing while a
 * save is under way, runs that started together when paging results, regions typed beside a ticked one.
 */
describe('Dashboard: unsaved edits, paging and regions', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let context: BrowserContext;
  let page: Page;
  let testId = '';
  const dialogs: string[] = [];
  const testPath = () => `/buckets/${dash.bucket}/tests/${testId}`;
  const editorUrl = () => `${dash.base}/app/b/${dash.bucket}/tests/${testId}`;
  /** The question was asked: dialogs are reported to the test a moment after the page shows them. */
  const asked = async () => {
    for (let waited = 0; dialogs.length === 0 && waited < 5_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(dialogs.length, 1, 'the page asked once');
    assert.match(dialogs[0]!, /unsaved changes/);
  };

  before(async () => {
    dash = await startDashboard();
    const created = await dash.api<{ id: string }>('POST', `/buckets/${dash.bucket}/tests`, {
      name: 'Guarded',
    });
    assert.equal(created.status, 201);
    testId = created.data.id;
    ({ context, page } = await dash.signedIn());
    // Every "leave and lose the changes?" question is answered "stay".
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });

  after(async () => {
    await context?.close();
    await dash?.close();
  });

  test('Run now with unsaved edits asks first; staying keeps them and starts nothing', async () => {
    await page.goto(editorUrl());
    await page.getByLabel('Test name').fill('Guarded, edited');
    await page.getByTestId('dirty-state').filter({ hasText: 'Unsaved changes' }).waitFor();
    dialogs.length = 0;
    await page.getByRole('button', { name: 'Run now' }).click();
    await asked();
    assert.equal(page.url(), editorUrl());
    assert.equal(await page.getByLabel('Test name').inputValue(), 'Guarded, edited');
    const results = await dash.api<unknown[]>('GET', `${testPath()}/results`);
    assert.deepEqual(results.data, []);
    await page.getByRole('button', { name: 'Discard' }).click();
  });

  test("the browser's Back with unsaved edits asks first; staying keeps them", async () => {
    await page.goto(`${editorUrl()}/results`);
    await page.getByRole('link', { name: 'Steps' }).click();
    await page.waitForURL(editorUrl());
    await page.getByLabel('Test name').fill('Guarded, edited again');
    await page.getByTestId('dirty-state').filter({ hasText: 'Unsaved changes' }).waitFor();
    dialogs.length = 0;
    await page.goBack();
    await asked();
    await page.waitForURL(editorUrl());
    assert.equal(await page.getByLabel('Test name').inputValue(), 'Guarded, edited again');
    await page.getByRole('button', { name: 'Discard' }).click();
  });

  test('while a save is under way the editor takes no input', async () => {
    await page.goto(editorUrl());
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(`**${testPath()}`, async (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      await held;
      await route.continue();
    });
    await page.getByLabel('Test name').fill('Saved name');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('.steps-editor[inert]').waitFor({ state: 'attached' });
    release();
    await page.locator('.steps-editor:not([inert])').waitFor({ state: 'attached' });
    await page.unroute(`**${testPath()}`);
    assert.equal((await dash.api<{ name: string }>('GET', testPath())).data.name, 'Saved name');
  });

  test('Load older brings every run, also of runs started together', async () => {
    // Three regions no worker serves: each Run now queues three runs with one queued_at; 17 make 51.
    const detail = await dash.api<{ default_environment_id: string }>('GET', testPath());
    const environment = `${testPath()}/environments/${detail.data.default_environment_id}`;
    const put = await dash.api('PUT', environment, { regions: ['far-a', 'far-b', 'far-c'] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    for (let i = 0; i < 17; i++) {
      const started = await dash.api<{ runs: unknown[] }>('POST', `${testPath()}/runs`);
      assert.equal(started.data.runs.length, 3);
    }
    await page.goto(`${editorUrl()}/results`);
    const rows = page.locator('tr[data-result]');
    await rows.nth(49).waitFor();
    await page.getByRole('button', { name: 'Load older' }).click();
    await page.getByText('All runs are loaded.').waitFor();
    assert.equal(await rows.count(), 51);
  });

  test('a region typed beside a ticked one is stored once', async () => {
    const regions = await dash.api<{ regions: { region: string }[] }>('GET', '/regions');
    const live = regions.data.regions.map((r) => r.region).find((code) => code !== '*');
    assert.ok(live, JSON.stringify(regions.data));
    const created = await dash.api<{ id: string }>('POST', `${testPath()}/environments`, {
      name: 'Several regions',
      regions: [live],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await page.goto(`${editorUrl()}/environments`);
    await page.getByRole('button', { name: /Edit Several regions/ }).click();
    await page.getByLabel(live, { exact: true }).waitFor();
    assert.equal(await page.getByLabel(live, { exact: true }).isChecked(), true);
    assert.equal(await page.getByLabel('Other regions').inputValue(), '');
    await page.getByLabel('Other regions').fill(`${live}, far-extra`);
    await page.getByRole('button', { name: 'Save environment' }).click();
    await page.getByText('was saved').waitFor();
    const stored = await dash.api<{ regions: string[] }>(
      'GET',
      `${testPath()}/environments/${created.data.id}`,
    );
    assert.deepEqual(stored.data.regions, [live, 'far-extra']);
  });
});
