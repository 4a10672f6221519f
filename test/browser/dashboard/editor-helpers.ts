import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import type { Dashboard } from './harness.js';

/** The top-level step cards of the test editor, in order. */
export const cards = (page: Page) => page.locator('ol[data-parent="root"] > li.step-card');

/** Drags a card by its handle to just above `target`, with pointer moves as a person would. */
export async function dragAbove(page: Page, card: Locator, target: Locator): Promise<void> {
  const handle = card.locator(':scope > .step-head .drag-handle');
  const from = (await handle.boundingBox())!;
  const to = (await target.boundingBox())!;
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2 - 10, { steps: 4 });
  await page.mouse.move(to.x + 40, to.y + 6, { steps: 15 });
  await page.mouse.move(to.x + 40, to.y + 3, { steps: 3 });
  await page.mouse.up();
}

/** The text of a CodeMirror editor's content element, line by line as it shows it. */
export const editorText = (editor: Locator): Promise<string> =>
  editor.evaluate((content) =>
    Array.from(content.querySelectorAll(':scope > .cm-line'))
      .map((line) => line.textContent ?? '')
      .join('\n'),
  );

/** A test named `name` whose one step is a POST request, created through the API; answers its id. */
export async function seedRequestTest(dash: Dashboard, name: string): Promise<string> {
  const created = await dash.api<{ id: string }>('POST', `/buckets/${dash.bucket}/tests`, { name });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const put = await dash.api('PUT', `/buckets/${dash.bucket}/tests/${created.data.id}`, {
    steps: [{ step_type: 'request', method: 'POST', url: 'http://127.0.0.1:9/echo' }],
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  return created.data.id;
}
