import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { cards, dragAbove } from './editor-helpers.js';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

interface StoredStep {
  id: string;
  step_type: string;
  [field: string]: unknown;
}

/**
 * The test editor: build a test of a request, a condition and a pause in the browser, reorder by
 * drag and by keyboard, save, read it back through the API; an API error shows next to its field;
 * the unsaved-change indicator and the leave confirmation; accessibility at desktop and phone widths.
 */
describe('Dashboard test editor', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamUrl = '';
  let testId = '';

  before(async () => {
    upstream = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 42 }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
    const created = await dash.api<{ id: string }>('POST', `/buckets/${dash.bucket}/tests`, {
      name: 'Editor walk',
      description: 'made by the editor test',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    testId = created.data.id;
    const other = await dash.api('POST', `/buckets/${dash.bucket}/tests`, { name: 'Login flow' });
    assert.equal(other.status, 201, JSON.stringify(other.body));
  });

  after(async () => {
    await dash?.close();
    upstream?.close();
  });

  test('build, reorder by drag and keyboard, save, errors and accessibility', async () => {
    const { context, page } = await dash.signedIn();
    try {
      await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${testId}`);
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      const dirty = page.getByTestId('dirty-state');
      assert.equal(await dirty.textContent(), 'All changes saved');
      assert.equal(await cards(page).count(), 1, 'a new test starts with one request step');

      // The default step calls the upstream's /first.
      const first = cards(page).nth(0);
      await first.getByLabel('URL', { exact: true }).fill(`${upstreamUrl}/first`);
      assert.equal(await dirty.textContent(), 'Unsaved changes');

      // A request step with a status assertion and a variable.
      await page.locator('summary', { hasText: /^Add a step$/ }).click();
      await page.getByRole('group', { name: 'Add a step' }).getByRole('button', { name: 'Request' }).click();
      const item = cards(page).nth(1);
      await item.getByLabel('URL', { exact: true }).fill(`${upstreamUrl}/items?page=1`);
      assert.equal(
        await item.getByLabel('Parameter 1', { exact: true }).inputValue(),
        'page',
        'the query shows as a table',
      );
      await item.getByLabel('Assertion 1 source', { exact: true }).selectOption('response_status');
      await item.getByLabel('Assertion 1 comparison', { exact: true }).selectOption('equal');
      await item.getByLabel('Assertion 1 value', { exact: true }).fill('200');
      assert.equal(await item.getByLabel('Assertion 1 property', { exact: true }).isDisabled(), true);
      await item.getByRole('button', { name: 'Add variable' }).click();
      await item.getByLabel('Variable 1 name', { exact: true }).fill('item_id');
      await item.getByLabel('Variable 1 source', { exact: true }).selectOption('response_json');
      await item.getByLabel('Variable 1 property', { exact: true }).fill('id');

      // A condition with a pause inside.
      await page.locator('summary', { hasText: /^Add a step$/ }).click();
      await page
        .getByRole('group', { name: 'Add a step' })
        .getByRole('button', { name: 'Condition' })
        .click();
      const condition = cards(page).nth(2);
      await condition.getByLabel('Left value', { exact: true }).fill('{{item_id}}');
      await condition.getByLabel('Comparison', { exact: true }).selectOption('equal');
      await condition.getByLabel('Right value', { exact: true }).fill('42');
      await condition.locator('summary', { hasText: 'Add a step inside condition 3' }).click();
      await condition.getByRole('button', { name: 'Pause' }).click();
      const pause = condition.locator('li.step-card[data-type="pause"]');
      await pause.getByLabel(/Duration/).fill('2');

      // Drag: the items request above the first one (collapsed, so both are on screen).
      await page.getByRole('button', { name: 'Collapse all' }).click();
      await page.evaluate(() => window.scrollTo(0, 0));
      await dragAbove(page, item, first);
      await page.waitForFunction(
        () =>
          document
            .querySelector('ol[data-parent="root"] > li.step-card .step-summary')
            ?.textContent?.includes('/items'),
        undefined,
        { timeout: 5_000 },
      );
      assert.match(
        (await cards(page).nth(1).locator('.step-summary').first().textContent()) ?? '',
        /\/first/,
      );

      // Keyboard: the condition up one, then /first into the condition after the pause.
      const up = page.getByRole('button', { name: 'Move step 3 up' });
      await up.focus();
      await page.keyboard.press('Enter');
      assert.equal(await cards(page).nth(1).getAttribute('data-type'), 'condition');
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
        'Move step 2 up',
        'focus stays on the moved step',
      );
      await page.getByTestId('announcer').filter({ hasText: 'Condition step moved to step 2.' }).waitFor();
      await page.getByRole('button', { name: 'Move step 3 into condition above' }).focus();
      await page.keyboard.press('Enter');
      assert.equal(await cards(page).count(), 2);
      await page.getByTestId('announcer').filter({ hasText: 'Request step moved to step 2.2.' }).waitFor();

      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByTestId('dirty-state').filter({ hasText: 'All changes saved' }).waitFor();

      const stored = await dash.api<{ steps: StoredStep[] }>(
        'GET',
        `/buckets/${dash.bucket}/tests/${testId}`,
      );
      const steps = stored.data.steps;
      assert.deepEqual(
        steps.map((s) => s.step_type),
        ['request', 'condition'],
      );
      assert.equal(steps[0]!.url, `${upstreamUrl}/items?page=1`);
      assert.equal(steps[0]!.method, 'GET');
      assert.deepEqual(steps[0]!.assertions, [
        { source: 'response_status', property: '', comparison: 'equal', value: '200' },
      ]);
      assert.deepEqual(steps[0]!.variables, [{ name: 'item_id', source: 'response_json', property: 'id' }]);
      assert.equal(steps[1]!.left_value, '{{item_id}}');
      assert.equal(steps[1]!.comparison, 'equal');
      assert.equal(steps[1]!.right_value, '42');
      const inner = steps[1]!.steps as StoredStep[];
      assert.deepEqual(
        inner.map((s) => s.step_type),
        ['pause', 'request'],
      );
      assert.equal(inner[0]!.duration, 2);
      assert.equal(inner[1]!.url, `${upstreamUrl}/first`);
      for (const step of [...steps, ...inner])
        assert.match(step.id, /^[0-9a-f-]{36}$/, 'the server gave ids');

      // A broken field: the API's error shows next to it, and the draft stays unsaved.
      const saved = cards(page).nth(0);
      await saved.locator(':scope > .step-head [aria-expanded]').click();
      await saved.getByLabel('Variable 1 name', { exact: true }).fill('1 bad name');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      const nameInput = saved.getByLabel('Variable 1 name', { exact: true });
      await page.waitForFunction(() => document.querySelector('[aria-invalid="true"]') !== null, undefined, {
        timeout: 5_000,
      });
      assert.equal(await nameInput.getAttribute('aria-invalid'), 'true');
      const describedBy = (await nameInput.getAttribute('aria-describedby'))!;
      const message = await page.locator(`[id="${describedBy}"]`).textContent();
      assert.match(message ?? '', /pattern|allowed/i, 'the message says what is wrong');
      assert.equal(await dirty.textContent(), 'Unsaved changes');

      // Leaving inside the app asks first; staying keeps the draft.
      let asked = '';
      page.once('dialog', (dialog) => {
        asked = dialog.message();
        void dialog.dismiss();
      });
      await page.getByRole('link', { name: 'Environments' }).first().click();
      assert.match(asked, /unsaved changes/);
      assert.match(page.url(), new RegExp(`/tests/${testId}$`));

      await page.getByRole('button', { name: 'Discard' }).click();
      assert.equal(await dirty.textContent(), 'All changes saved');
      assert.equal(await nameInput.inputValue(), 'item_id');
      assert.equal(await nameInput.getAttribute('aria-invalid'), null, 'discarding clears the error');

      await page.getByRole('button', { name: 'Expand all' }).click();
      await dash.checkA11y(page, 'the test editor');
      await dash.screenshot(page, 'editor-1280');

      // Subtest and partner-inspector forms: the pickers load their choices.
      await page.locator('summary', { hasText: /^Add a step$/ }).click();
      await page.getByRole('group', { name: 'Add a step' }).getByRole('button', { name: 'Subtest' }).click();
      const subtest = cards(page).nth(2);
      const picker = subtest.getByLabel('Test to run', { exact: true });
      await subtest.locator('option', { hasText: 'Login flow' }).waitFor({ state: 'attached' });
      assert.equal(await subtest.locator('option', { hasText: 'Editor walk' }).count(), 0, 'not itself');
      await picker.selectOption({ label: 'Login flow' });
      const environment = subtest.getByLabel('Environment', { exact: true });
      // The first option is "the test's default environment"; the test's own environments follow it.
      await environment.locator('option').nth(1).waitFor({ state: 'attached' });
      await page.locator('summary', { hasText: /^Add a step$/ }).click();
      await page
        .getByRole('group', { name: 'Add a step' })
        .getByRole('button', { name: 'Partner inspector' })
        .click();
      await cards(page).nth(3).getByLabel('Use a custom start URL', { exact: true }).check();
      await cards(page).nth(3).getByLabel('Start URL', { exact: true }).waitFor();
      await dash.checkA11y(page, 'the test editor with every step type');
      await page.getByRole('button', { name: 'Discard' }).click();
      assert.equal(await cards(page).count(), 2);
    } finally {
      await context.close();
    }
  });

  test('phone width: stacked tables, no serious accessibility violations', async () => {
    const { context, page } = await dash.signedIn({ width: 390, height: 844 });
    try {
      await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${testId}`);
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      await page.getByRole('button', { name: 'Expand all' }).click();
      const label = page.getByText('Variable 1 name', { exact: true });
      assert.equal(await label.isVisible(), true, 'cell labels show when tables stack');
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `no horizontal scrolling (${width}px)`);
      await dash.checkA11y(page, 'the test editor at 390 px');
      await dash.screenshot(page, 'editor-390');
    } finally {
      await context.close();
    }
  });

  test('equality is one entry of the comparison menu; the default step and new assertions use it', async () => {
    // A new test's default step asserts response_status is_equal 200 (the API answers it so).
    const created = await dash.api<{ id: string; steps: { assertions: { comparison: string }[] }[] }>(
      'POST',
      `/buckets/${dash.bucket}/tests`,
      { name: 'Equality menu' },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.data.steps[0]!.assertions[0]!.comparison, 'is_equal');
    const { context, page } = await dash.signedIn();
    try {
      await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${created.data.id}`);
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      const first = cards(page).nth(0);
      const menu = first.getByLabel('Assertion 1 comparison', { exact: true });
      const options = await menu
        .locator('option')
        .evaluateAll((all) =>
          all.map((o) => ({ value: (o as HTMLOptionElement).value, label: o.textContent ?? '' })),
        );
      const equality = options.filter(
        (o) => /^(is_)?equal$/.test(o.value) || /^equals?( \(is_equal\))?$/.test(o.label),
      );
      assert.deepEqual(equality, [{ value: 'equal', label: 'equal' }], JSON.stringify(options));
      const defaultValue = await menu.inputValue();
      assert.equal(defaultValue, 'equal', 'the default step shows the one entry');
      assert.equal(await page.getByTestId('dirty-state').textContent(), 'All changes saved');

      await first.getByRole('button', { name: 'Add assertion' }).click();
      assert.equal(
        await first.getByLabel('Assertion 2 comparison', { exact: true }).inputValue(),
        defaultValue,
      );
      await page.locator('summary', { hasText: /^Add a step$/ }).click();
      await page.getByRole('group', { name: 'Add a step' }).getByRole('button', { name: 'Request' }).click();
      assert.equal(
        await cards(page).nth(1).getByLabel('Assertion 1 comparison', { exact: true }).inputValue(),
        defaultValue,
        'a new request step starts with the same comparison',
      );
    } finally {
      await context.close();
    }
  });
});
