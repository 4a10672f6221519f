import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startServe, vigil } from '../helpers/cli.js';
import { type PrivatePostgres, privatePostgres } from './private-postgres.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const OUTAGE_MS = 10_000;

interface Answer {
  at: number;
  kind: 'ingest' | 'trigger';
  status: number;
  code?: string;
  retryAfter: string | null;
}

/**
 * PostgreSQL stopped for 10 s under ingest and triggers: every call answers 503 store_unavailable
 * with Retry-After (never 500), the service recovers without a restart, and its LISTEN connection
 * is back within 5 s of PostgreSQL returning.
 */
const cluster = await privatePostgres();
const skip = typeof cluster === 'string' ? `no private PostgreSQL cluster: ${cluster}` : false;
describe('PostgreSQL stopped for 10 s under load', { skip }, () => {
  const pgc = cluster as PrivatePostgres;
  let serve: Awaited<ReturnType<typeof startServe>>;
  let token = '';
  let bucket = '';
  let triggerUrl = '';
  /** A second test's trigger, clear of the load's rate limit. */
  let laterUrl = '';

  before(async () => {
    const env = { DATABASE_URL: pgc.url, DATA_DIR: '/nonexistent', LOG_LEVEL: 'info' };
    const boot = vigil(
      ['bootstrap', '--email', 'o@example.com', '--name', 'O', '--password', 'a long passphrase', '--json'],
      env,
    );
    assert.equal(boot.status, 0, boot.stderr);
    ({ access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout));
    serve = await startServe(env);
    const newTrigger = async (name: string) => {
      const created = await fetch(`${serve.url}/buckets/${bucket}/tests`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, steps: [] }),
      });
      assert.equal(created.status, 201);
      return new URL((await created.json()).data.trigger_url).pathname;
    };
    triggerUrl = await newTrigger('Under load');
    laterUrl = await newTrigger('After the outage');
  });
  after(async () => {
    await serve?.stop();
    pgc.remove();
  });

  const listeners = async () => {
    const client = new pg.Client({ connectionString: pgc.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "select count(*)::int as n from pg_stat_activity where query ilike 'listen vigil_jobs%'",
      );
      return rows[0].n as number;
    } finally {
      await client.end();
    }
  };

  test('503 with Retry-After during the outage, recovery without a restart, LISTEN back within 5 s', async () => {
    assert.equal(await listeners(), 1, 'one LISTEN connection before the outage');
    const answers: Answer[] = [];
    let running = true;
    const send = async (kind: Answer['kind']) => {
      const response =
        kind === 'ingest'
          ? await fetch(`${serve.url}/buckets/${bucket}/messages`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify([
                { request: { method: 'GET', url: `https://outage.test/${answers.length}` } },
              ]),
            })
          : await fetch(`${serve.url}${triggerUrl}`);
      const body = (await response.json()) as { error: { code: string } | null };
      answers.push({
        at: Date.now(),
        kind,
        status: response.status,
        ...(body.error && { code: body.error.code }),
        retryAfter: response.headers.get('retry-after'),
      });
    };
    const load = (async () => {
      for (let i = 0; running; i++) {
        // Triggers are rate limited to 10 per 10 s per URL: one in five calls is a trigger.
        await send(i % 5 === 0 ? 'trigger' : 'ingest').catch(() => undefined);
        await sleep(50);
      }
    })();

    await sleep(1_000);
    const stoppedAt = Date.now();
    pgc.stop();
    await sleep(OUTAGE_MS);
    pgc.start();
    const restartedAt = Date.now();
    let listenBackMs = -1;
    while (Date.now() - restartedAt < 15_000) {
      if ((await listeners().catch(() => 0)) >= 1) {
        listenBackMs = Date.now() - restartedAt;
        break;
      }
      await sleep(100);
    }
    // The load goes on for at least 5 s after the restart, so that there are calls from 3 s on to
    // check however soon LISTEN came back.
    await sleep(Math.max(2_000, restartedAt + 5_000 - Date.now()));
    running = false;
    await load;

    const during = answers.filter((a) => a.at > stoppedAt + 500 && a.at < restartedAt);
    assert.ok(during.length > 20, `calls answered during the outage: ${during.length}`);
    const unexpected = answers.filter((a) => a.status >= 500 && a.status !== 503);
    assert.deepEqual(unexpected, [], 'no 500 at any time');
    for (const a of during.filter((x) => x.status !== 201 && x.status !== 429)) {
      assert.equal(a.status, 503, JSON.stringify(a));
      assert.equal(a.code, 'store_unavailable');
      assert.ok(Number(a.retryAfter) >= 1, `Retry-After on ${JSON.stringify(a)}`);
    }
    assert.ok(
      during.filter((a) => a.status === 503).length >= during.length * 0.9,
      'the outage answers as an outage',
    );
    const afterwards = answers.filter((a) => a.at > restartedAt + 3_000 && a.kind === 'ingest');
    assert.ok(
      afterwards.length > 0 && afterwards.every((a) => a.status === 201),
      `ingest recovers: ${afterwards.length} calls from 3 s after the restart, other than 201: ${JSON.stringify(
        afterwards.filter((a) => a.status !== 201).slice(0, 3),
      )}`,
    );
    assert.ok(listenBackMs >= 0 && listenBackMs <= 5_000, `LISTEN back after ${listenBackMs} ms`);
    assert.match(serve.output(), /LISTEN connection is back/);

    // Runs triggered after the outage are found through LISTEN again and finish.
    const started = await fetch(`${serve.url}${laterUrl}`);
    assert.equal(started.status, 201);
    const runId = (await started.json()).data.runs[0].test_run_id;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const client = new pg.Client({ connectionString: pgc.url });
      await client.connect();
      const { rows } = await client.query('select result from test_runs where id = $1', [runId]);
      await client.end();
      if (rows[0]?.result === 'pass') break;
      assert.ok(Date.now() < deadline, `the run after the outage ends (now ${rows[0]?.result})`);
      await sleep(200);
    }

    // The outage is logged compactly: no line carries a client object.
    const lines = serve
      .output()
      .split('\n')
      .filter((line) => line.includes('"level":50'));
    assert.ok(lines.length > 0);
    const longest = Math.max(...lines.map((line) => line.length));
    assert.ok(longest < 3_000, `longest error line: ${longest} bytes`);
  });
});
