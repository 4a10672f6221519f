import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { editorText, seedRequestTest } from './editor-helpers.js';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

/**
 * Fast typing into every CodeMirror editor of the dashboard: the request body, the pre-request and
 * post-response scripts of a request step, and the environment script. Keys 5 ms apart must leave
 * the page answering and the text exactly as typed, in the editor and, after Save, in the API.
 */
describe('Dashboard code editors under fast typing', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let testId = '';
  const testPath = () => `/buckets/${dash.bucket}/tests/${testId}`;

  // 200 characters, none that an editor completes or indents on its own (no brackets, quotes, newlines).
  const typed = (tag: string) =>
    `${tag} ${'the quick brown fox jumps over 13 lazy dogs; '.repeat(5)}`.slice(0, 200);

  before(async () => {
    dash = await startDashboard();
    testId = await seedRequestTest(dash, 'Typing');
  });

  after(async () => {
    await dash?.close();
  });

  /** Types `text` at 5 ms a key into the editor labelled `label`; the page must still answer. */
  async function typeInto(page: Page, label: string, text: string): Promise<void> {
    const editor = page.locator(`.cm-content[aria-label="${label}"]`);
    await editor.click();
    await page.keyboard.type(text, { delay: 5 });
    assert.equal(await page.evaluate(() => 1), 1, `the page answers after typing into ${label}`);
    assert.equal(await editorText(editor), text, `${label} holds the text as typed`);
  }

  test(
    'request body and both scripts keep every key, and Save stores them',
    { timeout: 90_000 },
    async () => {
      const { context, page } = await dash.signedIn();
      try {
        await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${testId}`);
        await page.getByRole('heading', { name: 'Steps' }).waitFor();
        await page.getByRole('button', { name: 'Add pre-request script' }).click();
        await page.getByRole('button', { name: 'Add post-response script' }).click();

        const body = typed('body');
        const before = typed('pre');
        const afterScript = typed('post');
        await typeInto(page, 'Request body', body);
        await typeInto(page, 'Pre-request script 1 (JavaScript)', before);
        await typeInto(page, 'Post-response script 1 (JavaScript)', afterScript);

        // A button still works: Save, and the stored test has the three texts.
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await page.getByTestId('dirty-state').getByText('All changes saved').waitFor();
        const stored = await dash.api<{
          steps: { body: string; before_scripts: string[]; scripts: string[] }[];
        }>('GET', testPath());
        const step = stored.data.steps[0]!;
        assert.equal(step.body, body);
        assert.deepEqual(step.before_scripts, [before]);
        assert.deepEqual(step.scripts, [afterScript]);
      } finally {
        await context.close();
      }
    },
  );

  test('the environment script keeps every key, and Save stores it', { timeout: 90_000 }, async () => {
    const { context, page } = await dash.signedIn();
    try {
      await page.goto(`${dash.base}/app/b/${dash.bucket}/tests/${testId}/environments`);
      const defaultEnv = page.locator('li.env-item', { has: page.locator('.badge', { hasText: 'default' }) });
      await defaultEnv.getByRole('button', { name: /^Edit/ }).click();
      const script = typed('env');
      await typeInto(page, 'Environment script', script);
      await page.getByRole('button', { name: 'Save environment' }).click();
      await page.getByText(/was saved/).waitFor();
      const detail = await dash.api<{ default_environment_id: string }>('GET', testPath());
      const env = await dash.api<{ script: string }>(
        'GET',
        `${testPath()}/environments/${detail.data.default_environment_id}`,
      );
      assert.equal(env.data.script, script);
    } finally {
      await context.close();
    }
  });
});
