import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

const fixture = (name: string) => fs.readFileSync(new URL(`../../fixtures/import/${name}`, import.meta.url));

/** Importing another tool's file from the tests list, and making a test of captured messages. */
describe('Dashboard: imports', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let context: BrowserContext;
  let page: Page;
  const testsPath = () => `/buckets/${dash.bucket}/tests`;
  const allTests = async () =>
    (await dash.api<{ id: string; name: string }[]>('GET', `${testsPath()}?count=1000`)).data;

  before(async () => {
    dash = await startDashboard();
    ({ context, page } = await dash.signedIn());
  });
  after(async () => {
    await context?.close();
    await dash?.close();
  });

  test('a Postman collection: the preview lists tests, steps and notes; Cancel creates nothing, Create does', async () => {
    await page.goto(`${dash.base}/app/b/${dash.bucket}/tests`);
    const input = page.getByLabel('Import tests from a file');
    const dialog = page.getByRole('dialog', { name: 'Import bookshop.postman_collection.json' });
    const file = {
      name: 'bookshop.postman_collection.json',
      mimeType: 'application/json',
      buffer: fixture('bookshop.postman_collection.json'),
    };
    await input.setInputFiles(file);
    const preview = dialog.getByTestId('import-file-preview');
    await preview.waitFor();
    await preview.getByText('From a Postman collection: 4 tests').waitFor();
    for (const name of ['Bookshop API / Auth', 'Bookshop API / Books', 'Bookshop API / Partners'])
      await preview.getByText(name, { exact: true }).waitFor();
    // Several tests: each one's steps unfold from its name.
    await preview.getByText('Bookshop API / Auth', { exact: true }).click();
    await preview.getByText('POST {{base_url}}/auth/login').waitFor();
    assert.ok((await dialog.getByTestId('import-notes').getByRole('listitem').count()) > 0);
    await dash.checkA11y(page, 'the import preview of a Postman collection');
    await dash.screenshot(page, 'imports-postman-preview', { fullPage: false });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await allTests()).length, 0, 'the preview creates nothing');

    await input.setInputFiles(file);
    await dialog.getByLabel('Postman environment (optional)').setInputFiles({
      name: 'bookshop.postman_environment.json',
      mimeType: 'application/json',
      buffer: fixture('bookshop.postman_environment.json'),
    });
    await dialog.getByText('— bookshop.postman_environment.json').waitFor();
    await dialog.getByRole('button', { name: 'Create 4 tests' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'Bookshop API / Partners' }).waitFor();
    const names = (await allTests()).map((t) => t.name).sort();
    assert.deepEqual(names, [
      'Bookshop API',
      'Bookshop API / Auth',
      'Bookshop API / Books',
      'Bookshop API / Partners',
    ]);
    const auth = (await allTests()).find((t) => t.name === 'Bookshop API / Auth')!;
    const environments = (
      await dash.api<{ name: string; initial_variables: Record<string, string> }[]>(
        'GET',
        `${testsPath()}/${auth.id}/environments`,
      )
    ).data;
    assert.equal(environments[0]!.name, 'Bookshop staging');
    assert.equal(environments[0]!.initial_variables.base_url, 'https://staging.bookshop.example.com/api');
  });

  test('a file the API refuses shows why and offers no Create', async () => {
    await page.goto(`${dash.base}/app/b/${dash.bucket}/tests`);
    await page.getByLabel('Import tests from a file').setInputFiles({
      name: 'broken.yaml',
      mimeType: 'application/yaml',
      buffer: Buffer.from('openapi: 3.0.0\npaths: [unclosed'),
    });
    const dialog = page.getByRole('dialog', { name: 'Import broken.yaml' });
    await dialog
      .getByRole('alert')
      .filter({ hasText: 'Nothing was created' })
      .filter({ hasText: '/content' })
      .waitFor();
    assert.equal(await dialog.getByRole('button', { name: /^Create/ }).count(), 0);
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  test('captured messages: Turn into a test, with chained values', async () => {
    const ingest = await dash.api<{ uuid: string }[]>('POST', `/buckets/${dash.bucket}/messages`, [
      {
        request: { method: 'POST', url: 'https://shop.example.com/login', timestamp: 1_790_000_000 },
        response: { status: 200, body: '{"token":"tok_9f8e7d6c5b"}' },
      },
      {
        request: {
          method: 'GET',
          url: 'https://shop.example.com/cart',
          headers: { Authorization: ['Bearer tok_9f8e7d6c5b'] },
          timestamp: 1_790_000_001,
        },
        response: { status: 200, body: '{"items":[]}' },
      },
    ]);
    assert.equal(ingest.status, 201);
    await page.goto(`${dash.base}/app/b/${dash.bucket}/traffic/messages`);
    await page.getByLabel('Select POST /login').check();
    await page.getByLabel('Select GET /cart').check();
    await page.getByRole('button', { name: 'Turn into a test (2)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Turn 2 messages into a test' });
    const preview = dialog.getByTestId('import-file-preview');
    await preview.getByText('POST https://shop.example.com/login').waitFor();
    await preview.getByText('GET https://shop.example.com/cart').waitFor();
    await dialog
      .getByTestId('import-notes')
      .getByText(/\{\{token\}\}/)
      .waitFor();
    assert.equal(await dialog.getByRole('checkbox', { name: /Chain values/ }).isChecked(), true);
    await dash.checkA11y(page, 'turning messages into a test');
    await dialog.getByRole('button', { name: 'Create 1 test' }).click();
    await page.waitForURL(/\/tests\/[0-9a-f-]{36}/);
    const id = /\/tests\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    const created = (
      await dash.api<{ steps: { variables: unknown[]; headers: Record<string, string[]> }[] }>(
        'GET',
        `${testsPath()}/${id}`,
      )
    ).data;
    assert.deepEqual(created.steps[0]!.variables, [
      { name: 'token', source: 'response_json', property: 'token' },
    ]);
    assert.deepEqual(created.steps[1]!.headers.Authorization, ['Bearer {{token}}']);
  });
});
