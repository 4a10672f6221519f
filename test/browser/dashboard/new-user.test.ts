import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { cards, dragAbove } from './editor-helpers.js';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

interface StoredStep {
  id: string;
  step_type: string;
  [field: string]: unknown;
}
interface TestDetail {
  id: string;
  name: string;
  default_environment_id: string;
  environments: { id: string; initial_variables: Record<string, string> }[];
  steps: StoredStep[];
}

/** Generous: the run goes through the worker, and another browser suite may share the two cores. */
const RUN_TIMEOUT = 30_000;

/** Waits until the top-level cards have these step types, in this order. */
async function waitForOrder(page: Page, types: string[]): Promise<void> {
  await page.waitForFunction(
    (expected) =>
      Array.from(document.querySelectorAll('ol[data-parent="root"] > li.step-card'))
        .map((card) => card.getAttribute('data-type'))
        .join() === expected.join(),
    types,
    { timeout: 10_000 },
  );
}

/**
 * The dashboard's acceptance test: one walk of a new user's path, all of it in the browser. Sign in,
 * create a test, build a request with an assertion and a variable and a condition with a request
 * inside, reorder by drag, save, give the default environment its base URL, run it (pass), break the
 * assertion and run again (fail, expected against actual), read the metrics, and restore the revision
 * from before the break. The API only checks what the UI did. Accessibility and a screenshot on each page.
 */
describe('Dashboard: a new user walk', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamUrl = '';
  const calls: string[] = [];

  before(async () => {
    upstream = http.createServer((request, response) => {
      calls.push(`${request.method} ${request.url}`);
      const json = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (request.method === 'GET' && request.url === '/items') json(200, { id: 42, name: 'widget' });
      else if (request.method === 'GET' && request.url === '/items/42')
        json(200, { id: 42, name: 'widget', price: 3 });
      else json(404, { error: 'not found' });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
  });

  after(async () => {
    await dash?.close();
    upstream?.close();
  });

  test('sign in, build, run, break, metrics, restore', async () => {
    const { context, page } = await dash.signedIn();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    const tab = (name: string) =>
      page.getByRole('navigation', { name: 'Test sections' }).getByRole('link', { name, exact: true });
    const dirty = page.getByTestId('dirty-state');
    const save = async () => {
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await dirty.filter({ hasText: 'All changes saved' }).waitFor();
    };
    const runNow = async (result: 'pass' | 'fail') => {
      await page.getByRole('button', { name: 'Run now' }).click();
      await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
      await page.locator('.run-title .badge', { hasText: result }).waitFor({ timeout: RUN_TIMEOUT });
    };

    try {
      // 2. Signed in, the dashboard lands on the (empty) tests list.
      await page.waitForURL(new RegExp(`/app/b/${dash.bucket}/tests$`));
      await page.getByRole('heading', { name: 'Tests', exact: true }).waitFor();
      await page.getByText('No tests in this bucket yet.').waitFor();
      await dash.checkA11y(page, 'the tests list');
      await dash.screenshot(page, 'walk-tests-list');

      // 3. "New test" opens the editor of an unsaved test with one request step; name it and fill the step.
      await page.getByRole('button', { name: 'New test', exact: true }).click();
      await page.waitForURL(/\/tests\/new$/);
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      assert.equal(await cards(page).count(), 1, 'a new test starts with one request step');
      await page.getByLabel('Test name', { exact: true }).fill('Items API');
      assert.equal(await dirty.textContent(), 'Unsaved changes');

      const request = cards(page).nth(0);
      await request.locator('.method-field').getByLabel('Method', { exact: true }).selectOption('GET');
      await request.getByLabel('URL', { exact: true }).fill('{{base_url}}/items');
      await request.getByLabel('Assertion 1 source', { exact: true }).selectOption('response_status');
      await request.getByLabel('Assertion 1 comparison', { exact: true }).selectOption('equal');
      await request.getByLabel('Assertion 1 value', { exact: true }).fill('200');
      await request.getByRole('button', { name: 'Add variable' }).click();
      await request.getByLabel('Variable 1 name', { exact: true }).fill('item_id');
      await request.getByLabel('Variable 1 source', { exact: true }).selectOption('response_json');
      await request.getByLabel('Variable 1 property', { exact: true }).fill('id');

      // 4. A condition on the variable, with a request inside it.
      await page.locator('summary', { hasText: /^Add a step$/ }).click();
      await page
        .getByRole('group', { name: 'Add a step' })
        .getByRole('button', { name: 'Condition' })
        .click();
      const condition = cards(page).nth(1);
      assert.equal(await condition.getAttribute('data-type'), 'condition');
      await condition.getByLabel('Left value', { exact: true }).fill('{{item_id}}');
      await condition.getByLabel('Comparison', { exact: true }).selectOption('equal');
      await condition.getByLabel('Right value', { exact: true }).fill('42');
      await condition.locator('summary', { hasText: 'Add a step inside condition 2' }).click();
      await condition
        .getByRole('group', { name: 'Add a step inside condition 2' })
        .getByRole('button', { name: 'Request' })
        .click();
      const inner = condition.locator('li.step-card[data-type="request"]');
      await inner.locator('.method-field').getByLabel('Method', { exact: true }).selectOption('GET');
      await inner.getByLabel('URL', { exact: true }).fill('{{base_url}}/items/{{item_id}}');
      await dash.checkA11y(page, 'the test editor');
      await dash.screenshot(page, 'walk-editor');

      // 5. Reorder by drag (collapsed, so both cards are on screen): the condition above the request,
      // then — the variable must be set first — the request back above the condition.
      await page.getByRole('button', { name: 'Collapse all' }).click();
      await page.evaluate(() => window.scrollTo(0, 0));
      await dragAbove(page, cards(page).nth(1), cards(page).nth(0));
      await waitForOrder(page, ['condition', 'request']);
      await dragAbove(page, cards(page).nth(1), cards(page).nth(0));
      await waitForOrder(page, ['request', 'condition']);
      // The first save creates the test and opens it at its own address.
      await save();
      await page.waitForURL(/\/tests\/[0-9a-f-]{36}$/);
      const testId = /\/tests\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
      const testPath = `/buckets/${dash.bucket}/tests/${testId}`;

      const saved = (await dash.api<TestDetail>('GET', testPath)).data;
      assert.equal(saved.name, 'Items API');
      assert.deepEqual(
        saved.steps.map((s) => s.step_type),
        ['request', 'condition'],
      );
      const [first, second] = saved.steps as [StoredStep, StoredStep];
      assert.equal(first.method, 'GET');
      assert.equal(first.url, '{{base_url}}/items');
      assert.deepEqual(first.assertions, [
        { source: 'response_status', property: '', comparison: 'equal', value: '200' },
      ]);
      assert.deepEqual(first.variables, [{ name: 'item_id', source: 'response_json', property: 'id' }]);
      assert.equal(second.left_value, '{{item_id}}');
      assert.equal(second.comparison, 'equal');
      assert.equal(second.right_value, '42');
      const embedded = second.steps as StoredStep[];
      assert.deepEqual(
        embedded.map((s) => [s.step_type, s.method, s.url]),
        [['request', 'GET', '{{base_url}}/items/{{item_id}}']],
      );

      // 6. The default environment gets base_url.
      await tab('Environments').click();
      await page.getByRole('heading', { name: 'Environments of this test' }).waitFor();
      const defaultEnv = page.locator('li.env-item', { has: page.locator('.badge', { hasText: 'default' }) });
      await defaultEnv.getByRole('button', { name: /^Edit/ }).click();
      await page.getByRole('button', { name: 'Add variable' }).click();
      await page.getByLabel('Name of variable 1').fill('base_url');
      await page.getByLabel('Value of base_url').fill(upstreamUrl);
      await dash.checkA11y(page, 'the environment editor');
      await dash.screenshot(page, 'walk-environments');
      await page.getByRole('button', { name: 'Save environment' }).click();
      await page.getByText(/was saved/).waitFor();
      const withEnv = (await dash.api<TestDetail>('GET', testPath)).data;
      const env = withEnv.environments.find((e) => e.id === withEnv.default_environment_id)!;
      assert.deepEqual(env.initial_variables, { base_url: upstreamUrl });

      // 7. Run now: the result page follows the run to pass; the condition's request ran too.
      await runNow('pass');
      await page.locator('.step-result.step-pass').first().waitFor();
      assert.equal(await page.locator('.step-result.step-fail').count(), 0);
      assert.ok(calls.includes('GET /items'), `the upstream saw ${calls.join(', ')}`);
      assert.ok(calls.includes('GET /items/42'), `the condition's request used item_id: ${calls.join(', ')}`);
      await dash.checkA11y(page, 'the result (pass)');
      await dash.screenshot(page, 'walk-result-pass');

      // 8. Break the assertion in the editor (expect 201), save, run: fail, expected against actual.
      await tab('Steps').click();
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      const value = cards(page).nth(0).getByLabel('Assertion 1 value', { exact: true });
      assert.equal(await value.inputValue(), '200');
      await value.fill('201');
      await save();
      await runNow('fail');
      // The failing step opens on its own.
      await page.locator('.step-result.step-fail .step-summary[aria-expanded="true"]').waitFor();
      const row = page.locator('table.assertions tbody tr').first();
      await row.waitFor();
      assert.equal((await row.locator('td[data-label="expected"]').textContent())?.trim(), '201');
      assert.equal((await row.locator('td[data-label="actual"]').textContent())?.trim(), '200');
      // The test's header follows: its last result is now the failure.
      await page.locator('.test-header .badge', { hasText: 'fail' }).waitFor();
      await dash.checkA11y(page, 'the result (fail)');
      await dash.screenshot(page, 'walk-result-fail');

      // 9. Metrics: percentiles of the two runs, and the charts.
      await tab('Metrics').click();
      for (const label of ['p50 response time', 'p95 response time', 'p99 response time']) {
        const stat = page.locator('.stat-cards > div', { has: page.getByText(label, { exact: true }) });
        await stat.waitFor();
        assert.match(
          (await stat.locator('dd').textContent()) ?? '',
          /^\d+(\.\d)? m?s/,
          `${label} has a value`,
        );
      }
      assert.match(
        (await page.locator('.stat-cards > div', { hasText: 'Total runs' }).locator('dd').textContent()) ??
          '',
        /^2/,
      );
      await page.locator('.chart canvas').first().waitFor();
      await dash.checkA11y(page, 'metrics');
      await dash.screenshot(page, 'walk-metrics');

      // 10. Revisions: the test as its first save created it (before the break), its diff, and Restore.
      await tab('Revisions').click();
      const created = page.getByRole('button', { name: /^Test: create/ });
      await created.waitFor();
      assert.equal(
        await page.getByRole('button', { name: /^Test: update/ }).count(),
        1,
        'the first save created the test; the second updated it',
      );
      await created.click();
      await page.locator('.diff-line.added').first().waitFor();
      await page.getByLabel('the current state').check();
      await page.locator('.diff-line.removed', { hasText: '"201"' }).waitFor();
      await page.locator('.diff-line.added', { hasText: '"200"' }).waitFor();
      await dash.checkA11y(page, 'revisions');
      await dash.screenshot(page, 'walk-revisions');
      await page.getByRole('button', { name: 'Restore this revision' }).click();
      await page.getByText(/^Restored test/).waitFor();
      assert.ok(
        dialogs.some((message) => /^Restore test as it was/.test(message)),
        `restoring asks first: ${dialogs.join(' | ')}`,
      );
      const restored = (await dash.api<TestDetail>('GET', testPath)).data;
      assert.deepEqual(restored.steps[0]!.assertions, [
        { source: 'response_status', property: '', comparison: 'equal', value: '200' },
      ]);
      assert.deepEqual(
        restored.steps.map((s) => s.step_type),
        ['request', 'condition'],
      );
      await tab('Steps').click();
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      assert.equal(
        await cards(page).nth(0).getByLabel('Assertion 1 value', { exact: true }).inputValue(),
        '200',
        'the editor shows the restored assertion',
      );
      assert.equal(await dirty.textContent(), 'All changes saved');
      await dash.screenshot(page, 'walk-editor-restored');
    } finally {
      await context.close();
    }
  });
});
