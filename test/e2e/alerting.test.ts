import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  apiClient,
  bootstrapAccount,
  startAnnouncedWorker,
  startServe,
  type startVigil,
} from '../helpers/cli.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Alerting across real processes on PostgreSQL: one `vigil serve --no-worker` and two `vigil
 * worker`, one per region (eu-a, us-b). The upstream fails the regions named in the path. Under
 * `alert_quorum: 2` one failing region sends nothing and two failing regions send exactly one
 * notification naming both; a step whose first connection is reset passes on its second attempt.
 */
const postgres = (await dialects()).find((d) => d.fixture.name === 'postgres')!;
describe('alerting: two regional workers on PostgreSQL', { skip: postgres.skip }, () => {
  let upstream: http.Server;
  let resetting: http.Server;
  let base = '';
  let resettingBase = '';
  let resetConnections = 0;
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: pg.Client;
  let env: Record<string, string>;
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  const workers: ReturnType<typeof startVigil>[] = [];
  let token = '';
  let bucket = '';

  const call = apiClient(
    () => serve!.url,
    () => token,
  );

  before(async () => {
    upstream = http.createServer((request, response) => {
      const [, , failing = '', region = ''] = (request.url ?? '/').split('/');
      response.writeHead(failing.split(',').includes(region) ? 500 : 200, {
        'content-type': 'application/json',
      });
      response.end('{}');
    });
    // Resets the first connection it gets, then answers normally.
    resetting = http.createServer((_request, response) => response.end('{"ok":true}'));
    resetting.on('connection', (socket: Socket) => {
      if (++resetConnections === 1) socket.resetAndDestroy();
    });
    for (const server of [upstream, resetting])
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    resettingBase = `http://127.0.0.1:${(resetting.address() as AddressInfo).port}`;

    database = await freshPostgresDatabase();
    env = { DATABASE_URL: database.url, NODE_ENV: 'test', LOG_LEVEL: 'warn' };
    ({ token, bucket } = bootstrapAccount(env, 'alerts@example.com'));
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    serve = await startServe(env, ['--no-worker']);
    for (const region of ['eu-a', 'us-b'])
      workers.push(await startAnnouncedWorker(['--region', region, '--concurrency', '2'], env, db));
  });

  after(async () => {
    await Promise.all([serve, ...workers].map((p) => p?.stop()));
    await db?.end();
    await database?.drop();
    for (const server of [upstream, resetting]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
  });

  /** A test in both regions whose upstream fails `failing`, mailing on failures under the quorum. */
  async function quorumTest(name: string, failing: string) {
    const created = await call('POST', `/buckets/${bucket}/tests`, {
      name,
      steps: [
        {
          step_type: 'request',
          method: 'GET',
          url: `${base}/q/${failing}/{{vigil_region}}`,
          assertions: [{ source: 'response_status', comparison: 'equal_number', value: '200' }],
        },
      ],
    });
    await call(
      'PUT',
      `/buckets/${bucket}/tests/${created.id}/environments/${created.default_environment_id}`,
      {
        regions: ['eu-a', 'us-b'],
        alert_quorum: 2,
        emails: { notify_on: 'failures', recipients: [{ email: 'oncall@example.com' }] },
      },
    );
    return created.id as string;
  }

  /** Starts a run in every region of the test; answers the round once it is decided. */
  async function decidedRound(testId: string) {
    const started = await call('POST', `/buckets/${bucket}/tests/${testId}/runs`, {});
    const ids = (started.runs as { test_run_id: string; region: string }[]).map((r) => r.test_run_id);
    assert.equal(ids.length, 2);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await db.query(
        'select r.* from alert_rounds r join test_runs t on t.round_id = r.round_id where t.id = $1',
        [ids[0]],
      );
      if (rows[0]) {
        const { rows: runs } = await db.query(
          'select region, result, worker_id from test_runs where id = any($1)',
          [ids],
        );
        return { ids, round: rows[0], runs };
      }
      assert.ok(Date.now() < deadline, 'the round was never decided');
      await sleep(100);
    }
  }

  test('alert_quorum 2, one region failing: no notification at all', async () => {
    const testId = await quorumTest('One region down', 'eu-a');
    const { ids, round, runs } = await decidedRound(testId);
    assert.deepEqual(runs.map((r) => `${r.region}:${r.result}`).sort(), ['eu-a:fail', 'us-b:pass']);
    // Each region's run went to the worker of that region: two processes finished the round.
    assert.notEqual(runs[0].worker_id, runs[1].worker_id);
    assert.equal(round.result, 'pass');
    const { rows } = await db.query('select * from notifications where run_id = any($1)', [ids]);
    assert.equal(rows.length, 0);
  });

  test('alert_quorum 2, both regions failing: exactly one notification naming both regions', async () => {
    const testId = await quorumTest('Both regions down', 'eu-a,us-b');
    const { ids, round } = await decidedRound(testId);
    assert.equal(round.result, 'fail');
    assert.deepEqual(JSON.parse(round.failed_regions).sort(), ['eu-a', 'us-b']);
    const { rows } = await db.query('select * from notifications where run_id = any($1)', [ids]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].channel, 'email');
    const mail = JSON.parse(rows[0].body) as { subject: string; text: string };
    assert.match(mail.text, /Failed regions: (eu-a, us-b|us-b, eu-a)/);
    assert.match(mail.text, /Passed regions: none/);
  });

  test('a dropped connection is sent again: the result shows 2 attempts', async () => {
    const created = await call('POST', `/buckets/${bucket}/tests`, {
      name: 'Flaky network',
      steps: [{ step_type: 'request', method: 'GET', url: `${resettingBase}/` }],
    });
    await call(
      'PUT',
      `/buckets/${bucket}/tests/${created.id}/environments/${created.default_environment_id}`,
      {
        regions: ['eu-a'],
        retry_transport_errors: { attempts: 2, backoff_ms: 50 },
      },
    );
    const started = await call('POST', `/buckets/${bucket}/tests/${created.id}/runs`, {});
    const runId = started.runs[0].test_run_id as string;
    const deadline = Date.now() + 60_000;
    let run: {
      result: string;
      requests: {
        uuid: string;
        attempts?: { error: string | null; response_status_code: number | null }[];
      }[];
    };
    for (;;) {
      run = await call('GET', `/buckets/${bucket}/tests/${created.id}/results/${runId}`);
      if (!['queued', 'working'].includes(run.result)) break;
      assert.ok(Date.now() < deadline, 'the run never finished');
      await sleep(100);
    }
    assert.equal(run.result, 'pass', JSON.stringify(run.requests));
    assert.equal(run.requests.length, 1);
    const attempts = run.requests[0]!.attempts ?? [];
    assert.equal(attempts.length, 2);
    assert.notEqual(attempts[0]!.error, null);
    assert.equal(attempts[0]!.response_status_code, null);
    assert.equal(attempts[1]!.response_status_code, 200);
    const step = await call(
      'GET',
      `/buckets/${bucket}/tests/${created.id}/results/${runId}/steps/${run.requests[0]!.uuid}`,
    );
    assert.equal(step.attempts.length, 2);
  });
});
