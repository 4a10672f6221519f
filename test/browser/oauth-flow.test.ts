import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../../src/config/config.js';
import { createServer, type Server } from '../../src/main.js';
import { CHROMIUM, launchChromium } from '../helpers/browser.js';
import { freePort } from '../helpers/cli.js';

// Under CI the browser must be there (.ci/run installs Debian's chromium); elsewhere the suite says why it skips.
const skip = !fs.existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} is not installed` : false;

/**
 * The OAuth web flow in a real browser: sign in, the confirmation screen, Authorize or Deny, the
 * callback with code and state, the token exchange and an API call with the token.
 */
describe('OAuth authorization-code flow in Chromium', { skip }, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-browser-'));
  let server: Server;
  let base = '';
  let browser: Browser;
  let callback: http.Server;
  let callbackUrl = '';
  const callbacks: URL[] = [];
  /** The server's whole log, at trace level; no secret may appear in it. */
  let logs = '';
  /** Every secret value the flows handle. */
  const secrets: string[] = ['correct horse battery'];
  let app: { client_id: string; client_secret: string };

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = { ...loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: base, LOG_LEVEL: 'trace' }), port };
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs += chunk.toString('utf8');
        done();
      },
    });
    server = await createServer(config, { worker: false, logStream });
    await server.app.listen({ port, host: '127.0.0.1' });
    const boot = await server.services.accounts.bootstrap({
      email: 'browser@example.com',
      name: 'Browser User',
      password: 'correct horse battery',
    });
    callback = http.createServer((request, response) => {
      callbacks.push(new URL(request.url ?? '/', 'http://callback'));
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>Callback</title><p>back at the client</p>');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/oauth/callback`;
    const created = await fetch(`${base}/applications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${boot.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Browser Test App',
        website_url: 'http://127.0.0.1/',
        callback_url: callbackUrl,
      }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    app = (
      (await created.json()) as { data: { client_id: string; client_secret: string; access_token: string } }
    ).data;
    secrets.push(
      boot.access_token,
      boot.client_secret,
      app.client_secret,
      (app as { access_token?: string }).access_token ?? '',
    );
    browser = await launchChromium();
    fs.mkdirSync('test-results', { recursive: true });
  });

  after(async () => {
    await browser?.close();
    callback?.closeAllConnections();
    await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
    await server?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const authorizeUrl = (state: string, redirect = callbackUrl) =>
    `${base}/signin/oauth/authorize?${new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'api:read message:write',
      state,
    })}`;

  /** The callback request that carried this state (the browser also asks the callback origin for a favicon). */
  function landedWith(state: string): URL {
    const landed = callbacks.find(
      (url) => url.pathname === '/oauth/callback' && url.searchParams.get('state') === state,
    );
    assert.ok(landed, `no callback with state ${state}: ${callbacks.map(String).join(', ')}`);
    return landed;
  }

  async function signIn(page: Page) {
    await page.fill('input[name="email"]', 'browser@example.com');
    await page.fill('input[name="password"]', 'correct horse battery');
    await Promise.all([
      page.waitForLoadState('load'),
      page.click('button[type="submit"], input[type="submit"]'),
    ]);
  }

  test('sign in, authorize, exchange the code and call the API', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizeUrl('state-ok'));
    assert.match(page.url(), /\/signin/);
    await signIn(page);
    const consent = await page.content();
    assert.match(consent, /Browser Test App/);
    assert.match(consent, /api:read|read/i);
    await page.screenshot({ path: 'test-results/oauth-consent.png' });
    await Promise.all([page.waitForURL(/\/oauth\/callback/), page.click('button[value="authorize"]')]);
    const landed = landedWith('state-ok');
    assert.equal(landed.searchParams.get('state'), 'state-ok');
    const code = landed.searchParams.get('code');
    assert.ok(code);
    secrets.push(code);
    const exchanged = await fetch(`${base}/signin/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callbackUrl,
        client_id: app.client_id,
        client_secret: app.client_secret,
      }),
    });
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const token = (await exchanged.json()) as { access_token: string; token_type: string };
    secrets.push(token.access_token);
    assert.equal(token.token_type, 'bearer');
    const root = await fetch(`${base}/`, { headers: { authorization: `Bearer ${token.access_token}` } });
    assert.equal(root.status, 200);
    await context.close();
  });

  test('Deny returns to the callback with access_denied and the state', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizeUrl('state-deny'));
    await signIn(page);
    await Promise.all([page.waitForURL(/\/oauth\/callback/), page.click('button[value="deny"]')]);
    const landed = landedWith('state-deny');
    assert.equal(landed.searchParams.get('error'), 'access_denied');
    assert.equal(landed.searchParams.get('state'), 'state-deny');
    assert.equal(landed.searchParams.get('code'), null);
    await context.close();
  });

  test('a redirect_uri other than the registered one shows an error page and never redirects', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(authorizeUrl('state-bad', 'http://127.0.0.1:9/evil'));
    assert.equal(response?.status(), 400);
    assert.match(page.url(), /\/signin\/oauth\/authorize/);
    assert.ok(!callbacks.some((url) => url.searchParams.get('state') === 'state-bad'));
    await context.close();
  });

  test('no password, secret, code or token reaches the server log', () => {
    assert.ok(logs.includes('/signin/oauth/access_token'), 'the log saw the flow');
    for (const secret of secrets.filter((value) => value.length >= 8)) {
      assert.ok(!logs.includes(secret), `a secret value appears in the log: ${secret.slice(0, 6)}…`);
    }
  });
});
