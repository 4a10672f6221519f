import { type Browser, chromium } from 'playwright-core';

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
