import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard, USER } from './harness.js';

const NEW_PASSWORD = 'a fresh passphrase 42';

/** A local OAuth callback: resolves with the query of the first request it gets. */
async function callbackServer(): Promise<{
  url: string;
  next: () => Promise<URLSearchParams>;
  close: () => Promise<void>;
}> {
  let resolve: (query: URLSearchParams) => void = () => undefined;
  let pending = new Promise<URLSearchParams>((r) => (resolve = r));
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://callback.local');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><html lang="en"><title>Callback</title><p>Done</p></html>');
    resolve(url.searchParams);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cb`,
    next: async () => {
      const query = await pending;
      pending = new Promise<URLSearchParams>((r) => (resolve = r));
      return query;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** Waits for the API error shown at this input (aria-invalid, described by the message); answers it. */
async function errorAt(page: Page, input: Locator): Promise<string> {
  await input.and(page.locator('[aria-invalid="true"]')).waitFor();
  const id = await input.getAttribute('aria-describedby');
  assert.ok(id, 'the input is described by its error');
  return (await page.locator(`[id="${id}"]`).textContent()) ?? '';
}

/** Accepts the next `confirm()` of the page. */
const acceptNextDialog = (page: Page) => page.once('dialog', (dialog) => void dialog.accept());

describe('dashboard: account pages and bucket settings', { skip: skipReason() }, () => {
  let d: Dashboard;
  let context: BrowserContext;
  let page: Page;
  let callback: Awaited<ReturnType<typeof callbackServer>>;

  const open = async (path: string, heading: string | RegExp) => {
    await page.goto(`${d.base}/app${path}`);
    await page.getByRole('heading', { name: heading }).first().waitFor();
  };
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  before(async () => {
    d = await startDashboard();
    ({ context, page } = await d.signedIn());
    callback = await callbackServer();
  });
  after(async () => {
    await context?.close();
    await callback?.close();
    await d?.close();
  });

  test('profile: the name changes and stays changed', async () => {
    await open('/account', 'Profile');
    const name = page.getByLabel('Name', { exact: true });
    assert.equal(await name.inputValue(), USER.name);
    await name.fill('Dana Renamed');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Your name was saved.').waitFor();
    const account = await d.api<{ name: string }>('GET', '/account');
    assert.equal(account.data.name, 'Dana Renamed');
    // The header shows the new name too.
    await page.locator('.account-name', { hasText: 'Dana Renamed' }).waitFor();
    await d.checkA11y(page, 'account profile');
    await d.screenshot(page, 'account-profile');
  });

  test('applications: create (secret once), the OAuth flow with it, rotate, delete', async () => {
    await open('/account/applications', 'Client applications');
    const form = page.getByTestId('new-application');
    // A field error lands next to its field.
    await form.getByLabel('Name').fill('Flow app');
    await form.getByLabel('Website URL').fill('ftp://nope');
    await form.getByLabel('Callback URL').fill(callback.url);
    await form.getByRole('button', { name: 'Create application' }).click();
    const website = form.getByLabel('Website URL');
    assert.match(await errorAt(page, website), /website_url/);

    await website.fill('https://flow.example');
    await form.getByRole('button', { name: 'Create application' }).click();
    const panel = page.getByTestId('secret-panel');
    await panel.waitFor();
    const clientSecret = (await panel.locator('[data-secret="Client secret"]').textContent())!.trim();
    const ownerToken = (await panel.locator('[data-secret="Access token"]').textContent())!.trim();
    assert.match(clientSecret, /\S{20,}/);
    assert.equal((await fetch(`${d.base}/account`, bearer(ownerToken))).status, 200, 'the owner token works');
    await d.checkA11y(page, 'account applications with secrets');
    await d.screenshot(page, 'account-applications');
    const apps = await d.api<{ client_id: string; name: string }[]>('GET', '/applications');
    const clientId = apps.data.find((a) => a.name === 'Flow app')!.client_id;

    // Shown once: dismissed, and not there after a reload.
    await panel.getByRole('button', { name: /hide/ }).click();
    await panel.waitFor({ state: 'detached' });
    await page.reload();
    await page.getByTestId('applications-table').getByText('Flow app').waitFor();
    assert.equal(await page.getByText(clientSecret).count(), 0);

    // The authorization-code flow with that application, in the browser.
    const authorize = new URL('/signin/oauth/authorize', d.base);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      redirect_uri: callback.url,
      response_type: 'code',
      scope: 'api:read',
      state: 's1',
    }))
      authorize.searchParams.set(k, v);
    await page.goto(authorize.toString());
    const query = callback.next();
    await page.getByRole('button', { name: 'Authorize' }).click();
    const params = await query;
    assert.equal(params.get('state'), 's1');
    const code = params.get('code');
    assert.ok(code, `a code at the callback: ${params.toString()}`);
    const exchange = await fetch(`${d.base}/signin/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback.url,
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    assert.equal(exchange.status, 200);
    const granted = (await exchange.json()) as { access_token: string; token_type: string };
    assert.equal(granted.token_type, 'bearer');
    const me = await fetch(`${d.base}/account`, bearer(granted.access_token));
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { data: { name: string } }).data.name, 'Dana Renamed');

    // Rotate: a new secret shown once; the old one no longer authenticates the client.
    await open('/account/applications', 'Client applications');
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'New secret for Flow app' }).click();
    await page.getByTestId('secret-panel').getByText('New client secret of Flow app').waitFor();
    const rotated = (await page.locator('[data-secret="Client secret"]').textContent())!.trim();
    assert.notEqual(rotated, clientSecret);
    const revokeWith = (secret: string) =>
      fetch(`${d.base}/signin/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: 'nothing', client_id: clientId, client_secret: secret }),
      });
    assert.equal((await revokeWith(clientSecret)).status, 401, 'the old secret fails');
    assert.equal((await revokeWith(rotated)).status, 200, 'the new secret works');

    // Delete: the application and its tokens go.
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Delete Flow app' }).click();
    await page.getByText('Flow app was deleted.').waitFor();
    assert.equal((await fetch(`${d.base}/account`, bearer(granted.access_token))).status, 401);
    assert.equal((await fetch(`${d.base}/account`, bearer(ownerToken))).status, 401);
    assert.ok(
      !(await d.api<{ client_id: string }[]>('GET', '/applications')).data.some(
        (a) => a.client_id === clientId,
      ),
    );
  });

  test('tokens: listed with kinds, and a revoked one gets 401', async () => {
    const created = await d.api<{ access_token: string }>('POST', '/applications', {
      name: 'Token holder',
      website_url: 'https://holder.example',
      callback_url: 'https://holder.example/cb',
    });
    const token = created.data.access_token;
    assert.equal((await fetch(`${d.base}/account`, bearer(token))).status, 200);

    await open('/account/tokens', 'Access tokens');
    const table = page.getByTestId('tokens-table');
    await table.getByText('Token holder').waitFor();
    await table.getByText('Dashboard sign-in').first().waitFor();
    assert.ok((await table.locator('tbody tr').count()) >= 3, 'bootstrap, dashboard and the new token');
    await d.checkA11y(page, 'account tokens');
    await d.screenshot(page, 'account-tokens');
    // The dark theme (the system's, through prefers-color-scheme) passes the same checks.
    await page.emulateMedia({ colorScheme: 'dark' });
    await d.checkA11y(page, 'account tokens, dark');
    await d.screenshot(page, 'account-tokens-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    acceptNextDialog(page);
    await page.getByRole('button', { name: /^Revoke personal token of Token holder/ }).click();
    await page.getByText('The token was revoked.').waitFor();
    assert.equal((await fetch(`${d.base}/account`, bearer(token))).status, 401);
    assert.equal(await table.getByText('Token holder').count(), 0);
  });

  test('tokens: create one with a name, scopes and an expiry; it is shown once and works within its scopes', async () => {
    await open('/account/tokens', 'Access tokens');
    const form = page.getByTestId('new-token');
    await form.getByRole('button', { name: 'Create token' }).click();
    assert.match(await errorAt(page, form.getByLabel('Token name')), /name/);

    await form.getByLabel('Token name').fill('CI reader');
    await form.getByLabel(/\(test:write\)/).check();
    await form.getByLabel('Expires').selectOption({ label: '7 days' });
    await form.getByRole('button', { name: 'Create token' }).click();
    const panel = page.getByTestId('secret-panel');
    await panel.getByRole('heading', { name: 'Token CI reader was created' }).waitFor();
    assert.match((await panel.locator('.secret-warning').textContent()) ?? '', /will not show it again/);
    await panel.getByRole('button', { name: 'Copy access token' }).waitFor();
    const token = ((await panel.locator('code.secret').textContent()) ?? '').trim();
    assert.match(token, /^vgl_at_/);

    // Listed by name with its expiry; the token reads and writes tests, but cannot make buckets.
    await page.getByTestId('tokens-table').getByText('CI reader').waitFor();
    const listed = (
      await d.api<{ name: string | null; scopes: string[]; created_at: number; expires_at: number | null }[]>(
        'GET',
        '/account/tokens',
      )
    ).data.find((t) => t.name === 'CI reader');
    assert.ok(listed);
    assert.deepEqual(listed.scopes, ['api:read', 'test:write']);
    assert.equal(listed.expires_at, listed.created_at + 7 * 24 * 3600);
    assert.equal((await fetch(`${d.base}/buckets`, bearer(token))).status, 200);
    const bucket = await fetch(`${d.base}/buckets?name=nope`, { ...bearer(token), method: 'POST' });
    assert.equal(bucket.status, 403);
    await d.checkA11y(page, 'account tokens, created');

    // Dismissed, the token is gone from the page for good.
    await panel.getByRole('button', { name: /^I have copied it/ }).click();
    assert.equal(await page.getByText(token).count(), 0);
  });

  test('integrations: add a webhook (secret masked), write and preview its message, then delete it', async () => {
    const account = await d.api<{ teams: { id: string }[] }>('GET', '/account');
    const teamId = account.data.teams[0]!.id;
    await open('/account/integrations', 'Team integrations');
    await page.getByText(/^Add an integration to/).click();
    const form = page.getByTestId('new-integration');
    await form.getByLabel('Type').selectOption('webhook');
    await form.getByLabel('Description').fill('Ops hook');
    await form.getByLabel('URL', { exact: true }).fill('not a url');
    await form.getByRole('button', { name: 'Add integration' }).click();
    assert.match(await errorAt(page, form.getByLabel('URL', { exact: true })), /url/);

    await form.getByLabel('URL', { exact: true }).fill('https://hooks.example.com/vigil');
    await form.getByLabel('Signing secret (optional)').fill('hook-secret-9876');
    await form.getByRole('button', { name: 'Add integration' }).click();
    const table = page.getByTestId('integrations-table');
    await table.getByText('Ops hook').waitFor();
    await table.getByText('…9876').waitFor();
    assert.equal(await page.getByText('hook-secret-9876').count(), 0, 'the secret is not shown back');
    const listed = await d.api<{ id: string }[]>('GET', `/teams/${teamId}/integrations`);
    assert.equal(listed.data.length, 1);
    await d.checkA11y(page, 'account integrations');
    await d.screenshot(page, 'account-integrations');

    // Its own message: a bad placeholder is refused at the body, a good one previewed and saved.
    const previewed = await d.api<{ id: string }>('POST', `/buckets/${d.bucket}/tests`, {
      name: 'Previewed',
    });
    await table.getByRole('button', { name: 'Edit the message of Ops hook' }).click();
    const message = page.getByTestId('template-form');
    await message.getByLabel('Body').fill('{"text": "{{hostname}}"}');
    await message.getByRole('button', { name: 'Save' }).click();
    assert.match(await errorAt(page, message.getByLabel('Body')), /unknown placeholder "hostname"/);
    await message.getByLabel('Body').fill('{"text": "{{test_name}} is {{result}}"}');
    await message.getByRole('button', { name: 'Preview' }).click();
    const preview = message.getByTestId('template-preview');
    await preview.waitFor();
    assert.match((await preview.textContent()) ?? '', /"text": ".+ is (pass|fail)"/);
    await d.checkA11y(page, 'account integrations, message template');
    await message.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The message of Ops hook was saved.').waitFor();
    const saved = await d.api<{ template: { body: string } | null }>(
      'GET',
      `/teams/${teamId}/integrations/${listed.data[0]!.id}`,
    );
    assert.equal(saved.data.template?.body, '{"text": "{{test_name}} is {{result}}"}');
    await d.api('DELETE', `/buckets/${d.bucket}/tests/${previewed.data.id}`);

    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Delete integration Ops hook' }).click();
    await page.getByText('Ops hook was deleted.').waitFor();
    assert.equal((await d.api<unknown[]>('GET', `/teams/${teamId}/integrations`)).data.length, 0);
  });

  test('agents: register one (token once), regions listed, delete it', async () => {
    const account = await d.api<{ teams: { id: string }[] }>('GET', '/account');
    const teamId = account.data.teams[0]!.id;
    await open('/account/agents', 'Remote agents');
    await page.getByTestId('regions-table').waitFor();
    await page.getByText(/^Register an agent for/).click();
    const form = page.getByTestId('new-agent');
    await form.getByLabel('Name').fill('Office agent');
    await form.getByLabel('Region label (optional)').fill('Bad Region');
    await form.getByRole('button', { name: 'Register agent' }).click();
    assert.match(await errorAt(page, form.getByLabel('Region label (optional)')), /region/);
    await form.getByLabel('Region label (optional)').fill('office-1');
    await form.getByRole('button', { name: 'Register agent' }).click();
    const panel = page.getByTestId('secret-panel');
    await panel.waitFor();
    const token = (await panel.locator('[data-secret="Agent token"]').textContent())!.trim();
    assert.ok(token.length > 20);
    const table = page.getByTestId('agents-table');
    await table.getByText('Office agent').waitFor();
    await table.getByText('offline').waitFor();
    await table.getByText('never').waitFor();
    await d.checkA11y(page, 'account agents');
    await d.screenshot(page, 'account-agents');
    await panel.getByRole('button', { name: /hide/ }).click();
    assert.equal(await page.getByText(token).count(), 0);

    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Delete agent Office agent' }).click();
    await page.getByText('Office agent was deleted.').waitFor();
    assert.equal((await d.api<unknown[]>('GET', `/teams/${teamId}/agents`)).data.length, 0);
  });

  test('bucket settings: rename, retention, create a bucket and delete it', async () => {
    await open(`/b/${d.bucket}/settings`, 'General');
    const form = page.getByTestId('bucket-form');
    await form.getByLabel('Keep captured messages for (days)').fill('0');
    await form.getByRole('button', { name: 'Save' }).click();
    assert.match(await errorAt(page, form.getByLabel('Keep captured messages for (days)')), /retention_days/);
    await form.getByLabel('Name').fill('Renamed bucket');
    await form.getByLabel('Keep captured messages for (days)').fill('45');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The bucket was saved.').waitFor();
    const bucket = await d.api<{ name: string; retention_days: number; capture_url: string }>(
      'GET',
      `/buckets/${d.bucket}`,
    );
    assert.equal(bucket.data.name, 'Renamed bucket');
    assert.equal(bucket.data.retention_days, 45);
    await page.getByText(bucket.data.capture_url).waitFor();
    // The default bucket cannot be deleted, so the page does not offer it.
    assert.equal(await page.getByRole('heading', { name: 'Delete this bucket' }).count(), 0);

    await page.getByRole('button', { name: 'Show the secret' }).click();
    await page.getByTestId('secret-panel').locator('[data-secret="Signing secret"]').waitFor();
    await d.checkA11y(page, 'bucket settings');
    await d.screenshot(page, 'bucket-settings');

    const create = page.getByTestId('new-bucket');
    await create.getByLabel('Name of the new bucket').fill('Scratch bucket');
    await create.getByRole('button', { name: 'Create bucket' }).click();
    await page.waitForURL((url) => url.pathname.endsWith('/settings') && !url.pathname.includes(d.bucket));
    const key = /\/b\/([^/]+)\/settings/.exec(new URL(page.url()).pathname)![1]!;
    const remove = page.getByTestId('delete-bucket');
    await remove.waitFor();
    const button = remove.getByRole('button', { name: 'Delete bucket' });
    assert.equal(await button.isDisabled(), true, 'disabled until the name is typed');
    await remove.getByLabel(/Type the bucket's name/).fill('Scratch bucket');
    await button.click();
    await page.waitForURL(`**/app/b/${d.bucket}/tests`);
    const buckets = await d.api<{ key: string }[]>('GET', '/buckets');
    assert.ok(!buckets.data.some((b) => b.key === key), 'the bucket is gone');
    assert.equal((await d.api('GET', `/buckets/${key}`)).status, 404);
  });

  test('password: a wrong current password is shown at its field; the new one signs in', async () => {
    await open('/account', 'Password');
    const form = page.getByTestId('password-form');
    const current = form.getByLabel('Current password');
    await current.fill('not my password');
    await form.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
    await form.getByRole('button', { name: 'Change password' }).click();
    assert.match(await errorAt(page, current), /current password/);

    await current.fill(USER.password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password was changed.').waitFor();
    // The dashboard's token stays valid.
    await open('/account/tokens', 'Access tokens');

    // A new browser signs in with the new password (and not with the old one).
    const fresh = await d.browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
    try {
      const other = await fresh.newPage();
      await other.goto(`${d.base}/app/account`);
      await other.waitForURL(/\/signin/);
      await other.fill('input[name="email"]', USER.email);
      await other.fill('input[name="password"]', USER.password);
      await other.click('button[type="submit"]');
      await other.getByText(/not right/).waitFor();
      await other.fill('input[name="password"]', NEW_PASSWORD);
      await Promise.all([other.waitForURL(/\/app\//), other.click('button[type="submit"]')]);
      await other.getByRole('heading', { name: 'Profile' }).waitFor();
      await d.checkA11y(other, 'account profile at 390 px');
      const overflow = await other.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `no sideways scrolling at 390 px (${overflow}px)`);
      await d.screenshot(other, 'account-profile-390');
      await other.goto(`${d.base}/app/b/${d.bucket}/settings`);
      await other.getByRole('heading', { name: 'General' }).waitFor();
      await d.screenshot(other, 'bucket-settings-390');
    } finally {
      await fresh.close();
    }
  });

  test('keyboard alone: tabs and the profile form are reachable and usable', async () => {
    await open('/account/applications', 'Client applications');
    const tab = page.getByRole('link', { name: 'Profile', exact: true });
    await tab.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    await page.getByLabel('Name', { exact: true }).focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Dana Keyboard');
    await page.keyboard.press('Enter');
    await page.getByText('Your name was saved.').waitFor();
    assert.equal((await d.api<{ name: string }>('GET', '/account')).data.name, 'Dana Keyboard');
  });
});
