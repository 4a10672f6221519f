import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { loadConfig } from '../../src/config/config.js';
import { nowFloat } from '../../src/domain/ids.js';
import { createRuntime } from '../../src/main.js';
import { freePort, ROOT } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { eventually } from '../helpers/receiver.js';

const TOKEN = 'worker-metrics-token-0123456789';

/** `vigil worker` from the sources, in a process of its own. */
function startWorker(args: string[], env: Record<string, string | undefined>) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { main } from './src/cli/index.ts'; main(process.argv.slice(1)).then((code) => { if (code >= 0) process.exitCode = code; });`,
      'worker',
      ...args,
    ],
    { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return {
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

for (const { fixture, skip } of await dialects()) {
  describe(`vigil worker --metrics-port [${fixture.name}]`, { skip }, () => {
    test('serves its own registry: queue gauges, run metrics and process metrics, behind METRICS_TOKEN', async () => {
      const db = await fixture.create();
      const env = { DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl, METRICS_TOKEN: TOKEN };
      const config = { ...loadConfig(env), databaseUrl: db.databaseUrl };
      // A job due 5 s ago in a queue no worker serves, through the queue this store uses.
      const runtime = await createRuntime(db.store, config);
      await runtime.queue.enqueue(
        db.store.db,
        'run-test',
        { runId: 'worker-metrics' },
        { region: 'agent-worker-metrics', runAfter: nowFloat() - 5 },
      );
      await runtime.close();
      const port = await freePort();
      const worker = startWorker(['--metrics-port', String(port), '--region', 'local'], env);
      try {
        const url = `http://127.0.0.1:${port}/metrics`;
        const denied = await eventually(`the worker's metrics listener (${worker.output()})`, () =>
          fetch(url).then(
            (r) => r,
            () => undefined,
          ),
        );
        assert.equal(denied.status, 401);
        const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
        assert.equal(response.status, 200);
        const all = new Map(parsePrometheusTextFormat(await response.text()).map((f) => [f.name, f]));
        assert.equal(all.get('vigil_runs_finished_total')?.type, 'COUNTER');
        assert.equal(all.get('vigil_run_duration_seconds')?.type, 'HISTOGRAM');
        assert.equal(all.get('vigil_process_resident_memory_bytes')?.type, 'GAUGE');
        assert.equal(all.get('vigil_nodejs_eventloop_lag_seconds')?.type, 'GAUGE');
        // A worker has no API: no request metrics.
        assert.equal(all.get('vigil_http_requests_total')?.metrics.length ?? 0, 0);
        const waiting = all.get('vigil_queue_jobs_waiting');
        assert.equal(waiting?.type, 'GAUGE');
        const runTests = waiting.metrics.find((m) => m.labels?.job === 'run-test');
        assert.ok(Number(runTests?.value) >= 1, JSON.stringify(waiting.metrics));
        const age = all.get('vigil_queue_oldest_job_age_seconds');
        assert.ok(Number(age?.metrics.find((m) => m.labels?.job === 'run-test')?.value) >= 4);
      } finally {
        await worker.stop();
        await db.cleanup();
      }
    });
  });
}

test('vigil worker refuses a --metrics-port that is not a port', async () => {
  const { worker } = await import('../../src/cli/worker.js');
  const write = process.stderr.write;
  let said = '';
  process.stderr.write = ((chunk: string) => {
    said += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    assert.equal(await worker(loadConfig({}), ['--metrics-port', 'x']), 2);
  } finally {
    process.stderr.write = write;
  }
  assert.match(said, /--metrics-port must be a port number/);
});
