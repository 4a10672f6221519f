import type { Locator, Page } from 'playwright-core';

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
