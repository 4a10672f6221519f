import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { buildApp, LOG_SERIALIZERS } from '../../src/api/app.js';
import { SessionService } from '../../src/auth/sessions.js';
import { loadConfig } from '../../src/config/config.js';
import { createServer, createServices, type Server, storagePort } from '../../src/main.js';
import { Store } from '../../src/store/store.js';
import { describeApi, PUBLIC_URL, TRAFFIC_URL } from '../helpers/api.js';
import { freePort } from '../helpers/cli.js';

const MB = 1024 * 1024;

describe('a store that cannot be reached', () => {
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;
  let store: Store;

  before(async () => {
    // Nothing listens on this port: every query fails to connect, as with PostgreSQL stopped.
    const port = await freePort();
    store = Store.open({ databaseUrl: `postgres://root@127.0.0.1:${port}/vigil`, dataDir: os.tmpdir() });
    app = await buildApp(
      {
        services: createServices(store),
        storage: storagePort(store),
        publicUrl: PUBLIC_URL,
        trafficUrl: TRAFFIC_URL,
        apiCompat: 'spec',
        responseBodyLimit: MB,
        runTimeoutSeconds: 60,
        sessions: new SessionService({ store, secureCookies: false }),
        signup: 'open',
      },
      {
        bodyLimit: MB,
        logger: {
          level: 'error',
          serializers: LOG_SERIALIZERS,
          stream: new Writable({
            write(chunk: Buffer, _encoding, done) {
              lines.push(chunk.toString());
              done();
            },
          }),
        },
      },
    );
  });
  after(async () => {
    await app.close();
    await store.close();
  });

  test('every route answers 503 store_unavailable with Retry-After, and logs the driver error compactly', async () => {
    const auth = { authorization: `Bearer ${'t'.repeat(43)}` };
    const requests = [
      { method: 'GET' as const, url: '/buckets', headers: auth },
      { method: 'POST' as const, url: '/buckets/abc/messages', headers: auth, payload: { request: {} } },
      {
        method: 'DELETE' as const,
        url: '/buckets/abc/messages/0191a2b3-c4d5-4e6f-8a9b-0c1d2e3f4a5b',
        headers: auth,
      },
      { method: 'GET' as const, url: '/radar/some-trigger/trigger' },
      { method: 'POST' as const, url: '/radar/some-trigger/batch', payload: [] },
    ];
    for (const request of requests) {
      const response = await app.inject(request);
      assert.equal(response.statusCode, 503, `${request.method} ${request.url}: ${response.body}`);
      assert.equal(response.headers['retry-after'], '5');
      const body = response.json();
      assert.equal(body.error.code, 'store_unavailable');
      assert.equal(body.error.status, 503);
      assert.match(body.error.more_info, /#store_unavailable$/);
    }
    const health = await app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.statusCode, 503);
    assert.ok(lines.length >= requests.length);
    for (const line of lines) {
      const entry = JSON.parse(line) as { err: { code?: string; message: string; stack?: string } };
      // The driver's own error, not a stand-in; no client object, no stack for a known outage.
      assert.ok(
        JSON.stringify(entry.err).includes('ECONNREFUSED'),
        `the log names the cause: ${line.slice(0, 300)}`,
      );
      assert.equal(entry.err.stack, undefined);
      assert.ok(line.length < 2_000, `a compact line (${line.length} bytes)`);
    }
  });
});

describe('a store with less room than MIN_FREE_DISK [sqlite]', () => {
  let dataDir: string;
  let seeding: Store;
  let server: Server;
  let token: string;
  let bucket: string;
  let kept: string;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-room-'));
    seeding = Store.open({ dataDir });
    await seeding.migrate();
    const account = await createServices(seeding).accounts.bootstrap({
      email: 'full@example.com',
      name: 'Full',
      password: 'correct horse battery',
    });
    token = account.access_token;
    bucket = account.bucket_key;
    const ingest = await createServices(seeding).messages.ingest(
      { accountId: account.account_id, tokenId: '', name: '', email: '', scopes: new Set() },
      bucket,
      [
        { request: { method: 'GET', url: 'https://a.test/1' } },
        { request: { method: 'GET', url: 'https://a.test/2' } },
      ],
    );
    kept = ingest.results[0]!.uuid!;
    // The same file, opened with a mark no disk reaches: every write that adds data is refused.
    const full = Store.open({ dataDir, minFreeDisk: 2 ** 60 });
    const config = {
      ...loadConfig({ PUBLIC_URL, LOG_LEVEL: 'silent', DATA_DIR: dataDir }),
    };
    server = await createServer(config, { store: full, scheduler: false, worker: false });
  });
  after(async () => {
    await server.close();
    await seeding.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    server.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(payload !== undefined && { 'content-type': 'application/json' }),
      },
      ...(payload !== undefined && { payload: JSON.stringify(payload) }),
    });

  test('writes answer 507 storage_full; reads and deletes work; /health says degraded with the reason', async () => {
    const ingest = await call('POST', `/buckets/${bucket}/messages`, {
      request: { method: 'GET', url: 'https://a.test/3' },
    });
    assert.equal(ingest.statusCode, 507, ingest.body);
    assert.equal(ingest.json().error.code, 'storage_full');
    assert.match(ingest.json().error.message, /MIN_FREE_DISK/);
    const createTest = await call('POST', `/buckets/${bucket}/tests`, { name: 'New' });
    assert.equal(createTest.statusCode, 507);
    // The traffic origin records every request it answers, so it refuses all of them before forwarding.
    for (const [method, url] of [
      ['POST', `/capture/${bucket}/full`],
      ['GET', `/gateway/${bucket}/https/example.com/`],
    ] as const) {
      const refused = await server.traffic.inject({ method, url });
      assert.equal(refused.statusCode, 507, `${method} ${url}: ${refused.body}`);
      assert.equal(refused.json().error.code, 'storage_full');
    }

    const list = await call('GET', `/buckets/${bucket}/messages`);
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data.length, 2);
    const removed = await call('DELETE', `/buckets/${bucket}/messages/${kept}`);
    assert.equal(removed.statusCode, 204, removed.body);
    assert.equal((await call('GET', `/buckets/${bucket}/messages`)).json().data.length, 1);

    const health = await server.app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.statusCode, 200);
    assert.equal(health.json().status, 'degraded');
    assert.match(health.json().reason, /MIN_FREE_DISK/);
  });
});

await describeApi('Idempotency-Key', (get) => {
  const messages = () => `/buckets/${get().alice.bucketKey}/messages`;

  test('a retried message batch is stored once and answered as the first time', async () => {
    const { call } = get();
    const body = [{ request: { method: 'GET', url: `https://idem.test/${Date.now()}` } }];
    const first = await call({
      method: 'POST',
      url: messages(),
      body,
      headers: { 'idempotency-key': 'batch-1' },
    });
    assert.equal(first.statusCode, 201);
    const again = await call({
      method: 'POST',
      url: messages(),
      body,
      headers: { 'idempotency-key': 'batch-1' },
    });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    const url = body[0]!.request.url;
    const stored = (await call({ method: 'GET', url: `${messages()}?count=1000` }))
      .json()
      .data.filter((m: { request: { url: string } | null }) => m.request?.url === url);
    assert.equal(stored.length, 1, 'one message, not two');

    // Another body under the same key is refused; the same body without a key is stored again.
    const other = await call({
      method: 'POST',
      url: messages(),
      body: [{ request: { method: 'GET', url: 'https://idem.test/other' } }],
      headers: { 'idempotency-key': 'batch-1' },
    });
    assert.equal(other.statusCode, 409);
    assert.match(other.json().error.message, /Idempotency-Key/);
    const bad = await call({
      method: 'POST',
      url: messages(),
      body,
      headers: { 'idempotency-key': 'has space' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.field, 'Idempotency-Key');
  });

  test('a retried trigger starts one run', async () => {
    const { data, call } = get();
    const t = await data('POST', `/buckets/${get().alice.bucketKey}/tests`, { name: 'Idempotent trigger' });
    const triggerPath = new URL(t.trigger_url as string).pathname;
    const first = await call({
      method: 'GET',
      url: triggerPath,
      as: null,
      headers: { 'idempotency-key': 'k1' },
    });
    assert.equal(first.statusCode, 201, first.body);
    const again = await call({
      method: 'GET',
      url: triggerPath,
      as: null,
      headers: { 'idempotency-key': 'k1' },
    });
    assert.equal(again.json().data.runs[0].test_run_id, first.json().data.runs[0].test_run_id);
    const runs = await data('GET', `/buckets/${get().alice.bucketKey}/tests/${t.id}/results`);
    assert.equal(runs.length, 1);
  });
});

await describeApi('clean stops hand runs over', (get) => {
  before(async () => {
    // The runs are driven by hand below, by workers that never announce themselves: the server's
    // reaper would hand their runs over at its next pass.
    await get().server.stopWorker();
    await get().server.reaper.stop();
  });

  test('a stopped worker hands its run over without using up the crash hand-over; both attempts are recorded', async () => {
    const { data, server } = get();
    const tests = `/buckets/${get().alice.bucketKey}/tests`;
    const t = await data('POST', tests, {
      name: 'Long run',
      steps: [
        { step_type: 'pause', duration: 1 },
        { step_type: 'pause', duration: 30 },
      ],
    });
    const [run] = (await data('POST', `${tests}/${t.id}/runs`, {})).runs;
    const runs = server.services.executor;
    const row = () =>
      server.store.db
        .selectFrom('test_runs')
        .selectAll()
        .where('id', '=', run.test_run_id)
        .executeTakeFirstOrThrow();

    // Worker A is stopped while the run pauses: the run goes back to the queue, its attempt kept.
    const stopping = new AbortController();
    const first = runs.execute(run.test_run_id, stopping.signal, 'worker-a');
    // Stopped once the first step has finished (its progress is written while the second pauses).
    while (!(await row()).summary?.includes('paused 1 s'))
      await new Promise((resolve) => setTimeout(resolve, 20));
    stopping.abort();
    await first;
    let current = await row();
    assert.equal(current.result, 'queued', JSON.stringify(current));
    assert.equal(current.handovers, 1);
    assert.equal(current.executions, 1);

    // Worker B starts it afresh and dies: the crash hand-over is still there to use.
    assert.ok(await runs.claimRun(run.test_run_id, 'worker-b'));
    assert.equal(await runs.handOver(run.test_run_id, 'worker-b', 'worker-b stopped responding'), 'requeued');

    // Worker C completes it: one run id, every attempt counted, the interrupted one recorded.
    // (The second pause is shortened first so that the test does not wait for it.)
    await server.store.db
      .updateTable('steps')
      .set({ body: JSON.stringify({ duration: 1 }) })
      .where('test_id', '=', t.id)
      .where('position', '=', 1)
      .execute();
    await runs.execute(run.test_run_id, new AbortController().signal, 'worker-c');
    current = await row();
    assert.equal(current.result, 'pass', current.error ?? '');
    assert.equal(current.attempts, 2);
    const result = await data('GET', `${tests}/${t.id}/results/${run.test_run_id}`);
    assert.equal(result.attempts, 2);
    assert.equal(result.previous_attempt.result, 'interrupted');
    assert.match(result.previous_attempt.error, /worker-a stopped/);
    // The step finished before the stop, and the one cut short, with why.
    assert.equal(result.previous_attempt.requests.length, 2);
    assert.equal(result.previous_attempt.requests[0].error, null);
    assert.match(result.previous_attempt.requests[1].error, /stopped during the pause/);
    assert.equal(result.requests.length, 2);
  });
});
