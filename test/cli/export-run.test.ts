import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCommand } from '../../src/cli/run.js';
import { bootstrapAccount, closeHttpServer, startServe } from '../helpers/cli.js';

/** A test exported from a running server runs with `vigil run`, as downloaded or as the API's envelope. */
describe('export → vigil run', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-export-'));
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-export-files-'));
  let server: Awaited<ReturnType<typeof startServe>>;
  let upstream: http.Server;
  let upstreamUrl = '';
  const seen: string[] = [];
  let exportUrl = '';
  let token = '';

  before(async () => {
    const account = bootstrapAccount(dataDir, 'export@example.com');
    token = account.token;
    upstream = http.createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 42, name: 'Ada' }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startServe({ DATA_DIR: dataDir, DATABASE_URL: '' });
    const created = await fetch(`${server.url}/buckets/${account.bucket}/tests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Users API: smoke',
        steps: [
          {
            step_type: 'request',
            method: 'GET',
            url: `${upstreamUrl}/users/42`,
            assertions: [
              { source: 'response_status', comparison: 'equal_number', value: 200 },
              { source: 'response_json', property: 'name', comparison: 'equal', value: 'Ada' },
            ],
          },
        ],
      }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { data } = (await created.json()) as { data: { id: string } };
    exportUrl = `${server.url}/buckets/${account.bucket}/tests/${data.id}/export`;
  });

  after(async () => {
    await server?.stop();
    if (upstream) await closeHttpServer(upstream);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(files, { recursive: true, force: true });
  });

  async function vigilRun(file: string) {
    let stdout = '';
    let stderr = '';
    const code = await runCommand([file, '--reporter', 'json'], {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      cwd: files,
      env: {},
    });
    return { code, stdout, stderr };
  }

  test('the export is a download of the bare test, and vigil run passes it', async () => {
    const response = await fetch(exportUrl, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-disposition'), 'attachment; filename="Users-API-smoke.json"');
    const text = await response.text();
    const document = JSON.parse(text) as Record<string, unknown>;
    assert.equal(document.name, 'Users API: smoke');
    assert.equal(document.data, undefined, 'not wrapped in the envelope');
    fs.writeFileSync(path.join(files, 'Users-API-smoke.json'), text);

    seen.length = 0;
    const result = await vigilRun('Users-API-smoke.json');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.deepEqual(seen, ['GET /users/42']);
    const report = JSON.parse(result.stdout) as {
      runs: { test_name: string }[];
      passed: number;
      failed: number;
    };
    assert.deepEqual(
      report.runs.map((r) => r.test_name),
      ['Users API: smoke'],
    );
    assert.equal(report.passed, 1);
    assert.equal(report.failed, 0);
  });

  test('a file holding the envelope {data: test} runs too', async () => {
    const response = await fetch(exportUrl, { headers: { authorization: `Bearer ${token}` } });
    const wrapped = { data: await response.json(), meta: { status: 'success' }, error: null };
    fs.writeFileSync(path.join(files, 'wrapped.json'), JSON.stringify(wrapped));
    seen.length = 0;
    const result = await vigilRun('wrapped.json');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.deepEqual(seen, ['GET /users/42']);
  });
});
