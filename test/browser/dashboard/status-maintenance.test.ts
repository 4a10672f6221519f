import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

/** Waits for the API error shown at this input (aria-invalid, described by the message); answers it. */
async function errorAt(page: Page, input: Locator): Promise<string> {
  await input.and(page.locator('[aria-invalid="true"]')).waitFor();
  const id = await input.getAttribute('aria-describedby');
  assert.ok(id, 'the input is described by its error');
  return (await page.locator(`[id="${id}"]`).textContent()) ?? '';
}

interface Created {
  id: string;
  name: string;
}

describe('dashboard: status pages and maintenance windows in bucket settings', { skip: skipReason() }, () => {
  let d: Dashboard;
  let context: BrowserContext;
  let page: Page;
  let checkout: Created;
  let search: Created;

  before(async () => {
    d = await startDashboard();
    ({ context, page } = await d.signedIn());
    page.on('dialog', (dialog) => void dialog.accept());
    checkout = (
      await d.api<Created>('POST', `/buckets/${d.bucket}/tests`, { name: 'internal-checkout-probe' })
    ).data;
    search = (await d.api<Created>('POST', `/buckets/${d.bucket}/tests`, { name: 'internal-search-probe' }))
      .data;
  });
  after(async () => {
    await context?.close();
    await d?.close();
  });

  test('a status page is made, named and grouped in the dashboard; its public page shows only the public names', async () => {
    await page.goto(`${d.base}/app/b/${d.bucket}/settings`);
    await page.getByRole('heading', { name: 'Status pages' }).waitFor();
    await page.getByText('This bucket has no status page yet.').waitFor();
    await page.getByRole('button', { name: 'New status page' }).click();
    const form = page.getByTestId('status-page-form');
    await form.getByLabel('Title').fill('Acme Status');
    // The address follows the title until it is edited.
    assert.equal(await form.getByLabel('Address (slug)').inputValue(), 'acme-status');

    // A group with no test is refused, and the API's message says where.
    await form.getByRole('button', { name: 'Create status page' }).click();
    await form.getByText(/groups\/0\/tests/).waitFor();

    await form.getByLabel('Show “internal-checkout-probe” in group 1').check();
    await form.getByLabel('Public name of “internal-checkout-probe”').fill('Checkout');
    await form.getByRole('button', { name: 'Add a group' }).click();
    await form.getByLabel('Name of group 2').fill('Discovery');
    await form.getByLabel('Show “internal-search-probe” in group 2').check();
    await form.getByLabel('Public name of “internal-search-probe”').fill('Search');
    await form.getByLabel('Address (slug)').fill('Not A Slug');
    await form.getByRole('button', { name: 'Create status page' }).click();
    assert.match(await errorAt(page, form.getByLabel('Address (slug)')), /slug|pattern|match/i);
    await form.getByLabel('Address (slug)').fill('acme');
    await form.getByRole('button', { name: 'Create status page' }).click();
    await page.getByText(/The status page “Acme Status” was saved/).waitFor();
    const link = page.getByRole('link', { name: `${d.base}/status/acme` });
    await link.waitFor();

    const pages = await d.api<
      { slug: string; groups: { name: string; tests: { test_id: string; name: string }[] }[] }[]
    >('GET', `/buckets/${d.bucket}/status-pages`);
    assert.deepEqual(pages.data[0]!.groups, [
      { name: 'Services', tests: [{ test_id: checkout.id, name: 'Checkout' }] },
      { name: 'Discovery', tests: [{ test_id: search.id, name: 'Search' }] },
    ]);
    const publicPage = await (await fetch(`${d.base}/status/acme`)).text();
    assert.match(publicPage, /Checkout/);
    assert.match(publicPage, /Discovery/);
    assert.doesNotMatch(publicPage, /internal-checkout-probe|internal-search-probe/);
    await d.checkA11y(page, 'bucket settings with a status page');

    // Editing keeps the groups and changes what was changed.
    await page.getByRole('button', { name: 'Edit status page “Acme Status”' }).click();
    const edit = page.getByTestId('status-page-form');
    assert.equal(await edit.getByLabel('Public name of “internal-search-probe”').inputValue(), 'Search');
    await edit.getByLabel('Title').fill('Acme Service Status');
    assert.equal(await edit.getByLabel('Address (slug)').inputValue(), 'acme', 'an existing address stays');
    await edit.getByRole('button', { name: 'Remove group 2' }).click();
    await edit.getByRole('button', { name: 'Save status page' }).click();
    await page.getByText(/The status page “Acme Service Status” was saved/).waitFor();
    const edited = await d.api<{ title: string; groups: unknown[] }[]>(
      'GET',
      `/buckets/${d.bucket}/status-pages`,
    );
    assert.equal(edited.data[0]!.title, 'Acme Service Status');
    assert.equal(edited.data[0]!.groups.length, 1);

    await page.getByRole('button', { name: 'Delete status page “Acme Service Status”' }).click();
    await page.getByText('The status page “Acme Service Status” was deleted.').waitFor();
    assert.equal((await fetch(`${d.base}/status/acme`)).status, 404);
  });

  test('maintenance windows: weekly in a time zone, one-off for one test; under way is shown; delete', async () => {
    await page.goto(`${d.base}/app/b/${d.bucket}/settings`);
    await page.getByRole('heading', { name: 'Maintenance windows' }).waitFor();
    await page.getByText('No maintenance windows.').waitFor();

    await page.getByRole('button', { name: 'Add a maintenance window' }).click();
    let form = page.getByTestId('maintenance-form');
    await form.getByLabel('Repeats').selectOption('weekly');
    await form.getByLabel('Saturday').check();
    await form.getByLabel('Starts at (local time)').fill('02:30');
    await form.getByLabel('Lasts (minutes)').fill('90');
    await form.getByLabel('Time zone').fill('Mars/Olympus');
    await form.getByRole('button', { name: 'Add window' }).click();
    assert.match(await errorAt(page, form.getByLabel('Time zone')), /Mars\/Olympus/);
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByLabel('Note (for your team; never shown publicly)').fill('Database upgrades');
    await form.getByRole('button', { name: 'Add window' }).click();
    await page.getByText('The maintenance window was added.').waitFor();
    // Saturdays and Sundays from 02:30 to 04:00 in Berlin the window is under way, and says so.
    await page
      .getByRole('cell', {
        name: /^Every Saturday, Sunday at 02:30 \(Europe\/Berlin\) for 90 min( under way)?$/,
      })
      .waitFor();

    // A one-off window for one test, under way now.
    await page.getByRole('button', { name: 'Add a maintenance window' }).click();
    form = page.getByTestId('maintenance-form');
    await form.getByLabel('Mode').selectOption('pause');
    await form.getByLabel('Applies to').selectOption({ label: 'internal-search-probe' });
    const local = (date: Date) =>
      new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await form.getByLabel('Starts').fill(local(new Date(Date.now() - 3_600_000)));
    await form.getByLabel('Ends').fill(local(new Date(Date.now() + 3_600_000)));
    await form.getByRole('button', { name: 'Add window' }).click();
    await page.getByText('The maintenance window was added.').waitFor();
    const row = page.getByRole('row', { name: /internal-search-probe/ });
    await row.getByText('under way').waitFor();
    await row.getByRole('cell', { name: 'Pause' }).waitFor();
    await d.checkA11y(page, 'bucket settings with maintenance windows');
    await d.screenshot(page, 'bucket-maintenance');

    const windows = await d.api<{ test_id: string | null; mode: string; active: boolean; weekly: unknown }[]>(
      'GET',
      `/buckets/${d.bucket}/maintenance_windows`,
    );
    assert.equal(windows.data.length, 2);
    const once = windows.data.find((w) => w.test_id === search.id)!;
    assert.equal(once.mode, 'pause');
    assert.equal(once.active, true);
    const weekly = windows.data.find((w) => w.test_id === null)!;
    assert.deepEqual(weekly.weekly, {
      days: ['sat', 'sun'],
      start_time: '02:30',
      duration_minutes: 90,
      time_zone: 'Europe/Berlin',
    });

    await row.getByRole('button', { name: /Delete the window/ }).click();
    await page.getByText('The maintenance window was deleted.').waitFor();
    assert.equal((await d.api<unknown[]>('GET', `/buckets/${d.bucket}/maintenance_windows`)).data.length, 1);
  });
});
