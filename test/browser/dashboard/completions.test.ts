import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { editorText, seedRequestTest } from './editor-helpers.js';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

/**
 * Completions in the code editors: script globals and their members in a script, template
 * functions after `{{` in a request body. Each is offered as it is typed and taken with Enter.
 */
describe('Dashboard editor completions', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let testId = '';

  before(async () => {
    dash = await startDashboard();
    testId = await seedRequestTest(dash, 'Completions');
  });

  after(async () => {
    await dash?.close();
  });

  /** Types `text`, waits for `label` among the offered completions, selects and accepts it. */
  async function complete(page: Page, text: string, label: string): Promise<void> {
    await page.keyboard.type(text, { delay: 20 });
    const list = page.locator('.cm-tooltip-autocomplete');
    const option = list.locator('li', {
      has: page.locator('.cm-completionLabel', { hasText: new RegExp(`^${label}$`) }),
    });
    await option.first().waitFor();
    // CodeMirror ignores keys meant for the list for its first 75 ms (interactionDelay), so that a
    // list opening under a fast typist does not take their Enter.
    await page.waitForTimeout(150);
    // Move the selection to the option, then take it with Enter.
    for (let i = 0; i < 20 && (await option.first().getAttribute('aria-selected')) !== 'true'; i++) {
      await page.keyboard.press('ArrowDown');
    }
    assert.equal(await option.first().getAttribute('aria-selected'), 'true', `${label} can be selected`);
    await page.keyboard.press('Enter');
    await list.waitFor({ state: 'detached' });
  }

  test(
    'a script offers request and its members, a body the template functions',
    { timeout: 90_000 },
    async () => {
      const { context, page } = await dash.signedIn();
      try {
        await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${testId}`);
        await page.getByRole('heading', { name: 'Steps' }).waitFor();
        await page.getByRole('button', { name: 'Add pre-request script' }).click();

        const script = page.locator('.cm-content[aria-label="Pre-request script 1 (JavaScript)"]');
        await script.click();
        await complete(page, 'req', 'request');
        assert.equal(await editorText(script), 'request');
        await complete(page, '.me', 'method');
        assert.equal(await editorText(script), 'request.method');
        await page.keyboard.type(';\nassert.', { delay: 20 });
        await complete(page, 'deep', 'deepEqual');
        assert.equal(await editorText(script), 'request.method;\nassert.deepEqual');

        const body = page.locator('.cm-content[aria-label="Request body"]');
        await body.click();
        await complete(page, '{{hmac', 'hmac_sha256');
        assert.equal(await editorText(body), '{{hmac_sha256');
      } finally {
        await context.close();
      }
    },
  );
});
