import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";
const INDEX =
  '<!doctype html><html><head><meta name="vigil-public-url" content="" />' +
  '<script type="module" src="/app/assets/x-abc.js"></script></head></html>';
const SCRIPT = 'console.log("dashboard");\n'.repeat(20);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-dashboard-'));
fs.mkdirSync(path.join(dir, 'assets'));
fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
fs.writeFileSync(path.join(dir, 'assets', 'x-abc.js'), SCRIPT);
fs.writeFileSync(path.join(dir, 'assets', 'x-abc.js.gz'), gzipSync(SCRIPT));
fs.writeFileSync(path.join(dir, '.secret'), 'not for the web');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function assertAppHeaders(response: LightMyRequestResponse) {
  assert.equal(response.headers['content-security-policy'], CSP);
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.equal(response.headers['referrer-policy'], 'same-origin');
}

await describeApi(
  'the dashboard at /app/',
  (get) => {
    const fetch = (url: string, headers: Record<string, string> = {}) =>
      get().app.inject({ method: 'GET', url, headers });

    test('/app redirects to /app/, keeping the query', async () => {
      for (const [url, location] of [
        ['/app', '/app/'],
        ['/app?code=c&state=s', '/app/?code=c&state=s'],
      ] as const) {
        const response = await fetch(url);
        assert.ok([301, 302].includes(response.statusCode), `${url}: ${response.statusCode}`);
        assert.equal(response.headers.location, location);
        assertAppHeaders(response);
      }
    });

    test('/app/ and client-side routes get index.html, revalidated each time', async () => {
      for (const url of ['/app/', '/app/?code=c&state=s', '/app/b/x/tests', '/app/b/abc/tests/123/']) {
        const response = await fetch(url);
        assert.equal(response.statusCode, 200, url);
        // The page is the build's, with PUBLIC_URL filled in for the browser.
        assert.equal(response.body, INDEX.replace('content=""', `content="${PUBLIC_URL}"`), url);
        assert.match(String(response.headers['content-type']), /^text\/html/);
        assert.equal(response.headers['cache-control'], 'no-cache', url);
        assertAppHeaders(response);
      }
    });

    test('hashed assets are immutable; precompressed files are used when accepted', async () => {
      const plain = await fetch('/app/assets/x-abc.js');
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.body, SCRIPT);
      assert.match(String(plain.headers['content-type']), /javascript/);
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assertAppHeaders(plain);

      const gzipped = await fetch('/app/assets/x-abc.js', { 'accept-encoding': 'gzip' });
      assert.equal(gzipped.statusCode, 200);
      assert.equal(gzipped.headers['content-encoding'], 'gzip');
      assert.match(String(gzipped.headers.vary), /accept-encoding/i);
      assert.equal(gzipped.headers['cache-control'], 'public, max-age=31536000, immutable');
    });

    test('a missing file is the 404 envelope; dot files and paths outside are never served', async () => {
      for (const url of ['/app/assets/missing.js', '/app/.secret', '/app/favicon.ico']) {
        const response = await fetch(url);
        assert.equal(response.statusCode, 404, url);
        assert.equal(response.json().error.code, 'not_found', url);
        assertAppHeaders(response);
      }
      for (const url of [
        '/app/../package.json',
        '/app/%2e%2e/package.json',
        '/app/assets/..%2f..%2fpackage.json',
      ]) {
        const response = await fetch(url);
        assert.ok(response.statusCode >= 400, `${url}: ${response.statusCode} ${response.body.slice(0, 80)}`);
        assert.ok(!response.body.includes('"name": "vigil"'), url);
      }
    });

    test('the routes are public, not in the API docs, and only GET', async () => {
      const response = await fetch('/app/', { authorization: 'Bearer nonsense-token-value' });
      assert.equal(response.statusCode, 200);
      const post = await get().app.inject({ method: 'POST', url: '/app/x' });
      assert.equal(post.statusCode, 404);
      assert.equal(post.json().error.code, 'not_found');
      const docs = await fetch('/docs/json');
      assert.ok(!Object.keys(docs.json().paths).some((p) => p === '/app' || p.startsWith('/app/')));
    });

    test('without index.html, /app/ answers 503 saying to build', async () => {
      fs.renameSync(path.join(dir, 'index.html'), path.join(dir, 'index.html.off'));
      try {
        for (const url of ['/app/', '/app/b/x/tests']) {
          const response = await fetch(url);
          assert.equal(response.statusCode, 503, url);
          assert.match(String(response.headers['content-type']), /^text\/html/);
          assert.match(response.body, /not built/);
          assert.match(response.body, /npm run build/);
          assertAppHeaders(response);
        }
      } finally {
        fs.renameSync(path.join(dir, 'index.html.off'), path.join(dir, 'index.html'));
      }
    });

    test('signing in without next lands on the dashboard once it is built', async () => {
      const form = await get().app.inject({ method: 'GET', url: '/signin' });
      const csrf = /name="csrf_token" value="([^"]*)"/.exec(form.body)![1]!;
      assert.ok(form.body.includes('name="next" value="/app/"'));
      const response = await get().app.inject({
        method: 'POST',
        url: '/signin',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `vigil_csrf=${csrf}` },
        payload: new URLSearchParams({
          csrf_token: csrf,
          email: 'alice@example.com',
          password: 'correct horse battery',
        }).toString(),
      });
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/app/');
    });
  },
  { dashboardDir: dir },
);

await describeApi('the dashboard when it is not built', (get) => {
  test('/app/ answers 503 and sign-in still lands on /profile', async () => {
    const response = await get().app.inject({ method: 'GET', url: '/app/' });
    assert.equal(response.statusCode, 503);
    assert.match(response.body, /npm run build/);
    const form = await get().app.inject({ method: 'GET', url: '/signin' });
    assert.ok(form.body.includes('name="next" value="/profile"'));
  });
});
