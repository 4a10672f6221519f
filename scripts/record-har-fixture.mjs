#!/usr/bin/env node
// Records test/fixtures/har/chromium.har: a real Chromium (driven by playwright-core) visits a page
// served by a local node:http server. The page fetches a JSON API with a query string, POSTs a form,
// loads a small PNG (a binary body) and gets a 404. Run it again to refresh the fixture:
//
//   node scripts/record-har-fixture.mjs [path/to/chromium] [output.har]
//
// Defaults: /usr/bin/chromium (or $CHROMIUM) and test/fixtures/har/chromium.har.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { URLSearchParams } from 'node:url';
import { chromium } from 'playwright-core';

const executablePath = process.argv[2] ?? process.env.CHROMIUM ?? '/usr/bin/chromium';
const output = path.resolve(process.argv[3] ?? 'test/fixtures/har/chromium.har');

/** A 2×2 PNG with an alpha channel: small, and not valid UTF-8. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAGElEQVR4nGP4z8AAQg0MDAz/T/z//58BAEHBCEKFN+VzAAAAAElFTkSuQmCC',
  'base64',
);

const PAGE = `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Vigil HAR fixture</title><link rel="icon" href="data:,"></head>
<body>
<img id="pixel" alt="pixel">
<script>
  const image = new Promise((resolve, reject) => {
    const img = document.getElementById('pixel');
    img.onload = resolve;
    img.onerror = reject;
    img.src = '/pixel.png';
  });
  Promise.all([
    fetch('/api/items?q=caf%C3%A9&tag=a&tag=b', { headers: { Accept: 'application/json' } }).then((r) => r.json()),
    fetch('/form', {
      method: 'POST',
      body: new URLSearchParams([['name', 'Zoë'], ['color', 'blue'], ['color', 'green']]),
    }).then((r) => r.json()),
    fetch('/missing').then((r) => r.text()),
    image,
  ]).then(
    () => { document.title = 'done'; },
    (error) => { document.title = 'failed: ' + error; },
  );
</script>
</body>
</html>
`;

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const url = new URL(request.url ?? '/', 'http://fixture');
    const send = (status, type, body, headers = {}) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
      response.end(body);
    };
    if (url.pathname === '/') return send(200, 'text/html; charset=utf-8', PAGE);
    if (url.pathname === '/api/items') {
      return send(
        200,
        'application/json',
        JSON.stringify({ q: url.searchParams.get('q'), tags: url.searchParams.getAll('tag'), items: [1, 2] }),
        { 'x-request-id': 'req-1' },
      );
    }
    if (url.pathname === '/form' && request.method === 'POST') {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      return send(
        201,
        'application/json',
        JSON.stringify({ name: form.get('name'), colors: form.getAll('color') }),
      );
    }
    if (url.pathname === '/pixel.png') return send(200, 'image/png', PNG);
    return send(404, 'text/plain; charset=utf-8', 'not found\n');
  });
});

await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const recording = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-har-')), 'recording.har');

const browser = await chromium.launch({
  executablePath,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const context = await browser.newContext({ recordHar: { path: recording, content: 'embed' } });
  const page = await context.newPage();
  await page.goto(origin);
  await page.waitForFunction("document.title !== 'Vigil HAR fixture'", undefined, { timeout: 15_000 });
  const title = await page.title();
  if (title !== 'done') throw new Error(`the page reported: ${title}`);
  // Closing the context writes the HAR.
  await context.close();
} finally {
  await browser.close();
  server.closeAllConnections();
  server.close();
}

const har = JSON.parse(fs.readFileSync(recording, 'utf8'));
fs.mkdirSync(path.dirname(output), { recursive: true });
fs.writeFileSync(output, `${JSON.stringify(har, null, 2)}\n`);
fs.rmSync(path.dirname(recording), { recursive: true, force: true });
console.log(`${har.log.entries.length} entries → ${path.relative(process.cwd(), output)}`);
