import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiClient, startServe, vigil } from '../helpers/cli.js';

/**
 * The real server, as `npm start` runs it: tests are created and triggered over HTTP, the
 * in-process worker runs them (scripts in the sandbox threads) against a local upstream, and the
 * stored results are read back.
 */
describe('vigil serve runs tests end to end', () => {
  const received: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let upstream: http.Server;
  let base = '';
  let server: Awaited<ReturnType<typeof startServe>>;
  let token = '';
  let bucket = '';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-e2e-'));

  before(async () => {
    upstream = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body,
        });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: 17, items: [{ id: 3 }, { id: 4 }], echo: body }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const boot = vigil(
      [
        'bootstrap',
        '--email',
        'e2e@example.com',
        '--name',
        'E2E',
        '--password',
        'a long passphrase',
        '--json',
      ],
      {
        DATA_DIR: dataDir,
      },
    );
    assert.equal(boot.status, 0, boot.stderr);
    ({ access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout) as {
      access_token: string;
      bucket_key: string;
    });
    server = await startServe({ DATA_DIR: dataDir });
  });

  after(async () => {
    await server?.stop();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = apiClient(
    () => server.url,
    () => token,
  );

  async function createTest(name: string, steps: unknown[]) {
    const created = await api('POST', `/buckets/${bucket}/tests`, { name });
    await api(
      'PUT',
      `/buckets/${bucket}/tests/${created.id}/environments/${created.default_environment_id}`,
      {
        initial_variables: { base },
      },
    );
    return api('PUT', `/buckets/${bucket}/tests/${created.id}`, { steps });
  }

  /** The trigger URL on the address the server listens on (PUBLIC_URL says localhost). */
  const local = (url: string) => url.replace(/^http:\/\/localhost:\d+/, server.url);

  async function finished(testId: string, runId: string) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const run = await api('GET', `/buckets/${bucket}/tests/${testId}/results/${runId}`);
      if (run.result !== 'queued' && run.result !== 'working') return run;
      if (Date.now() > deadline) throw new Error(`run still ${run.result}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('a trigger URL runs the test with scripts, templates and a variable chain', async () => {
    const tag = `e2e-${Date.now()}`;
    const t = await createTest('End to end', [
      {
        step_type: 'request',
        method: 'POST',
        url: '{{base}}/orders?tag={{tag}}',
        headers: { 'Content-Type': 'application/json' },
        body: '{"tag":"{{tag}}","at":{{timestamp}}}',
        before_scripts: ["request.headers['X-Signed'] = [variables.get('tag').toUpperCase()];"],
        scripts: [
          "const body = JSON.parse(response.body); assert.lengthOf(body.items, 2); variables.set('second', String(body.items[1].id)); log('items', body.items.length);",
        ],
        assertions: [{ source: 'response_json', property: 'id', comparison: 'equal_number', value: 17 }],
        variables: [{ name: 'order', source: 'response_json', property: 'id' }],
      },
      {
        step_type: 'condition',
        left_value: '{{second}}',
        comparison: 'equal',
        right_value: '99',
        steps: [{ step_type: 'request', method: 'GET', url: '{{base}}/never?tag={{tag}}' }],
      },
      { step_type: 'request', method: 'GET', url: '{{base}}/orders/{{order}}/items/{{second}}?tag={{tag}}' },
    ]);
    const response = await fetch(`${local(t.trigger_url)}?tag=${tag}`);
    assert.equal(response.status, 201);
    const started = ((await response.json()) as { data: { runs: { test_run_id: string }[] } }).data.runs[0]!;
    const run = await finished(t.id, started.test_run_id);
    assert.equal(run.result, 'pass', JSON.stringify(run.requests, null, 2));
    assert.equal(run.scripts_passed, 2);
    assert.equal(run.requests[0].scripts[1].output, 'items 2');
    const got = received.filter((r) => r.path.includes(tag));
    assert.deepEqual(
      got.map((r) => `${r.method} ${r.path.split('?')[0]}`),
      ['POST /orders', 'GET /orders/17/items/4'],
    );
    assert.equal(got[0]!.headers['x-signed'], tag.toUpperCase());
    assert.match(got[0]!.body, new RegExp(`^\\{"tag":"${tag}","at":\\d{10}\\}$`));
    const step = await api(
      'GET',
      `/buckets/${bucket}/tests/${t.id}/results/${run.test_run_id}/steps/${run.requests[3].uuid}`,
    );
    assert.equal(step.response.status, 200);
    assert.ok(step.timings.dial_ms >= 0 && step.timings.wait_for_response_ms > 0);
  });

  test('a runaway script fails its step within its time limit and the next run still works', async () => {
    const t = await createTest('Runaway', [
      { step_type: 'request', method: 'GET', url: '{{base}}/spin', scripts: ['while (true) {}'] },
    ]);
    const started = (
      (await (await fetch(local(t.trigger_url))).json()) as { data: { runs: { test_run_id: string }[] } }
    ).data.runs[0]!;
    const before = Date.now();
    const run = await finished(t.id, started.test_run_id);
    assert.equal(run.result, 'fail');
    assert.match(run.requests[0].scripts[0].error, /time limit/);
    assert.ok(Date.now() - before < 10_000);
    // The server stayed responsive and the sandbox recovered.
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    const ok = await createTest('After the runaway', [
      {
        step_type: 'request',
        method: 'GET',
        url: '{{base}}/fine',
        scripts: ['assert.equal(response.status, 200)'],
      },
    ]);
    const next = (
      (await (await fetch(local(ok.trigger_url))).json()) as { data: { runs: { test_run_id: string }[] } }
    ).data.runs[0]!;
    assert.equal((await finished(ok.id, next.test_run_id)).result, 'pass');
  });
});
