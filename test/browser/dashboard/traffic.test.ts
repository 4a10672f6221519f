import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

const run = promisify(execFile);

/**
 * Brings the end of the stream into view, as a reader scrolling down does: the next page loads by
 * itself. (Clicking "Load older" would race that load: the button goes once the last page is in.)
 */
async function showEndOfList(page: Page): Promise<void> {
  await page.locator('.stream-end').scrollIntoViewIfNeeded();
}

interface Received {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Headers the transport sets on its own; the rest must arrive unchanged. */
const TRANSPORT = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive']);
const comparable = (headers: Received['headers']) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !TRANSPORT.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );

describe('dashboard: traffic inspector', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamBase: string;
  const received: Received[] = [];
  let context: BrowserContext;
  let page: Page;
  let streamUrl: string;

  before(async () => {
    upstream = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          method: request.method!,
          url: request.url!,
          headers: request.headers,
          body: Buffer.concat(chunks),
        });
        const failing = request.url!.startsWith('/fail');
        response.writeHead(failing ? 500 : 200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(failing ? { error: 'boom' } : { ok: true, items: [1, 2.5, { deep: 'yes' }] }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamBase = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
    ({ context, page } = await dash.signedIn());
    streamUrl = `${dash.base}/app/b/${dash.bucket}/traffic/messages`;
  });

  after(async () => {
    await context?.close();
    await dash?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  const gateway = (path: string, init?: RequestInit) =>
    fetch(`${dash.traffic}/gateway/${dash.bucket}/http/${upstreamBase}${path}`, init);
  const row = (text: string) => page.locator('table.stream-table tbody tr', { hasText: text });

  test('new traffic appears live; the errors stream and filters narrow it', async () => {
    await page.goto(streamUrl);
    await page.getByText('No messages yet.').waitFor();

    const sent = await gateway('/hello?x=1', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trace': 'it\'s "quoted"' },
      body: '{"name":"Dana","n":1.10}',
    });
    assert.equal(sent.status, 200);
    assert.ok(sent.headers.get('vigil-message-id'));
    const captured = await fetch(`${dash.traffic}/capture/${dash.bucket}/captured/path?k=v`, {
      method: 'PUT',
      body: 'captured body',
    });
    assert.equal(captured.status, 200);
    assert.equal((await gateway('/fail/now')).status, 500);

    // No reload: the poll brings them in, with a count for screen readers.
    await row('/hello?x=1').waitFor({ timeout: 10_000 });
    await row('/captured/path?k=v').waitFor({ timeout: 10_000 });
    await row('/fail/now').waitFor({ timeout: 10_000 });
    await page.locator('.new-count', { hasText: /new message/ }).waitFor();
    assert.equal(await row('/fail/now').locator('.status-code.s5').textContent(), '500');
    // A capture is a received request the service answered itself: a neutral badge, not an error.
    const capturedRow = row('/captured/path?k=v');
    assert.equal((await capturedRow.locator('.badge.received').textContent())?.trim(), 'received 200');
    assert.equal(await capturedRow.locator('.status-code').count(), 0, 'no red status, no "no response"');
    assert.doesNotMatch((await capturedRow.textContent()) ?? '', /no response/);
    await dash.checkA11y(page, 'traffic stream');
    await dash.screenshot(page, 'traffic-stream');

    await page.getByRole('navigation', { name: 'Streams' }).getByRole('link', { name: 'Errors' }).click();
    await page.waitForURL(/\/traffic\/errors/);
    // The rows of the stream left behind go before the errors stream's own are counted.
    await row('/hello?x=1').waitFor({ state: 'detached' });
    await row('/fail/now').waitFor();
    assert.equal(await row('/captured/path').count(), 0, 'a capture is not an error');
    assert.equal(await row('/hello?x=1').count(), 0);
    await dash.checkA11y(page, 'errors stream');
    await dash.screenshot(page, 'traffic-errors');

    await page.getByRole('navigation', { name: 'Streams' }).getByRole('link', { name: 'Captures' }).click();
    await row('/captured/path').waitFor();
    assert.equal(await row('/fail/now').count(), 0);
    const gatewayField = page.getByLabel('Gateway URL for');
    await gatewayField.fill('https://api.example.com/v1/x?y=1');
    assert.equal(
      await page.getByTestId('gateway-url').textContent(),
      `${dash.traffic}/gateway/${dash.bucket}/https/api.example.com/v1/x?y=1`,
    );

    // Filters live in the address bar, so a view is a link.
    await page.goto(`${streamUrl}?status=5xx`);
    await row('/fail/now').waitFor();
    assert.equal(await page.locator('table.stream-table tbody tr').count(), 1);
    assert.equal(await page.getByLabel('Status').inputValue(), '5xx');
    await page.getByLabel('Path starts with').fill('/hello');
    await page.getByLabel('Status').selectOption('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/path=%2Fhello/);
    await row('/hello?x=1').waitFor();
    assert.equal(await page.locator('table.stream-table tbody tr').count(), 1);

    // A saved view stores the stream and filters and brings them back.
    await page.getByLabel('New view name').fill('Hello calls');
    await page.getByRole('button', { name: 'Save view' }).click();
    await page.getByRole('button', { name: /Delete view “Hello calls”/ }).waitFor();
    await page.goto(streamUrl);
    await row('/fail/now').waitFor();
    await page.getByLabel('Saved view').selectOption({ label: 'Hello calls' });
    await page.waitForURL(/path=%2Fhello/);
    // The unfiltered rows (which include /hello too) go first; then the view's own arrive.
    await row('/fail/now').waitFor({ state: 'detached' });
    await row('/hello?x=1').waitFor();
    assert.equal(await page.locator('table.stream-table tbody tr').count(), 1);

    // Selection exported as HAR, built in the browser.
    await page.getByRole('checkbox', { name: /Select POST \/hello/ }).check();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Export selection as HAR/ }).click(),
    ]);
    const har = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as {
      log: {
        version: string;
        entries: { request: { method: string; url: string; postData: { text: string } } }[];
      };
    };
    assert.equal(har.log.version, '1.2');
    assert.equal(har.log.entries.length, 1);
    assert.equal(har.log.entries[0]!.request.method, 'POST');
    assert.equal(har.log.entries[0]!.request.postData.text, '{"name":"Dana","n":1.10}');
  });

  let detailUrl: string;

  test('the detail shows both halves; Copy as cURL sends the same request again', async () => {
    await page.goto(streamUrl);
    await row('/hello?x=1').getByRole('link').click();
    await page.locator('.message-view').waitFor();
    detailUrl = page.url();
    const view = page.locator('.message-view');
    await view.getByRole('heading', { name: 'Request' }).waitFor();
    await view.getByRole('heading', { name: 'Response' }).waitFor();
    assert.match(
      (await view.locator('pre.mv-json').first().textContent())!,
      /\{\n {2}"name": "Dana",\n {2}"n": 1.10\n\}/,
    );
    await view.getByRole('row', { name: /x-trace/ }).waitFor();
    await view.getByRole('row', { name: /^x 1$/ }).waitFor();
    await dash.checkA11y(page, 'message detail');
    await dash.screenshot(page, 'traffic-detail');

    await page.getByRole('button', { name: 'Copy as cURL' }).click();
    const curl = (await page.getByTestId('curl').getAttribute('data-curl'))!;
    assert.match(curl, /^curl /);
    const original = received.find((r) => r.url === '/hello?x=1')!;
    received.length = 0;
    await run('bash', ['-c', `${curl} --silent --show-error --fail`]);
    assert.equal(received.length, 1);
    const again = received[0]!;
    assert.equal(again.method, original.method);
    assert.equal(again.url, original.url);
    assert.deepEqual(comparable(again.headers), comparable(original.headers));
    assert.equal(again.body.toString('hex'), original.body.toString('hex'));
  });

  test('a binary body shows as a hex dump, and its cURL command sends the same bytes', async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x27, 0x5c, 0x0a, 0x80, ...Buffer.from("it's")]);
    const created = await dash.api<{ uuid: string }[]>('POST', `/buckets/${dash.bucket}/messages`, {
      request: {
        method: 'PUT',
        url: `http://${upstreamBase}/bin/a%20b?q=$x&r=[1]`,
        headers: { 'content-type': 'application/octet-stream', 'x-quote': "a'b\\c" },
        body: bytes.toString('base64'),
        body_encoding: 'base64',
      },
    });
    await page.goto(`${dash.base}/app/b/${dash.bucket}/messages/${created.data[0]!.uuid}`);
    const dump = page.locator('.message-view pre.mv-hex');
    await dump.waitFor();
    assert.match((await dump.textContent())!, /^00000000 {2}00 01 02 ff fe 27 5c 0a {2}80 69 74 27 73/);
    await page.getByRole('button', { name: 'Copy as cURL' }).click();
    const curl = (await page.getByTestId('curl').getAttribute('data-curl'))!;
    received.length = 0;
    await run('bash', ['-c', `${curl} --silent --show-error --fail`]);
    assert.equal(received.length, 1);
    assert.equal(received[0]!.method, 'PUT');
    assert.equal(received[0]!.url, '/bin/a%20b?q=$x&r=[1]');
    assert.equal(received[0]!.headers['x-quote'], "a'b\\c");
    assert.equal(received[0]!.headers['content-type'], 'application/octet-stream');
    assert.equal(received[0]!.body.toString('hex'), bytes.toString('hex'));
  });

  test('sharing gives a public page with the same renderer; unsharing makes it 404', async () => {
    await page.goto(detailUrl);
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const link = page.getByTestId('public-url');
    await link.waitFor();
    const publicUrl = (await link.getAttribute('href'))!;
    assert.match(publicUrl, new RegExp(`^${dash.base}/public/messages/`));

    const anonymous = await dash.browser.newContext({ bypassCSP: true });
    const publicPage = await anonymous.newPage();
    const errors: string[] = [];
    publicPage.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    const response = await publicPage.goto(publicUrl);
    assert.match(response!.headers()['content-security-policy']!, /script-src 'self'/);
    await publicPage.locator('.message-view').waitFor();
    await publicPage.locator('.message-view').getByRole('heading', { name: 'Response' }).waitFor();
    await publicPage.locator('.message-view pre.mv-json', { hasText: '"Dana"' }).waitFor();
    assert.deepEqual(errors, []);
    await dash.checkA11y(publicPage, 'public message page');
    await dash.screenshot(publicPage, 'traffic-public');

    await page.getByRole('button', { name: 'Unshare' }).click();
    await page.getByText('No longer shared').waitFor();
    const json = await fetch(publicUrl, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 404);
    const html = await publicPage.goto(publicUrl);
    assert.equal(html!.status(), 404);
    await anonymous.close();
  });

  test('a message becomes a step of a new test, and that test passes', async () => {
    await page.goto(detailUrl);
    await page.getByRole('button', { name: 'Add as a step to a test' }).click();
    await page.getByLabel('Test', { exact: true }).selectOption({ label: 'New test…' });
    await page.getByLabel('New test name').fill('From traffic');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.waitForURL(/\/tests\/[^/]+$/);
    const testId = /\/tests\/([^/?]+)/.exec(page.url())![1]!;

    const test = await dash.api<{
      steps: { method: string; url: string; body: string; assertions: unknown[] }[];
    }>('GET', `/buckets/${dash.bucket}/tests/${testId}`);
    assert.equal(test.data.steps.length, 1);
    assert.equal(test.data.steps[0]!.method, 'POST');
    assert.equal(test.data.steps[0]!.body, '{"name":"Dana","n":1.10}');

    const started = await dash.api<{ runs: { test_run_id: string }[] }>(
      'POST',
      `/buckets/${dash.bucket}/tests/${testId}/runs`,
    );
    assert.equal(started.status, 201);
    const runId = started.data.runs[0]!.test_run_id;
    let result = '';
    for (let i = 0; i < 100 && !['pass', 'fail', 'canceled'].includes(result); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const runState = await dash.api<{ result: string }>(
        'GET',
        `/buckets/${dash.bucket}/tests/${testId}/results/${runId}`,
      );
      result = runState.data.result;
    }
    assert.equal(result, 'pass');
  });

  test('usable at 390 px', async () => {
    const narrow = await dash.signedIn({ width: 390, height: 844 });
    await narrow.page.goto(streamUrl);
    await narrow.page.locator('table.stream-table tbody tr').first().waitFor();
    await dash.checkA11y(narrow.page, 'traffic stream at 390 px');
    await dash.screenshot(narrow.page, 'traffic-stream-390');
    await narrow.context.close();
  });

  test('with 10,000 messages the first page renders in under a second', async () => {
    const now = Date.now() / 1000;
    const batches: unknown[][] = [];
    for (let b = 0; b < 200; b++) {
      batches.push(
        Array.from({ length: 50 }, (_, i) => {
          const n = b * 50 + i;
          const at = now - 3600 - n * 0.25;
          return {
            request: { method: 'GET', url: `https://seed.example.com/items/${n}`, timestamp: at },
            response: {
              status: n % 10 === 0 ? 503 : 200,
              body: '{}',
              timestamp: at + 0.01,
              response_time: 0.01,
            },
          };
        }),
      );
    }
    const seeding = Date.now();
    for (let i = 0; i < batches.length; i += 8) {
      const answers = await Promise.all(
        batches.slice(i, i + 8).map((batch) => dash.api('POST', `/buckets/${dash.bucket}/messages`, batch)),
      );
      for (const answer of answers) assert.equal(answer.status, 201);
    }
    console.log(`seeded 10,000 messages in ${Date.now() - seeding} ms`);

    const fresh = await dash.signedIn();
    // Navigation start → first page of rows on screen, measured in the page; best of three loads.
    const timings: number[] = [];
    for (let round = 0; round < 3; round++) {
      await fresh.page.goto(streamUrl);
      await fresh.page.locator('table.stream-table tbody tr').nth(99).waitFor();
      timings.push(Math.round(await fresh.page.evaluate(() => performance.now())));
    }
    console.log(`first page of 10,000 messages visible ${timings.join(' / ')} ms after navigation`);
    fs.mkdirSync('test-results/dashboard', { recursive: true });
    fs.writeFileSync(
      'test-results/dashboard/traffic-timing.json',
      JSON.stringify({ messages: 10_000, first_page_ms: timings }, null, 2),
    );
    // The DOM holds the pages loaded so far, never the whole stream: the first page, or (when a slow
    // machine delivers the end-of-list report late) the first two.
    const first = await fresh.page.locator('table.stream-table tbody tr').count();
    assert.ok(first === 100 || first === 200, `${first} rows after the first load`);
    // The timings are recorded for bench/README.md (target: best under 1 s); a test does not time.

    await showEndOfList(fresh.page);
    await fresh.page
      .locator('table.stream-table tbody tr')
      .nth(first + 99)
      .waitFor();
    assert.equal(await fresh.page.locator('table.stream-table tbody tr').count(), first + 100);
    await fresh.context.close();
  });

  test('the Shared stream pages by the time of sharing', async () => {
    // 130 messages of their own, shared one after another.
    const uuids: string[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const items = Array.from({ length: batch === 2 ? 30 : 50 }, (_, i) => ({
        request: {
          method: 'GET',
          url: `https://shared.example/item/${batch * 50 + i}`,
          headers: {},
          body: '',
        },
        response: { status: 200, headers: {}, body: 'ok' },
      }));
      const posted = await dash.api<{ uuid: string }[]>('POST', `/buckets/${dash.bucket}/messages`, items);
      assert.equal(posted.status, 201, JSON.stringify(posted.body));
      uuids.push(...posted.data.map((item) => item.uuid));
    }
    assert.equal(uuids.length, 130);
    for (let i = 0; i < uuids.length; i += 10) {
      await Promise.all(
        uuids.slice(i, i + 10).map(async (uuid) => {
          const shared = await dash.api('PUT', `/buckets/${dash.bucket}/shared/${uuid}`);
          assert.equal(shared.status, 200);
        }),
      );
    }
    const before = await dash.api<{ uuid: string }[]>('GET', `/buckets/${dash.bucket}/shared?count=1000`);
    const total = before.data.length;
    assert.ok(total >= 130, `${total} shared`);
    const { context: shared, page: sharedPage } = await dash.signedIn();
    await sharedPage.goto(`${dash.base}/app/b/${dash.bucket}/traffic/shared`);
    const rows = sharedPage.locator('table.stream-table tbody tr');
    await rows.nth(99).waitFor();
    assert.equal(await rows.count(), 100);
    await showEndOfList(sharedPage);
    await rows.nth(total - 1).waitFor();
    assert.equal(await rows.count(), total);
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-uuid')));
    assert.deepEqual(
      shown,
      before.data.map((m) => m.uuid),
    );
    await shared.close();
  });
});
