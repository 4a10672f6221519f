import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../../src/config/config.js';
import { createServer, type Server } from '../../../src/main.js';
import { axeViolations, CHROMIUM, describeViolation, launchChromium } from '../../helpers/browser.js';
import { freePort } from '../../helpers/cli.js';

/** The dashboard's production build, made by `npm run build` (npm ci runs it); DASHBOARD_DIR points elsewhere. */
export const DASHBOARD_DIR = path.resolve(process.env.DASHBOARD_DIR ?? 'dist/dashboard');
const DASHBOARD_BUILD = path.join(DASHBOARD_DIR, 'index.html');

/**
 * Why a dashboard browser suite cannot run here, or false. Under CI the browser and the build must be
 * there (.ci/run installs Chromium, npm ci builds), so the suite fails rather than skips.
 */
export function skipReason(): string | false {
  if (process.env.CI) return false;
  if (!fs.existsSync(CHROMIUM)) return `${CHROMIUM} is not installed`;
  if (!fs.existsSync(DASHBOARD_BUILD)) return 'the dashboard is not built (npm run build)';
  return false;
}

export const USER = { email: 'dash@example.com', name: 'Dana Dashboard', password: 'correct horse battery' };

export interface Dashboard {
  base: string;
  /** The traffic origin: capture and gateway URLs. */
  traffic: string;
  server: Server;
  browser: Browser;
  /** Personal token and default bucket of USER, for seeding through the API. */
  token: string;
  bucket: string;
  /** Calls the API as USER; answers the parsed envelope and the status. */
  api: <T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{ status: number; data: T; body: unknown }>;
  /** A new browser context (viewport 1280×900 unless told), signed in on the dashboard. */
  signedIn: (options?: {
    width?: number;
    height?: number;
    /** Whether the pages' Content-Security-Policy is ignored (default true, for axe-core). */
    bypassCSP?: boolean;
  }) => Promise<{ context: BrowserContext; page: Page }>;
  /** Runs axe-core on the page; fails on serious or critical violations. */
  checkA11y: (page: Page, name: string) => Promise<void>;
  /** Saves a screenshot under test-results/dashboard/: the whole page unless `fullPage: false`. */
  screenshot: (page: Page, name: string, options?: { fullPage?: boolean }) => Promise<void>;
  close: () => Promise<void>;
}

const SCREENSHOTS = path.resolve('test-results/dashboard');

/** Starts `vigil serve` (SQLite, in-process worker) with the built dashboard and a browser. */
export async function startDashboard(options: { env?: Record<string, string> } = {}): Promise<Dashboard> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-dashboard-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const trafficPort = await freePort();
  const traffic = `http://127.0.0.1:${trafficPort}`;
  const config = {
    ...loadConfig({
      DATA_DIR: dataDir,
      PUBLIC_URL: base,
      TRAFFIC_PUBLIC_URL: traffic,
      // The tests' upstreams listen on loopback.
      GATEWAY_EGRESS_POLICY: 'allow-all',
      LOG_LEVEL: 'warn',
      ...options.env,
    }),
    port,
    trafficPort,
  };
  const server = await createServer(config, { dashboardDir: DASHBOARD_DIR });
  await server.app.listen({ port, host: '127.0.0.1' });
  await server.traffic.listen({ port: trafficPort, host: '127.0.0.1' });
  const boot = await server.services.accounts.bootstrap(USER);
  const browser = await launchChromium();
  fs.mkdirSync(SCREENSHOTS, { recursive: true });

  const api: Dashboard['api'] = async (method, apiPath, body) => {
    const response = await fetch(`${base}${apiPath}`, {
      method,
      headers: {
        authorization: `Bearer ${boot.access_token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as { data: never }) : { data: undefined as never };
    return { status: response.status, data: parsed.data, body: parsed };
  };

  const signedIn: Dashboard['signedIn'] = async (viewport = {}) => {
    // The dashboard's own CSP forbids inline scripts; axe-core is injected as one, so tests bypass it.
    const context = await browser.newContext({
      viewport: { width: viewport.width ?? 1280, height: viewport.height ?? 900 },
      bypassCSP: viewport.bypassCSP ?? true,
    });
    const page = await context.newPage();
    await page.goto(`${base}/app/`);
    await page.waitForURL(/\/signin/);
    await page.fill('input[name="email"]', USER.email);
    await page.fill('input[name="password"]', USER.password);
    await Promise.all([page.waitForURL(/\/app\//), page.click('button[type="submit"]')]);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return { context, page };
  };

  const checkA11y: Dashboard['checkA11y'] = async (page, name) => {
    const serious = (await axeViolations(page)).filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    assert.deepEqual(serious.map(describeViolation), [], `axe-core found serious violations on ${name}`);
  };

  const screenshot: Dashboard['screenshot'] = async (page, name, options = {}) => {
    await page.screenshot({
      path: path.join(SCREENSHOTS, `${name}.png`),
      fullPage: options.fullPage ?? true,
    });
  };

  return {
    base,
    traffic,
    server,
    browser,
    token: boot.access_token,
    bucket: boot.bucket_key,
    api,
    signedIn,
    checkA11y,
    screenshot,
    close: async () => {
      await browser.close();
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
