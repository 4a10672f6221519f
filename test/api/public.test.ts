import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

const XSS = '<script>alert(1)</script>';
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

await describeApi('public message pages', (get) => {
  /** Creates a message in alice's default bucket, shares it, and answers its uuid and public path. */
  async function shared(message: unknown): Promise<{ uuid: string; path: string }> {
    const { data, alice } = get();
    const [result] = await data('POST', `/buckets/${alice.bucketKey}/messages`, message);
    assert.ok(result.uuid, JSON.stringify(result));
    const { public_url } = await data('PUT', `/buckets/${alice.bucketKey}/shared/${result.uuid}`);
    assert.ok(public_url.startsWith(`${PUBLIC_URL}/public/messages/`), public_url);
    return { uuid: result.uuid, path: public_url.slice(PUBLIC_URL.length) };
  }

  const page = (path: string, accept = BROWSER_ACCEPT) =>
    get().call({ method: 'GET', url: path, as: null, headers: { accept } });

  function assertPageHeaders(response: Awaited<ReturnType<typeof page>>) {
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(response.headers['content-security-policy'], CSP);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.equal(response.headers['cache-control'], 'no-store');
  }

  /**
   * Inline styles only: the page is made of a known set of elements and attributes, so that nothing
   * from the message can add markup, scripts, handlers or external resources.
   */
  function assertSelfContained(html: string) {
    assert.ok(html.startsWith('<!doctype html>'));
    const elements = new Set(
      'html head meta title style body main header footer h1 h2 h3 p span strong dl dt dd div section table tbody tr th td pre'.split(
        ' ',
      ),
    );
    const attributes = new Set(['lang', 'charset', 'name', 'content', 'class', 'scope']);
    for (const [, name, rest] of html.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g)) {
      assert.ok(elements.has(name!.toLowerCase()), `unexpected element <${name}>`);
      for (const [, attribute] of rest!.matchAll(/\s([^\s=]+)="[^"]*"/g)) {
        assert.ok(attributes.has(attribute!), `unexpected attribute ${attribute} on <${name}>`);
      }
      assert.equal(
        rest!.replace(/\s[^\s=]+="[^"]*"/g, '').trim(),
        '',
        `stray attribute text in <${name}${rest}>`,
      );
    }
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    assert.doesNotMatch(style, /url\(|@import/i);
  }

  test('a browser gets a readable HTML page of the exchange with the protective headers, without auth', async () => {
    const { path } = await shared({
      request: {
        method: 'POST',
        url: 'https://api.example.com/v1/orders?page=2&tag=a&tag=b',
        headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'req-123' },
        body: '{"item":"book","qty":2}',
        timestamp: 1700000000.123456,
      },
      response: {
        status: 404,
        headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Trace': 'trace-9' },
        body: '{"error":{"code":"missing","ids":[1,2]},"big":12345678901234567890}',
        timestamp: 1700000000.654321,
        response_time: 0.25,
      },
    });
    const response = await get().call({ method: 'GET', url: path, as: null });
    assert.equal(response.statusCode, 200);
    assertPageHeaders(response);
    assert.equal((await page(path)).body, response.body, 'no Accept reads like a browser');
    const html = response.body;
    assertSelfContained(html);
    assert.match(html, /<style>/);
    assert.ok(html.includes('POST'));
    assert.ok(html.includes('https://api.example.com/v1/orders?page=2&amp;tag=a&amp;tag=b'));
    assert.ok(html.includes('404 Not Found'));
    assert.ok(html.includes('250 ms'), 'response time shown');
    assert.ok(html.includes('2023-11-14 22:13:20.123456 UTC'), 'request time shown');
    for (const text of ['X-Request-Id', 'req-123', 'X-Trace', 'trace-9', 'page', 'tag']) {
      assert.ok(html.includes(text), `${text} shown`);
    }
    assert.ok(html.includes('<h2>Request</h2>') && html.includes('<h2>Response</h2>'));
    // JSON bodies are indented, and big numbers keep every digit.
    assert.match(html, /\{\n {2}<span class="jk">&quot;error&quot;<\/span>: \{\n {4}/);
    assert.ok(html.includes('12345678901234567890'));
    assert.ok(html.includes('&quot;book&quot;'));
  });

  test('Accept: application/json gets the message detail in the envelope', async () => {
    const { uuid, path } = await shared({
      request: { method: 'GET', url: 'https://api.example.com/json', body: 'hello' },
      response: { status: 200, body: 'world' },
    });
    const response = await page(path, 'application/json');
    assert.equal(response.statusCode, 200, response.body);
    assert.match(response.headers['content-type'] as string, /^application\/json/);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.match(String(response.headers.vary), /Accept/i);
    const body = response.json();
    assert.equal(body.error, null);
    assert.equal(body.meta.status, 'success');
    assert.equal(body.data.uuid, uuid);
    assert.equal(body.data.request.body, 'hello');
    assert.equal(body.data.response.body, 'world');
    assert.equal(body.data.response.reason, 'OK');
    assert.equal(body.data.shared, true);
    assert.equal('share_token' in body.data, false);
    assert.equal('public_url' in body.data, false);
    assert.ok(!response.body.includes(path.split('/').pop()!), 'the token is not echoed');
    const { bucket_key: bucketKey, ...detail } = await get().data(
      'GET',
      `/buckets/${get().alice.bucketKey}/messages/${uuid}`,
    );
    assert.equal(bucketKey, get().alice.bucketKey);
    assert.deepEqual(body.data, detail, 'the detail but for the bucket key');
    const mixed = await page(path, 'text/plain;q=0.5, application/json');
    assert.equal(mixed.statusCode, 200);
    assert.equal(mixed.json().data.uuid, uuid);
  });

  test('a bearer token is neither needed nor harmful', async () => {
    const { path } = await shared({ request: { method: 'GET', url: 'https://api.example.com/' } });
    const withToken = await get().call({ method: 'GET', url: path, headers: { accept: BROWSER_ACCEPT } });
    assert.equal(withToken.statusCode, 200);
    const bogus = await get().call({ method: 'GET', url: path, as: 'not-a-token' });
    assert.equal(bogus.statusCode, 200);
    const foreign = await get().call({ method: 'GET', url: path, as: get().bob });
    assert.equal(foreign.statusCode, 200);
  });

  test('everything user-controlled is HTML-escaped', async () => {
    const { path } = await shared({
      request: {
        method: 'POST',
        url: `https://api.example.com/${encodeURIComponent(XSS)}?q=${XSS}&${XSS}=1`,
        headers: { 'X-Evil': XSS, [`X-${XSS}`]: 'name', 'Content-Type': 'text/html' },
        form: { [XSS]: XSS },
        body: `<html><body>${XSS}<img src=x onerror=alert(2)></body></html>`,
      },
      response: {
        status: 200,
        reason: XSS,
        headers: { 'Content-Type': 'application/json', Location: `javascript:${XSS}` },
        body: JSON.stringify({ [XSS]: XSS, list: [`"${XSS}"`, "'quoted'"] }),
      },
    });
    const response = await page(path);
    assert.equal(response.statusCode, 200);
    const html = response.body;
    assertSelfContained(html);
    assert.ok(!html.includes(XSS), 'no raw script tag');
    assert.ok(!html.includes('<img'), 'no raw img tag');
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(html.includes('&lt;img src=x onerror=alert(2)&gt;'));
    assert.ok(html.includes('&#39;quoted&#39;'));
    const escapedTitle = /<title>([^<]*)<\/title>/.exec(html);
    assert.ok(escapedTitle && escapedTitle[1]!.includes('&lt;script&gt;'), 'title escaped');
  });

  test('the not-found page for a browser is HTML with the same protective headers', async () => {
    const response = await page('/public/messages/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(response.statusCode, 404);
    assertPageHeaders(response);
    assertSelfContained(response.body);
    assert.match(response.body, /not found/i);
  });

  test('unknown tokens answer 404 to other clients with the error envelope', async () => {
    for (const token of ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'short', '%3Cscript%3E', 'x'.repeat(150)]) {
      await get().expectError(
        { method: 'GET', url: `/public/messages/${token}`, as: null },
        404,
        'not_found',
      );
      await get().expectError(
        {
          method: 'GET',
          url: `/public/messages/${token}`,
          as: null,
          headers: { accept: 'application/json' },
        },
        404,
        'not_found',
      );
    }
  });

  test('the message uuid is not a public link', async () => {
    const { uuid } = await shared({ request: { method: 'GET', url: 'https://api.example.com/' } });
    const response = await page(`/public/messages/${uuid}`, 'application/json');
    assert.equal(response.statusCode, 404);
  });

  test('after unsharing, both representations answer 404; sharing again gives a new working link', async () => {
    const { uuid, path } = await shared({ request: { method: 'GET', url: 'https://api.example.com/gone' } });
    assert.equal((await page(path)).statusCode, 200);
    const key = get().alice.bucketKey;
    const unshared = await get().call({ method: 'DELETE', url: `/buckets/${key}/shared/${uuid}` });
    assert.equal(unshared.statusCode, 204);
    const html = await page(path);
    assert.equal(html.statusCode, 404);
    assert.ok(!html.body.includes('/gone'), 'nothing of the message shows');
    assert.equal((await page(path, 'application/json')).statusCode, 404);
    const { public_url } = await get().data('PUT', `/buckets/${key}/shared/${uuid}`);
    assert.equal((await page(public_url.slice(PUBLIC_URL.length))).statusCode, 200);
    assert.equal((await page(path)).statusCode, 404);
  });

  test('a deleted message answers 404 on its public link', async () => {
    const { uuid, path } = await shared({ request: { method: 'GET', url: 'https://api.example.com/' } });
    await get().call({ method: 'DELETE', url: `/buckets/${get().alice.bucketKey}/messages/${uuid}` });
    assert.equal((await page(path)).statusCode, 404);
  });

  test('binary bodies show their size and a hex preview of the first 256 bytes', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]),
      Buffer.from('<b>&'),
      randomBytes(300),
      Buffer.from('TAIL-MARKER'),
    ]);
    const { path } = await shared({
      request: { method: 'GET', url: 'https://api.example.com/logo.png' },
      response: {
        status: 200,
        headers: { 'Content-Type': 'image/png' },
        body: bytes.toString('base64'),
        body_encoding: 'base64',
      },
    });
    const html = (await page(path)).body;
    assertSelfContained(html);
    assert.ok(html.includes(`${bytes.length} bytes`), 'size shown');
    assert.ok(html.includes('00000000  89 50 4e 47 0d 0a 1a 0a  00 ff 3c 62 3e 26'), 'hex of the first row');
    assert.ok(html.includes('|.PNG......&lt;b&gt;&amp;'), 'ASCII column, escaped');
    assert.ok(html.includes('000000f0  '), 'the 16th row');
    assert.ok(!html.includes('00000100  '), 'nothing past 256 bytes');
    assert.ok(!html.includes('TAIL-MARKER'));
    assert.ok(!html.includes(bytes.toString('base64').slice(0, 40)), 'no Base64 dump');
  });

  test('text bodies are shown by content type: XML as escaped text, form fields as a table', async () => {
    const { path } = await shared({
      request: {
        method: 'POST',
        url: 'https://api.example.com/form',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'name=Ada+Lovelace&lang=en&lang=fr&note=%3Cb%3E',
      },
      response: {
        status: 200,
        headers: { 'Content-Type': 'application/xml' },
        body: '<?xml version="1.0"?>\r\n<root><item id="1">ünïcode</item></root>',
      },
    });
    const html = (await page(path)).body;
    assert.ok(html.includes('<th scope="row">name</th><td>Ada Lovelace</td>'));
    assert.ok(
      html.includes('<th scope="row">lang</th><td>en</td></tr><tr><th scope="row">lang</th><td>fr</td>'),
    );
    assert.ok(html.includes('<th scope="row">note</th><td>&lt;b&gt;</td>'));
    assert.ok(html.includes('&lt;root&gt;&lt;item id=&quot;1&quot;&gt;ünïcode&lt;/item&gt;&lt;/root&gt;'));
  });

  test('a request without a response, or a response without a request, says so', async () => {
    const { path } = await shared({ request: { method: 'GET', url: 'https://api.example.com/timeout' } });
    const html = (await page(path)).body;
    assert.match(html, /No response was recorded/);
    const alone = await shared({ response: { status: 503, body: 'down' } });
    const responsePage = (await page(alone.path)).body;
    assertSelfContained(responsePage);
    assert.match(responsePage, /No request was recorded/);
    assert.match(responsePage, /503 Service Unavailable/);
  });
});

/** A dashboard build with its public page: browsers get that page, which renders the JSON itself. */
const BUILT = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-public-page-'));
const BUILT_PAGE =
  '<!doctype html><html><head><script type="module" src="/app/assets/public-x.js"></script></head>' +
  '<body><div id="root"></div></body></html>';
fs.writeFileSync(path.join(BUILT, 'index.html'), '<!doctype html><title>app</title>');
fs.writeFileSync(path.join(BUILT, 'public.html'), BUILT_PAGE);

await describeApi(
  'public message pages with the dashboard built',
  (get) => {
    test('a browser gets the built page under a CSP that lets its own script run; JSON and 404 stay', async () => {
      const { data, alice, call } = get();
      const [result] = await data('POST', `/buckets/${alice.bucketKey}/messages`, {
        request: { method: 'GET', url: 'https://api.example.com/built', body: XSS },
      });
      const { public_url } = await data('PUT', `/buckets/${alice.bucketKey}/shared/${result.uuid}`);
      const url = public_url.slice(PUBLIC_URL.length);
      const html = await call({ method: 'GET', url, as: null, headers: { accept: BROWSER_ACCEPT } });
      assert.equal(html.statusCode, 200);
      assert.equal(html.body, BUILT_PAGE, 'the page holds nothing of the message');
      assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
      const csp = String(html.headers['content-security-policy']);
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /connect-src 'self'/);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(html.headers['referrer-policy'], 'no-referrer');
      assert.equal(html.headers['cache-control'], 'no-store');

      const json = await call({ method: 'GET', url, as: null, headers: { accept: 'application/json' } });
      assert.equal(json.statusCode, 200);
      assert.equal(JSON.parse(json.body).data.request.body, XSS);

      const missing = await call({
        method: 'GET',
        url: '/public/messages/not-a-token',
        as: null,
        headers: { accept: BROWSER_ACCEPT },
      });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.headers['content-security-policy'], CSP);
    });
  },
  { dashboardDir: BUILT },
);
