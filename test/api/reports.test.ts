import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { describeApi } from '../helpers/api.js';

/** The upstream the tests call: `/users/<id>` answers a user; everything is recorded. */
const received: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
let upstream: http.Server;
let base = '';

before(async () => {
  upstream = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://upstream');
      received.push({
        method: request.method ?? '',
        path: url.pathname + url.search,
        headers: request.headers,
        body,
      });
      if (url.pathname === '/hostile') {
        response.writeHead(200, { 'content-type': 'text/html', 'x-evil': '<img src=x onerror=alert(1)>' });
        return response.end('<script>alert("owned")</script>');
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ path: url.pathname, name: url.searchParams.get('name') ?? 'Ada', id: 7 }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

after(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const requestStep = (url: string, extra: Record<string, unknown> = {}) => ({
  step_type: 'request',
  method: 'GET',
  url,
  assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
  ...extra,
});

await describeApi('reports, data-driven batches and exports', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

  async function newTest(name: string, steps: unknown[], variables: Record<string, string> = {}) {
    const { data } = get();
    const created = await data('POST', tests(), { name });
    await data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
      initial_variables: { base, ...variables },
    });
    return data('PUT', `${tests()}/${created.id}`, { steps });
  }

  async function waitFinished(testId: string, runId: string) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const run = await get().data('GET', `${tests()}/${testId}/results/${runId}`);
      if (!['queued', 'working'].includes(run.result)) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.result}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('report.html: the stored run as an escaped, self-contained download', async () => {
    const t = await newTest('Report <b>me</b>', [
      requestStep('{{base}}/hostile', {
        assertions: [{ source: 'response_text', comparison: 'equal', value: 'calm' }],
        variables: [{ name: 'evil', source: 'response_headers', property: 'X-Evil' }],
      }),
      requestStep('{{base}}/users/1'),
    ]);
    const [started] = (await get().data('POST', `${tests()}/${t.id}/runs`, {}, 201)).runs;
    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.result, 'fail');

    const url = `${tests()}/${t.id}/results/${run.test_run_id}/report.html`;
    const response = await get().call({ method: 'GET', url });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(response.headers['content-type'] as string, /^text\/html; charset=utf-8/);
    assert.equal(
      response.headers['content-disposition'],
      `attachment; filename="vigil-report-${run.test_run_id}.html"`,
    );
    const html = response.body;
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /<script|<img|<b>me/);
    assert.ok(html.includes('<h2>Report &lt;b&gt;me&lt;/b&gt;</h2>'));
    assert.ok(
      html.includes(
        '<td class="expected">calm</td><td class="actual">&lt;script&gt;alert(&quot;owned&quot;)',
      ),
    );
    assert.ok(html.includes('<pre>&lt;script&gt;alert("owned")&lt;/script&gt;</pre>'));
    assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
    assert.equal(html.match(/<details class="step /g)?.length, 2);
    assert.match(html, /<p><code>GET http:\/\/127\.0\.0\.1:\d+\/users\/1<\/code><\/p>/);

    // The permission of reading the result: api:read; another account sees nothing.
    await get().expectError({ method: 'GET', url, as: get().bob }, 404, 'not_found');
    const writeOnly = await get().tokenWith(['test:write']);
    await get().expectError({ method: 'GET', url, as: writeOnly }, 403, 'forbidden');
    await get().expectError(
      { method: 'GET', url: `${tests()}/${t.id}/results/00000000-0000-4000-8000-000000000000/report.html` },
      404,
      'not_found',
    );
  });

  test('report.html of a retried run shows both attempts with their exchanges', async () => {
    const t = await newTest('Retried', [
      requestStep('{{base}}/users/1', {
        assertions: [{ source: 'response_json', property: 'name', comparison: 'equal', value: 'Nobody' }],
      }),
    ]);
    await get().data('PUT', `${tests()}/${t.id}/environments/${t.default_environment_id}`, {
      retry_on_failure: true,
    });
    const [started] = (await get().data('POST', `${tests()}/${t.id}/runs`, {}, 201)).runs;
    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.result, 'fail');
    assert.ok(run.previous_attempt);
    const response = await get().call({
      method: 'GET',
      url: `${tests()}/${t.id}/results/${run.test_run_id}/report.html`,
    });
    assert.equal(response.statusCode, 200, response.body);
    const html = response.body;
    assert.match(html, /First attempt \(fail\), retried under retry_on_failure/);
    assert.equal(html.match(/<details class="step fail"/g)?.length, 2);
    assert.equal(html.match(/<p><code>GET http:\/\/127\.0\.0\.1:\d+\/users\/1<\/code><\/p>/g)?.length, 2);
    assert.equal(html.match(/<td class="expected">Nobody<\/td><td class="actual">Ada<\/td>/g)?.length, 2);
  });

  test('batch: one run per CSV or JSON row, the row as initial variables', async () => {
    const t = await newTest('Batch', [
      requestStep('{{base}}/users/{{user_id}}?name={{name}}', {
        assertions: [
          { source: 'response_json', property: 'name', comparison: 'equal', value: '{{expected}}' },
        ],
      }),
    ]);
    const url = `${tests()}/${t.id}/batch`;
    const response = await get().call({
      method: 'POST',
      url,
      headers: { 'content-type': 'text/csv; charset=utf-8' },
      body: '\uFEFFuser_id,name,expected\n1,Ada,Ada\n2,"Bob, Jr.","Bob, Jr."\n3,Cy,Dee\n',
    });
    assert.equal(response.statusCode, 201, response.body);
    const started = response.json().data;
    assert.equal(started.runs_started, 3);
    assert.deepEqual(
      started.runs.map((r: { variables: Record<string, string> }) => r.variables),
      [
        { user_id: '1', name: 'Ada', expected: 'Ada' },
        { user_id: '2', name: 'Bob, Jr.', expected: 'Bob, Jr.' },
        { user_id: '3', name: 'Cy', expected: 'Dee' },
      ],
    );
    const results = [];
    for (const run of started.runs) results.push((await waitFinished(t.id, run.test_run_id)).result);
    assert.deepEqual(results, ['pass', 'pass', 'fail']);

    const json = await get().data('POST', url, [{ user_id: 4, name: 'Eve', expected: 'Eve' }], 201);
    assert.equal(json.runs_started, 1);
    assert.deepEqual(json.runs[0].variables, { user_id: '4', name: 'Eve', expected: 'Eve' });
    assert.equal((await waitFinished(t.id, json.runs[0].test_run_id)).result, 'pass');
  });

  test('batch: bad files answer 400 naming the row, 422 over the row limit, and queue nothing', async () => {
    const t = await newTest('Batch errors', [requestStep('{{base}}/users/1')]);
    const url = `${tests()}/${t.id}/batch`;
    const csv = (body: string) => ({
      method: 'POST' as const,
      url,
      headers: { 'content-type': 'text/csv' },
      body,
    });
    const short = await get().expectError(csv('a,b\n1,2\n3\n'), 400, 'validation_failed', 'body');
    assert.match(short.message, /row 2: columns length is 2, got 1/);
    const nested = await get().expectError(
      { method: 'POST', url, body: [{ a: '1' }, { a: { b: 1 } }] },
      400,
      'validation_failed',
      'body',
    );
    assert.match(nested.message, /row 2: column "a" must be a string, number, boolean or null/);
    await get().expectError({ method: 'POST', url, body: { a: 1 } }, 400, 'validation_failed', 'body');
    await get().expectError(csv('a\n'), 400, 'validation_failed', 'body');
    const many = `n\n${Array.from({ length: 1001 }, (_, i) => String(i)).join('\n')}\n`;
    const limit = await get().expectError(csv(many), 422, 'limit_reached');
    assert.match(limit.message, /at most 1000 rows; the file has 1001/);
    // CSV is taken by the batch route only.
    await get().expectError(
      {
        method: 'POST',
        url: `${tests()}/${t.id}/runs`,
        headers: { 'content-type': 'text/csv' },
        body: 'a\n1\n',
      },
      415,
      'unsupported_media_type',
    );
    const readOnly = await get().tokenWith(['api:read']);
    await get().expectError({ method: 'POST', url, body: [{ a: '1' }], as: readOnly }, 403, 'forbidden');
    assert.deepEqual(await get().data('GET', `${tests()}/${t.id}/results`), []);
  });

  test('export?format=postman: a v2.1 collection with requests, auth, variables and pm.test scripts', async () => {
    const t = await newTest(
      'Postman <export>',
      [
        requestStep('{{base}}/users/{{user_id}}', {
          method: 'POST',
          headers: { 'Content-Type': ['application/json'], 'X-Token': ['{{token}}'] },
          body: '{"name":"{{name}}"}',
          auth: { auth_type: 'basic', username: 'ada', password: 's3cret' },
          assertions: [
            { source: 'response_status', comparison: 'equal_number', value: 200 },
            { source: 'response_json', property: 'name', comparison: 'equal', value: '{{name}}' },
            { source: 'response_xml', property: '/a', comparison: 'equal', value: 'x' },
          ],
          variables: [{ name: 'user_ref', source: 'response_json', property: 'id' }],
        }),
        { step_type: 'pause', duration: 1 },
        requestStep('{{base}}/users/{{user_ref}}', { form: { q: ['1', '2'] } }),
      ],
      { user_id: '1', token: 'tok', name: 'Ada' },
    );
    const response = await get().call({ method: 'GET', url: `${tests()}/${t.id}/export?format=postman` });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(
      response.headers['content-disposition'],
      'attachment; filename="Postman-export.postman_collection.json"',
    );
    const collection = response.json();
    // The shape Postman's v2.1 schema asks for.
    assert.equal(
      collection.info.schema,
      'https://schema.getpostman.com/json/collection/v2.1.0/collection.json',
    );
    assert.equal(collection.info.name, 'Postman <export>');
    assert.equal(typeof collection.info._postman_id, 'string');
    assert.match(collection.info.description, /Not exported \(no Postman equivalent\): step 2: pause of 1 s/);
    assert.ok(Array.isArray(collection.item));
    for (const item of collection.item) {
      assert.equal(typeof item.name, 'string');
      assert.equal(typeof item.request.method, 'string');
      assert.equal(typeof item.request.url, 'string');
      for (const header of item.request.header) assert.deepEqual(Object.keys(header), ['key', 'value']);
      for (const event of item.event) {
        assert.equal(event.listen, 'test');
        assert.equal(event.script.type, 'text/javascript');
        assert.ok(event.script.exec.every((line: unknown) => typeof line === 'string'));
      }
    }
    const [first, second] = collection.item;
    assert.equal(collection.item.length, 2);
    assert.equal(first.request.method, 'POST');
    assert.equal(first.request.url, `{{base}}/users/{{user_id}}`);
    assert.deepEqual(first.request.header, [
      { key: 'Content-Type', value: 'application/json' },
      { key: 'X-Token', value: '{{token}}' },
    ]);
    assert.deepEqual(first.request.body, { mode: 'raw', raw: '{"name":"{{name}}"}' });
    assert.deepEqual(first.request.auth, {
      type: 'basic',
      basic: [
        { key: 'username', value: 'ada', type: 'string' },
        { key: 'password', value: 's3cret', type: 'string' },
      ],
    });
    assert.deepEqual(first.event[0].script.exec, [
      'pm.collectionVariables.set("user_ref", String(_.get(pm.response.json(), "id")));',
      'pm.test("response_status equal_number 200", function () {',
      '  pm.expect(Number(pm.response.code)).to.eql(Number("200"));',
      '});',
      'pm.test("response_json name equal {{name}}", function () {',
      '  pm.expect(String(_.get(pm.response.json(), "name"))).to.eql(pm.variables.replaceIn("{{name}}"));',
      '});',
      '// Assertion not exported: response_xml /a equal x',
    ]);
    assert.deepEqual(second.request.body, {
      mode: 'urlencoded',
      urlencoded: [
        { key: 'q', value: '1' },
        { key: 'q', value: '2' },
      ],
    });
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    assert.deepEqual([...collection.variable].sort(byKey), [
      { key: 'base', value: base },
      { key: 'name', value: 'Ada' },
      { key: 'token', value: 'tok' },
      { key: 'user_id', value: '1' },
    ]);

    // Postman's own runner (newman) takes the collection: requests go out, the variable a step
    // extracts reaches the next request, and the translated assertions pass.
    received.length = 0;
    const summary = await runNewman(collection);
    assert.deepEqual(summary.failures, []);
    assert.deepEqual(summary.assertions, { total: 3, failed: 0 });
    assert.deepEqual(
      received.map((r) => `${r.method} ${r.path}`),
      ['POST /users/1', 'GET /users/7'],
    );
    assert.equal(received[0]!.headers['x-token'], 'tok');
    assert.equal(received[0]!.body, '{"name":"Ada"}');
  });

  test('export?format=curl: a bash script that sends each request, variables from the environment', async () => {
    const t = await newTest(
      "cURL's test",
      [
        requestStep('{{base}}/users/{{user_id}}?tag={{tag}}', {
          method: 'POST',
          headers: { 'Content-Type': ['application/json'], 'X-Quote': [`it's "$HOME" \`x\``] },
          body: '{"name":"{{name}}","at":"{{timestamp}}"}',
          auth: { auth_type: 'basic', username: 'ada', password: "pa'ss" },
        }),
        requestStep('{{base}}/users/2', { form: { a: ['1 2'], b: ['&'] } }),
      ],
      { user_id: '1', name: "O'Brien", tag: 'default-tag' },
    );
    const response = await get().call({ method: 'GET', url: `${tests()}/${t.id}/export?format=curl` });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(response.headers['content-type'] as string, /^text\/x-shellscript/);
    assert.equal(response.headers['content-disposition'], 'attachment; filename="cURL-s-test.sh"');
    const script = response.body;
    assert.match(script, /^#!\/usr\/bin\/env bash\n/);

    received.length = 0;
    const result = await runBash(script, { tag: 'from-env' });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(received.length, 2);
    const [first, second] = received;
    assert.equal(first!.method, 'POST');
    assert.equal(first!.path, '/users/1?tag=from-env');
    assert.equal(first!.headers['x-quote'], `it's "$HOME" \`x\``);
    assert.equal(first!.headers.authorization, `Basic ${Buffer.from("ada:pa'ss").toString('base64')}`);
    assert.equal(first!.body, `{"name":"O'Brien","at":"{{timestamp}}"}`);
    assert.equal(second!.method, 'GET');
    assert.equal(second!.path, '/users/2');
    assert.equal(second!.body, 'a=1+2&b=%26');
  });
});

function runBash(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-s'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
    child.stdin.end(script);
  });
}

interface NewmanSummary {
  run: {
    stats: { assertions: { total: number; failed: number } };
    failures: { error: { message: string } }[];
  };
}
const newman = createRequire(import.meta.url)('newman') as {
  run(
    options: { collection: unknown; reporters: string[] },
    done: (error: Error | null, summary: NewmanSummary) => void,
  ): void;
};

/** Runs a collection with newman, Postman's command-line runner. */
function runNewman(
  collection: unknown,
): Promise<{ failures: string[]; assertions: { total: number; failed: number } }> {
  return new Promise((resolve, reject) => {
    newman.run({ collection, reporters: [] }, (error, summary) => {
      if (error) return reject(error);
      const { total, failed } = summary.run.stats.assertions;
      resolve({ failures: summary.run.failures.map((f) => f.error.message), assertions: { total, failed } });
    });
  });
}
