import fs from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (.ci/run installs it); no browser is downloaded. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and quiet on a machine without a way out: no background connections, updates or sync. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core on the page (its CSP must be bypassed: axe is injected inline) and answers the violations. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const result = (await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<unknown> } }
    ).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  })) as { violations: AxeViolation[] };
  return result.violations;
}

/** One line per violation: rule, impact, what it asks and where. */
export const describeViolation = (v: AxeViolation) =>
  `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`;
