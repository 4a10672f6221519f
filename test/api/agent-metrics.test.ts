import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { runAgent } from '../../src/cli/agent.js';
import { describeApi } from '../helpers/api.js';
import { freePort } from '../helpers/cli.js';
import { finishedRun, startReceiver } from '../helpers/receiver.js';

const receiver = await startReceiver();
after(() => receiver.close());

await describeApi('vigil agent --metrics-port', (get) => {
  test('the agent serves the runs it executed, and the server counts them when reported', async () => {
    const h = get();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    const teamId = (await h.data('GET', '/account')).teams[0].id as string;
    const agent = await h.data('POST', `/teams/${teamId}/agents`, { name: 'Metrics agent', region: 'lab' });
    const key = h.alice.bucketKey;
    const created = await h.data('POST', `/buckets/${key}/tests`, { name: 'through the agent' });
    await h.data(
      'PUT',
      `/buckets/${key}/tests/${created.id}/environments/${created.default_environment_id}`,
      {
        initial_variables: { base: receiver.base },
        remote_agents: [{ uuid: agent.id, name: 'Metrics agent' }],
      },
    );
    await h.data('PUT', `/buckets/${key}/tests/${created.id}`, {
      steps: [{ step_type: 'request', method: 'GET', url: '{{base}}/agent' }],
    });

    const port = await freePort();
    const controller = new AbortController();
    const running = runAgent(
      {
        url,
        token: agent.token,
        concurrency: 1,
        egress: 'allow-all',
        log: () => undefined,
        metrics: { port, host: '127.0.0.1', token: undefined },
      },
      controller.signal,
    );
    try {
      const started = (await h.data('POST', `/buckets/${key}/tests/${created.id}/runs`)).runs[0];
      assert.equal(started.agent, 'Metrics agent');
      assert.equal((await finishedRun(h, created.id, started.test_run_id)).result, 'pass');
      const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(scraped.status, 200);
      const all = new Map(parsePrometheusTextFormat(await scraped.text()).map((f) => [f.name, f]));
      const runs = all.get('vigil_runs_finished_total');
      assert.equal(runs?.type, 'COUNTER');
      const passed = runs.metrics.find((m) => m.labels?.result === 'pass' && m.labels.source === 'manual');
      assert.equal(passed?.value, '1');
      assert.equal(all.get('vigil_process_resident_memory_bytes')?.type, 'GAUGE');
      assert.equal(all.get('vigil_queue_jobs_waiting'), undefined, 'an agent has no queue of its own');

      const server = await h.call({ method: 'GET', url: '/metrics', as: null });
      const serverRuns = parsePrometheusTextFormat(server.body).find(
        (f) => f.name === 'vigil_runs_finished_total',
      );
      const reported = serverRuns?.metrics.find(
        (m) => m.labels?.result === 'pass' && m.labels.source === 'manual',
      );
      assert.ok(Number(reported?.value) >= 1, 'the server counted the reported run');
    } finally {
      controller.abort();
      assert.equal(await running, 0);
    }
    await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`), 'the listener is closed with the agent');
  });
});
