import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiClient, bootstrapAccount, closeHttpServer, startServe } from '../helpers/cli.js';

/**
 * The real server, as `npm start` runs it, with a test whose XPath assertion is quadratic in an
 * 18 KB XML answer: on the event loop it froze the whole API for seconds. Triggered through its
 * trigger URL (no token), twice, while /health is asked again and again.
 */
describe('a hostile XPath check does not block the API', () => {
  const XML = `<r>${'<a/>'.repeat(4_500)}</r>`;
  const HOSTILE = 'count(//a[count(//a) > 0])';
  /** When the upstream finished answering each XML request (ms since the epoch). */
  const served: number[] = [];
  let upstream: http.Server;
  let base = '';
  let server: Awaited<ReturnType<typeof startServe>>;
  let token = '';
  let bucket = '';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-e2e-hostile-'));

  before(async () => {
    upstream = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(XML, () => served.push(Date.now()));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    ({ token, bucket } = bootstrapAccount(dataDir, 'hostile@example.com'));
    server = await startServe({ DATA_DIR: dataDir });
  });

  after(async () => {
    await server?.stop();
    await closeHttpServer(upstream);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = apiClient(
    () => server.url,
    () => token,
  );

  test('/health answers all along, and each run fails its step with the XPath time limit', async () => {
    const created = await api('POST', `/buckets/${bucket}/tests`, { name: 'Hostile XPath' });
    const t = await api('PUT', `/buckets/${bucket}/tests/${created.id}`, {
      steps: [
        {
          step_type: 'request',
          method: 'GET',
          url: `${base}/feed.xml`,
          assertions: [
            { source: 'response_status', comparison: 'equal_number', value: 200 },
            { source: 'response_xml', property: HOSTILE, comparison: 'equal_number', value: 4500 },
          ],
        },
      ],
    });
    const triggerUrl = (t.trigger_url as string).replace(/^http:\/\/localhost:\d+/, server.url);

    const runIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const response = await fetch(triggerUrl, { method: 'POST' });
      assert.equal(response.status, 201);
      const body = (await response.json()) as { data: { runs: { test_run_id: string }[] } };
      runIds.push(body.data.runs[0]!.test_run_id);
    }

    // Ask /health one request after the other until both runs have ended.
    const answers: { at: number; status: number }[] = [];
    const runs: any[] = [];
    const deadline = Date.now() + 30_000;
    for (let poll = 0; runs.length < runIds.length; poll++) {
      assert.ok(Date.now() < deadline, 'the runs did not end within 30 s');
      const health = await fetch(`${server.url}/health`);
      await health.arrayBuffer();
      answers.push({ at: Date.now(), status: health.status });
      if (poll % 20 === 19) {
        runs.length = 0;
        for (const id of runIds) {
          const run = await api('GET', `/buckets/${bucket}/tests/${t.id}/results/${id}`);
          if (run.result === 'queued' || run.result === 'working') break;
          runs.push(run);
        }
      }
    }

    assert.ok(answers.every((answer) => answer.status === 200));
    for (const run of runs) {
      const [step] = run.requests;
      assert.equal(run.result, 'fail');
      assert.equal(step.error, 'xpath: took longer than 1 s');
      assert.deepEqual(
        step.assertions.map((a: { result: string; error: string | null }) => [a.result, a.error]),
        [
          ['pass', null],
          ['fail', 'xpath: took longer than 1 s'],
        ],
      );
    }
    // While each hostile step worked (from its XML answer to the end of the step), /health kept
    // answering: on the event loop, not one answer came back in that window.
    assert.equal(served.length, 2);
    for (const [i, run] of runs.entries()) {
      const from = Math.min(...served);
      const to = (run.requests[0].finished_at as number) * 1000;
      const during = answers.filter((answer) => answer.at > from && answer.at < to).length;
      assert.ok(during >= 5, `run ${i + 1}: ${during} /health answers while its XPath ran`);
    }
  });
});
