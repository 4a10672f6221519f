import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

interface TestDetail {
  id: string;
  name: string;
  description: string | null;
  steps: Record<string, unknown>[];
  environments: { id: string; name: string; initial_variables: Record<string, string> }[];
  schedules: { interval: string }[];
}

/** A test's steps without their ids, to compare a copy with its original. */
const withoutIds = (steps: Record<string, unknown>[]): unknown[] =>
  steps.map(({ id: _id, steps: inner, ...rest }) =>
    Array.isArray(inner) ? { ...rest, steps: withoutIds(inner as Record<string, unknown>[]) } : rest,
  );
const environmentsOf = (test: TestDetail) =>
  test.environments.map((e) => ({ name: e.name, initial_variables: e.initial_variables }));

/** Creating on first save, delete with undo, duplicate, export and import, from the dashboard. */
describe('Dashboard: test management', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const testsPath = () => `/buckets/${dash.bucket}/tests`;
  const listUrl = () => `${dash.base}/app/b/${dash.bucket}/tests`;

  const allTests = async () => (await dash.api<TestDetail[]>('GET', `${testsPath()}?count=1000`)).data;
  const detail = async (id: string) => (await dash.api<TestDetail>('GET', `${testsPath()}/${id}`)).data;
  const byName = async (name: string) => {
    const found = (await allTests()).filter((t) => t.name === name);
    assert.equal(found.length, 1, `one test named ${name}`);
    return detail(found[0]!.id);
  };
  const exportText = async (id: string) => {
    const response = await fetch(`${dash.base}${testsPath()}/${id}/export`, {
      headers: { authorization: `Bearer ${dash.token}` },
    });
    assert.equal(response.status, 200);
    return response.text();
  };
  /** A test with two steps, a second environment and a schedule. */
  const seed = async (name: string) => {
    const created = await dash.api<TestDetail>('POST', testsPath(), {
      name,
      description: 'seeded',
      environments: [
        { id: 'prod', name: 'Production', initial_variables: { host: 'https://api.example.com' } },
        { id: 'stage', name: 'Staging', initial_variables: { host: 'https://stage.example.com' } },
      ],
      default_environment_id: 'prod',
      steps: [
        { step_type: 'request', method: 'GET', url: '{{host}}/items' },
        { step_type: 'request', method: 'POST', url: '{{host}}/items', body: '{"a":1}' },
      ],
      schedules: [{ environment_id: 'stage', interval: '1h', note: 'hourly' }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.data;
  };

  before(async () => {
    dash = await startDashboard();
    ({ context, page } = await dash.signedIn());
    // Native questions (the unsaved-changes guard) are answered "stay".
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });

  after(async () => {
    await context?.close();
    await dash?.close();
  });

  test('New test stores nothing until the first save, then exactly one test at its own URL', async () => {
    const before = (await allTests()).length;
    await page.goto(listUrl());
    await page.getByRole('button', { name: 'New test', exact: true }).click();
    await page.waitForURL(`${listUrl()}/new`);
    const name = page.getByLabel('Test name', { exact: true });
    await name.waitFor();
    await page.waitForFunction(() => document.activeElement?.closest('.test-details') !== null);
    assert.equal(await name.evaluate((el) => el === document.activeElement), true, 'the name is focused');

    await page.locator('summary', { hasText: /^Add a step$/ }).click();
    await page.getByRole('group', { name: 'Add a step' }).getByRole('button', { name: 'Request' }).click();
    // It starts with one request step, as a test created through the API does; a second is added.
    const urls = page.getByLabel('URL', { exact: true });
    assert.equal(await urls.count(), 2);
    await urls.nth(0).fill('https://example.com/health');
    await urls.nth(1).fill('https://example.com/ready');
    await name.fill('Health check');
    await page.getByTestId('dirty-state').filter({ hasText: 'Unsaved changes' }).waitFor();
    assert.equal((await allTests()).length, before, 'nothing is stored before the save');

    // Leaving with the unsaved test asks first; staying keeps it.
    dialogs.length = 0;
    await page.getByRole('link', { name: 'Tests', exact: true }).first().click();
    for (let waited = 0; dialogs.length === 0 && waited < 5_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(dialogs.length, 1);
    assert.match(dialogs[0]!, /unsaved changes/);
    assert.equal(page.url(), `${listUrl()}/new`);
    assert.equal((await allTests()).length, before, 'staying stores nothing');
    await dash.checkA11y(page, 'the new test editor');

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/tests\/[0-9a-f-]{36}$/);
    await page.getByTestId('dirty-state').filter({ hasText: 'All changes saved' }).waitFor();
    const tests = await allTests();
    assert.equal(tests.length, before + 1, 'one test is stored');
    const id = page.url().split('/').pop()!;
    const saved = await detail(id);
    assert.equal(saved.name, 'Health check');
    assert.deepEqual(
      saved.steps.map((step) => step.url),
      ['https://example.com/health', 'https://example.com/ready'],
    );
    assert.equal(dialogs.length, 1, 'the first save opens the test without asking');
  });

  test('Delete asks naming the test; Undo brings it back with steps, environments and schedules', async () => {
    const original = await seed('Orders API');
    await page.goto(`${listUrl()}/${original.id}`);
    await page.getByRole('heading', { name: 'Orders API' }).waitFor();
    await page.getByRole('button', { name: 'Delete test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the test “Orders API”?' });
    await dialog.waitFor();
    await dash.checkA11y(page, 'the delete confirmation');
    await dash.screenshot(page, 'test-management-delete-dialog', { fullPage: false });

    // Cancel deletes nothing, and focus goes back to the button that opened the dialog.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.waitForFunction(() => document.activeElement?.textContent === 'Delete test');
    assert.equal((await dash.api('GET', `${testsPath()}/${original.id}`)).status, 200);

    await page.getByRole('button', { name: 'Delete test' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(listUrl());
    const notice = page.getByTestId('deleted-notice');
    await notice.filter({ hasText: 'Deleted the test “Orders API”.' }).waitFor();
    assert.equal((await dash.api('GET', `${testsPath()}/${original.id}`)).status, 404);

    await notice.getByRole('button', { name: 'Undo' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored the test Orders API' }).waitFor();
    await notice.waitFor({ state: 'detached' });
    const restored = await byName('Orders API');
    assert.notEqual(restored.id, original.id);
    assert.equal(restored.description, 'seeded');
    assert.deepEqual(withoutIds(restored.steps), withoutIds(original.steps));
    assert.deepEqual(environmentsOf(restored), environmentsOf(original));
    assert.deepEqual(
      restored.schedules.map((s) => s.interval),
      ['1h'],
    );
    const revisions = await dash.api<{
      test_revisions: { action: string; snapshot: { restored_from?: string } }[];
    }>('GET', `${testsPath()}/${restored.id}/revisions`);
    assert.equal(revisions.data.test_revisions[0]!.snapshot.restored_from, original.id);
    await page.getByRole('link', { name: 'Orders API' }).first().click();
    await page.getByRole('link', { name: 'Revisions' }).click();
    await page.getByText('Test: restored after deletion').first().waitFor();
  });

  test('Delete from the list asks naming the test and removes its row', async () => {
    await seed('Listed for deletion');
    await page.goto(listUrl());
    await page.getByRole('button', { name: 'Delete Listed for deletion' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the test “Listed for deletion”?' });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('deleted-notice').filter({ hasText: 'Listed for deletion' }).waitFor();
    await page.getByRole('link', { name: 'Listed for deletion' }).waitFor({ state: 'detached' });
    assert.equal((await allTests()).filter((t) => t.name === 'Listed for deletion').length, 0);
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByTestId('deleted-notice').waitFor({ state: 'detached' });
  });

  test('Duplicate opens "Copy of <name>" with the same steps and environments and no schedules', async () => {
    const original = await seed('Billing API');
    await page.goto(`${listUrl()}/${original.id}`);
    await page.getByRole('heading', { name: 'Billing API' }).waitFor();
    await page.getByRole('button', { name: 'Duplicate test' }).click();
    await page.getByRole('heading', { name: 'Copy of Billing API' }).waitFor();
    const id = page.url().split('/').pop()!;
    assert.notEqual(id, original.id);
    const copy = await detail(id);
    assert.equal(copy.name, 'Copy of Billing API');
    assert.deepEqual(withoutIds(copy.steps), withoutIds(original.steps));
    assert.deepEqual(environmentsOf(copy), environmentsOf(original));
    assert.deepEqual(copy.schedules, [], 'a copy does not start monitoring by itself');
    assert.equal((await detail(original.id)).schedules.length, 1, 'the original keeps its schedule');
  });

  test('Export downloads the API export; importing that file creates an equal test', async () => {
    const original = await seed('Inventory API');
    await page.goto(`${listUrl()}/${original.id}`);
    await page.getByRole('heading', { name: 'Inventory API' }).waitFor();
    const exportAs = async (label: string) => {
      await page.getByText('Export test', { exact: true }).click();
      const [saved] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: label }).click(),
      ]);
      return saved;
    };
    const postman = await exportAs('Postman collection');
    assert.equal(postman.suggestedFilename(), 'Inventory-API.postman_collection.json');
    const collection = JSON.parse(fs.readFileSync(await postman.path(), 'utf8')) as {
      info: { name: string };
    };
    assert.equal(collection.info.name, 'Inventory API');
    const curl = await exportAs('cURL script');
    assert.equal(curl.suggestedFilename(), 'Inventory-API.sh');
    assert.match(fs.readFileSync(await curl.path(), 'utf8'), /^#!\/usr\/bin\/env bash\n/);
    const download = await exportAs('Vigil test (JSON)');
    assert.equal(download.suggestedFilename(), 'Inventory-API.json');
    const file = await download.path();
    const text = fs.readFileSync(file, 'utf8');
    assert.equal(text, await exportText(original.id));

    await page.goto(listUrl());
    await page.getByLabel('Import tests from a file').setInputFiles(file);
    const dialog = page.getByRole('dialog', { name: /^Import / });
    const preview = dialog.getByTestId('import-preview');
    await preview.waitFor();
    const previewText = await preview.innerText();
    assert.match(previewText, /Inventory API/);
    assert.match(previewText, /Steps\s+2/);
    assert.match(previewText, /Production, Staging/);
    await dash.checkA11y(page, 'the import preview');
    await dash.screenshot(page, 'test-management-import-preview', { fullPage: false });
    await dialog.getByRole('button', { name: 'Create test' }).click();
    await page.waitForURL(/\/tests\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;
    assert.notEqual(id, original.id);
    const imported = await detail(id);
    assert.equal(imported.name, original.name);
    assert.equal(imported.description, original.description);
    assert.deepEqual(withoutIds(imported.steps), withoutIds(original.steps));
    assert.deepEqual(environmentsOf(imported), environmentsOf(original));
    assert.deepEqual(
      imported.schedules.map((s) => s.interval),
      original.schedules.map((s) => s.interval),
    );
  });

  test('an export in the {data: …} envelope is read as the test inside it', async () => {
    const original = await seed('Enveloped');
    const exported = JSON.parse(await exportText(original.id)) as unknown;
    await page.goto(listUrl());
    await page.getByLabel('Import tests from a file').setInputFiles({
      name: 'enveloped.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ data: exported, meta: { status: 'success' }, error: null })),
    });
    const preview = page.getByTestId('import-preview');
    await preview.filter({ hasText: 'Enveloped' }).waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await preview.waitFor({ state: 'detached' });
  });

  test('bad import files show what is wrong and create nothing', async () => {
    const before = (await allTests()).length;
    await page.goto(listUrl());
    const input = page.getByLabel('Import tests from a file');
    const dialog = page.getByRole('dialog', { name: /^Import / });

    await input.setInputFiles({
      name: 'broken.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{"name": '),
    });
    await dialog.getByRole('alert').filter({ hasText: 'The file is not JSON' }).waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Create test' }).count(), 0);
    await dash.checkA11y(page, 'a refused import');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await input.setInputFiles({
      name: 'nameless.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ steps: [] })),
    });
    await dialog.getByRole('alert').filter({ hasText: 'it has no test name' }).waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();

    // What only the API can judge: its refusal names the field, and nothing is created.
    await input.setInputFiles({
      name: 'bad-step.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ name: 'Bad step', steps: [{ step_type: 'teleport' }] })),
    });
    await dialog.getByTestId('import-preview').waitFor();
    await dialog.getByRole('button', { name: 'Create test' }).click();
    await dialog
      .getByRole('alert')
      .filter({ hasText: 'Nothing was created' })
      .filter({ hasText: '/steps/0' })
      .waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    assert.equal((await allTests()).length, before);
  });
});
