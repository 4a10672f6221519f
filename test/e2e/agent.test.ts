import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiClient, startServe, VIGIL, vigil } from '../helpers/cli.js';

/**
 * A real `vigil serve` and a real `vigil agent` process: a test whose environment picks the agent
 * runs in the agent (not the server's worker) against a local upstream, and its result is stored
 * with the agent's name. The server counts a process silent for WORKER_DEAD_AFTER seconds as gone.
 */
describe('vigil agent runs the tests meant for it', () => {
  const received: { path: string; headers: http.IncomingHttpHeaders }[] = [];
  let upstream: http.Server;
  let base = '';
  let server: Awaited<ReturnType<typeof startServe>>;
  let token = '';
  let bucket = '';
  let teamId = '';
  let agentChild: ChildProcess | null = null;
  let agentOutput = '';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-e2e-'));
  // Short enough to see the agent go offline within the test, long enough that a busy CI machine
  // starving the agent for a few seconds does not make the server hand its run over mid-test.
  const DEAD_AFTER_SECONDS = 8;

  before(async () => {
    upstream = http.createServer((request, response) => {
      received.push({ path: request.url ?? '', headers: request.headers });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ seen_by: 'upstream', ok: true }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const boot = vigil(
      [
        'bootstrap',
        '--email',
        'agent@example.com',
        '--name',
        'Agent E2E',
        '--password',
        'a long passphrase',
        '--json',
      ],
      { DATA_DIR: dataDir },
    );
    assert.equal(boot.status, 0, boot.stderr);
    ({ access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout) as {
      access_token: string;
      bucket_key: string;
    });
    server = await startServe({ DATA_DIR: dataDir, WORKER_DEAD_AFTER: String(DEAD_AFTER_SECONDS) });
    teamId = (await api('GET', '/account')).teams[0].id;
  });

  after(async () => {
    if (agentChild && agentChild.exitCode === null) agentChild.kill('SIGKILL');
    await server?.stop();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = apiClient(
    () => server.url,
    () => token,
  );

  /** Polls until `check` answers a value (not undefined), or fails after `ms`. */
  async function eventually<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline)
        throw new Error(`${what} did not happen in ${ms} ms; agent said:\n${agentOutput}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  test('flags: missing or bad ones exit 2 with the usage', () => {
    const none = vigil(['agent'], {});
    assert.equal(none.status, 2);
    assert.match(none.stderr, /--url is required/);
    assert.match(none.stderr, /Usage: vigil agent/);
    const bad = vigil(['agent', '--url', 'ftp://x', '--token', 'vgl_agent_0123456789abcdef'], {});
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--url must be an http/);
    const concurrency = vigil(
      ['agent', '--url', 'http://localhost:1', '--token', 'vgl_agent_0123456789abcdef', '--concurrency', '0'],
      {},
    );
    assert.equal(concurrency.status, 2);
    assert.match(concurrency.stderr, /--concurrency/);
    const help = vigil(['agent', '--help'], {});
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage: vigil agent/);
  });

  test('an unknown token stops the agent with exit code 1, without printing the token', () => {
    const bogus = 'vgl_agent_this-token-was-never-issued';
    const refused = vigil(['agent', '--url', server.url, '--token', bogus], {});
    assert.equal(refused.status, 1, refused.stdout + refused.stderr);
    assert.match(refused.stdout, /refused the agent token/);
    assert.ok(!(refused.stdout + refused.stderr).includes(bogus));
  });

  test('a test whose environment picks the agent runs there and reports back', async () => {
    const agent = await api('POST', `/teams/${teamId}/agents`, { name: 'Lab agent', region: 'lab' });
    agentChild = spawn(process.execPath, [VIGIL, 'agent', '--url', server.url, '--token', agent.token], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    agentChild.stdout?.on('data', (chunk) => (agentOutput += chunk));
    agentChild.stderr?.on('data', (chunk) => (agentOutput += chunk));

    const tag = `agent-${Date.now()}`;
    const created = await api('POST', `/buckets/${bucket}/tests`, { name: 'Through the agent' });
    await api(
      'PUT',
      `/buckets/${bucket}/tests/${created.id}/environments/${created.default_environment_id}`,
      {
        initial_variables: { base, tag },
        remote_agents: [{ uuid: agent.id, name: 'Lab agent' }],
      },
    );
    await api('PUT', `/buckets/${bucket}/tests/${created.id}`, {
      steps: [
        {
          step_type: 'request',
          method: 'GET',
          url: '{{base}}/inside?tag={{tag}}&agent={{vigil_agent}}',
          assertions: [
            { source: 'response_status', comparison: 'equal_number', value: 200 },
            { source: 'response_json', property: 'seen_by', comparison: 'equal', value: 'upstream' },
          ],
          scripts: ["assert.equal(JSON.parse(response.body).ok, true); log('checked from the agent');"],
        },
      ],
    });

    const started = (await api('POST', `/buckets/${bucket}/tests/${created.id}/runs`)).runs[0];
    assert.equal(started.agent, 'Lab agent');
    assert.equal(started.region, 'lab');
    const run = await eventually('the run finishing', 30_000, async () => {
      const r = await api('GET', `/buckets/${bucket}/tests/${created.id}/results/${started.test_run_id}`);
      return r.result === 'queued' || r.result === 'working' ? undefined : r;
    });
    assert.equal(run.result, 'pass', JSON.stringify(run, null, 2));
    assert.equal(run.agent, 'Lab agent');
    assert.equal(run.region, 'lab');
    assert.equal(run.requests[0].scripts[0].output, 'checked from the agent');
    const hits = received.filter((r) => r.path.includes(tag));
    assert.equal(hits.length, 1, `the upstream saw ${hits.length} calls; agent said:\n${agentOutput}`);
    assert.match(hits[0]!.path, /agent=Lab%20agent|agent=Lab agent/);

    const listed = await api('GET', `/teams/${teamId}/agents/${agent.id}`);
    assert.equal(listed.status, 'online', JSON.stringify(listed));
    assert.match(listed.version, /^\d+\.\d+\.\d+/);
    assert.ok(listed.hostname);
    assert.ok(!agentOutput.includes(agent.token), 'the agent printed its token');

    // Stopped, the agent stops announcing itself and shows offline once the dead-after window passes.
    const exited = new Promise<number | null>((resolve) => agentChild!.once('exit', (code) => resolve(code)));
    agentChild.kill('SIGTERM');
    assert.equal(await exited, 0, agentOutput);
    assert.match(agentOutput, /stopped/);
    const offline = await eventually(
      'the agent showing offline',
      (DEAD_AFTER_SECONDS + 10) * 1000,
      async () => {
        const a = await api('GET', `/teams/${teamId}/agents/${agent.id}`);
        return a.status === 'offline' ? a : undefined;
      },
    );
    assert.ok(offline.last_seen_at > 0);
  });
});
