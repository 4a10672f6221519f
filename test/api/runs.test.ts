import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

/** A local upstream that records what it receives and answers per path. */
interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const received: Received[] = [];
/** Answers of `/held` requests, sent when the test calls them. */
const held: (() => void)[] = [];
let upstream: http.Server;
let base = '';

before(async () => {
  upstream = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://upstream');
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: request.method ?? '',
        path: url.pathname + url.search,
        headers: request.headers,
        body,
      });
      const json = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        response.end(JSON.stringify(value));
      };
      if (url.pathname === '/login')
        return json(200, { token: `tok-${url.searchParams.get('tag') ?? 'x'}`, user: { id: 42 } });
      if (url.pathname.startsWith('/items/')) {
        const token = request.headers.authorization?.replace('Bearer ', '');
        return json(token ? 200 : 401, { id: url.pathname.slice('/items/'.length), items: [{ id: 7 }] });
      }
      if (url.pathname === '/fail') return json(500, { error: 'boom' });
      if (url.pathname === '/held') {
        held.push(() => json(200, { held: true }));
        return;
      }
      if (url.pathname === '/slow') {
        setTimeout(() => json(200, {}), 3_000).unref();
        return;
      }
      return json(200, { path: url.pathname });
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

after(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

function tagged(tag: string): Received[] {
  return received.filter((r) => r.path.includes(tag) || r.body.includes(tag) || r.headers['x-tag'] === tag);
}

const request = (url: string, extra: Record<string, unknown> = {}) => ({
  step_type: 'request',
  method: 'GET',
  url,
  assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
  ...extra,
});

await describeApi('runs and triggers', (get) => {
  const bucket = () => get().alice.bucketKey;
  const tests = () => `/buckets/${bucket()}/tests`;
  const pathOf = (url: string) => url.slice(PUBLIC_URL.length);

  async function newTest(name: string, steps: unknown[], environment: Record<string, unknown> = {}) {
    const { data } = get();
    const created = await data('POST', tests(), { name });
    await data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
      initial_variables: { base },
      ...environment,
    });
    return data('PUT', `${tests()}/${created.id}`, { steps });
  }

  async function waitFinished(testId: string, runId: string, timeoutMs = 15_000) {
    const { data } = get();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await data('GET', `${tests()}/${testId}/results/${runId}`);
      if (!['queued', 'working'].includes(run.result)) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.result}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function trigger(url: string, method: 'GET' | 'POST' = 'GET', body?: unknown) {
    return get().call({ method, url: pathOf(url), as: null, ...(body !== undefined && { body }) });
  }

  test('a trigger runs the test: templates, variable chain, condition branch skipped, results stored', async () => {
    const tag = `chain${Date.now()}`;
    const t = await newTest('Chain', [
      request('{{base}}/login?tag={{tag}}', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Tag': '{{tag}}' },
        body: '{"user":"{{user}}"}',
        variables: [
          { name: 'token', source: 'response_json', property: 'token' },
          { name: 'user_id', source: 'response_json', property: 'user.id' },
        ],
      }),
      {
        step_type: 'condition',
        left_value: '{{flag}}',
        comparison: 'equal',
        right_value: 'yes',
        steps: [request('{{base}}/flagged/{{tag}}')],
      },
      request('{{base}}/items/{{user_id}}?tag={{tag}}', {
        headers: { Authorization: 'Bearer {{token}}' },
        assertions: [
          { source: 'response_status', comparison: 'equal_number', value: 200 },
          { source: 'response_json', property: 'items[0].id', comparison: 'equal_number', value: 7 },
          { source: 'response_headers', property: 'X-UPSTREAM', comparison: 'equal', value: 'yes' },
          { source: 'response_time', comparison: 'is_less_than', value: 5000 },
        ],
      }),
    ]);
    const response = await trigger(`${t.trigger_url}?tag=${tag}&user=alice&flag=no`);
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.equal(body.error, null);
    assert.equal(body.data.runs_started, 1);
    assert.equal(body.data.runs_total, 1);
    assert.equal(body.data.runs_failed, 0);
    const started = body.data.runs[0];
    assert.equal(started.status, 'init');
    assert.equal(started.test_id, t.id);
    assert.equal(started.test_name, 'Chain');
    assert.equal(started.bucket_key, bucket());
    assert.equal(started.environment_id, t.default_environment_id);
    assert.equal(started.region, 'local');
    assert.deepEqual(started.variables, { tag, user: 'alice', flag: 'no' });
    assert.equal(started.test_run_url, `${PUBLIC_URL}${tests()}/${t.id}/results/${started.test_run_id}`);

    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.result, 'pass', JSON.stringify(run, null, 2));
    assert.equal(run.source, 'trigger_url');
    assert.equal(run.requests_executed, 2);
    assert.equal(run.assertions_defined, 5);
    assert.equal(run.assertions_passed, 5);
    assert.equal(run.variables_passed, 2);
    assert.deepEqual(
      run.requests.map((r: { step_type: string; result: string }) => `${r.step_type}:${r.result}`),
      ['request:pass', 'condition:pass', 'request:skipped', 'request:pass'],
    );
    assert.equal(run.variables.token, `tok-${tag}`);
    assert.equal(run.initial_variables.user, 'alice');

    const got = tagged(tag);
    assert.deepEqual(
      got.map((r) => `${r.method} ${r.path.split('?')[0]}`),
      ['POST /login', 'GET /items/42'],
    );
    assert.equal(got[0]!.body, '{"user":"alice"}');
    assert.equal(got[0]!.headers['content-type'], 'application/json');
    assert.equal(got[1]!.headers.authorization, `Bearer tok-${tag}`);
    assert.ok(!received.some((r) => r.path === `/flagged/${tag}`), 'the condition branch did not run');

    const last = run.requests[3];
    assert.equal(last.url, `${base}/items/42?tag=${tag}`);
    assert.equal(last.response_status_code, 200);
    assert.ok(last.timings && typeof last.timings.wait_for_response_ms === 'number');
    assert.equal(last.request, undefined, 'the run detail leaves out full exchanges');

    const step = await get().data('GET', `${tests()}/${t.id}/results/${run.test_run_id}/steps/${last.uuid}`);
    assert.equal(step.request.method, 'GET');
    assert.deepEqual(step.request.headers.Authorization, [`Bearer tok-${tag}`]);
    assert.equal(step.response.status, 200);
    assert.equal(JSON.parse(step.response.body).items[0].id, 7);

    const detail = await get().data('GET', `${tests()}/${t.id}`);
    assert.equal(detail.last_run.test_run_id, run.test_run_id);
    assert.equal(detail.last_run.result, 'pass');
    assert.equal(detail.last_run.source, 'trigger_url');

    const latest = await get().data('GET', `${tests()}/${t.id}/results/latest`);
    assert.equal(latest.test_run_id, run.test_run_id);
  });

  test('the condition branch runs when true; POST form parameters become variables', async () => {
    const tag = `cond${Date.now()}`;
    const t = await newTest('Condition', [
      {
        step_type: 'condition',
        left_value: '{{flag}}',
        comparison: 'equal',
        right_value: 'yes',
        steps: [request('{{base}}/flagged/{{tag}}')],
      },
    ]);
    const response = await get().app.inject({
      method: 'POST',
      url: pathOf(t.trigger_url),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `flag=yes&tag=${tag}`,
    });
    assert.equal(response.statusCode, 201, response.body);
    const run = await waitFinished(t.id, response.json().data.runs[0].test_run_id);
    assert.equal(run.result, 'pass');
    assert.deepEqual(
      tagged(tag).map((r) => r.path),
      [`/flagged/${tag}`],
    );
  });

  test('failing assertions fail the run with expected and actual values', async () => {
    const t = await newTest('Failing', [
      request('{{base}}/fail', {
        assertions: [
          { source: 'response_status', comparison: 'equal_number', value: 200 },
          { source: 'response_json', property: 'error', comparison: 'equal', value: 'boom' },
        ],
      }),
    ]);
    const started = (await trigger(t.trigger_url)).json().data.runs[0];
    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.result, 'fail');
    assert.equal(run.assertions_failed, 1);
    assert.equal(run.assertions_passed, 1);
    const [status] = run.requests[0].assertions;
    assert.equal(status.result, 'fail');
    assert.equal(status.actual_value, 500);
    assert.equal(status.target_value, 200);
  });

  test('an undefined variable fails the step with a message naming it', async () => {
    const t = await newTest('Undefined', [request('{{base}}/x/{{nowhere}}')]);
    const started = (await trigger(t.trigger_url)).json().data.runs[0];
    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.result, 'fail');
    assert.match(run.requests[0].error, /nowhere/);
  });

  test('retry_on_failure runs a failed test again and records both attempts; stop_on_failure stops', async () => {
    const tag = `retry${Date.now()}`;
    const t = await newTest(
      'Retry',
      [request(`{{base}}/fail?tag=${tag}`), request(`{{base}}/after?tag=${tag}`)],
      {
        retry_on_failure: true,
        stop_on_failure: true,
      },
    );
    const started = (await trigger(t.trigger_url)).json().data.runs[0];
    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.result, 'fail');
    assert.equal(run.attempts, 2);
    assert.equal(run.previous_attempt.result, 'fail');
    assert.deepEqual(
      tagged(tag).map((r) => r.path.split('?')[0]),
      ['/fail', '/fail'],
    );
    assert.equal(run.requests.length, 1, 'stop_on_failure: the second step did not run');
  });

  test('manual runs need test:write; environment and variables can be chosen', async () => {
    const { call, tokenWith } = get();
    const tag = `manual${Date.now()}`;
    const t = await newTest('Manual', [request(`{{base}}/manual/{{who}}?tag=${tag}`)]);
    const reader = await tokenWith(['api:read']);
    const denied = await call({ method: 'POST', url: `${tests()}/${t.id}/runs`, body: {}, as: reader });
    assert.equal(denied.statusCode, 403);
    const response = await call({
      method: 'POST',
      url: `${tests()}/${t.id}/runs`,
      body: { variables: { who: 'bob' } },
    });
    assert.equal(response.statusCode, 201, response.body);
    const started = response.json().data.runs[0];
    const run = await waitFinished(t.id, started.test_run_id);
    assert.equal(run.source, 'manual');
    assert.equal(run.result, 'pass');
    assert.deepEqual(
      tagged(tag).map((r) => r.path.split('?')[0]),
      ['/manual/bob'],
    );
    const empty = await call({ method: 'POST', url: `${tests()}/${t.id}/runs` });
    assert.equal(empty.statusCode, 201, empty.body);
  });

  test('regions start one run each; vigil_region and vigil_environment steer the run', async () => {
    const { data } = get();
    const t = await newTest('Regions', [request('{{base}}/regions')], { regions: ['us-east', 'eu-west'] });
    const response = await trigger(t.trigger_url);
    const runs = response.json().data.runs;
    assert.deepEqual(runs.map((r: { region: string }) => r.region).sort(), ['eu-west', 'us-east']);
    const other = await data('POST', `${tests()}/${t.id}/environments`, {
      name: 'Other',
      initial_variables: { base },
    });
    const steered = (
      await trigger(`${t.trigger_url}?vigil_region=ap-south&vigil_environment=${other.id}`)
    ).json().data.runs;
    assert.equal(steered.length, 1);
    assert.equal(steered[0].region, 'ap-south');
    assert.equal(steered[0].environment_id, other.id);
    assert.equal(steered[0].environment_name, 'Other');
    assert.deepEqual(steered[0].variables, {});
    for (const run of [...runs, ...steered]) await waitFinished(t.id, run.test_run_id);
  });

  test('bad trigger input: unknown id 404, foreign environment 400, bad names 400', async () => {
    const { expectError, data } = get();
    const t = await newTest('Bad input', [request('{{base}}/x')]);
    await expectError({ method: 'GET', url: '/radar/doesnotexist/trigger', as: null }, 404, 'not_found');
    await expectError(
      { method: 'GET', url: '/radar/bucket/doesnotexist/trigger', as: null },
      404,
      'not_found',
    );
    const otherTest = await data('POST', tests(), { name: 'Other' });
    await expectError(
      {
        method: 'GET',
        url: `${pathOf(t.trigger_url)}?vigil_environment=${otherTest.default_environment_id}`,
        as: null,
      },
      400,
      'validation_failed',
      'vigil_environment',
    );
    await expectError(
      { method: 'GET', url: `${pathOf(t.trigger_url)}?vigil_environment=nope`, as: null },
      400,
      'validation_failed',
      'vigil_environment',
    );
    await expectError(
      { method: 'POST', url: pathOf(t.trigger_url), body: { 'bad name': 'x' }, as: null },
      400,
      'validation_failed',
      'body.bad name',
    );
  });

  test('batch trigger: one run per variable set, at most 50', async () => {
    const { expectError } = get();
    const tag = `batch${Date.now()}`;
    const t = await newTest('Batch', [request(`{{base}}/batch/{{n}}?tag=${tag}`)]);
    const batchUrl = pathOf(t.trigger_url).replace(/\/trigger$/, '/batch');
    const response = await get().call({
      method: 'POST',
      url: batchUrl,
      as: null,
      body: [{ n: 1 }, { n: '2' }],
    });
    assert.equal(response.statusCode, 201, response.body);
    const runs = response.json().data.runs;
    assert.equal(runs.length, 2);
    for (const run of runs) await waitFinished(t.id, run.test_run_id);
    assert.deepEqual(
      tagged(tag)
        .map((r) => r.path.split('?')[0])
        .sort(),
      ['/batch/1', '/batch/2'],
    );
    const big = Array.from({ length: 51 }, (_, n) => ({ n }));
    await expectError({ method: 'POST', url: batchUrl, as: null, body: big }, 422, 'limit_reached');
    await expectError(
      { method: 'POST', url: batchUrl, as: null, body: { n: 1 } },
      400,
      'validation_failed',
      'body',
    );
  });

  test('batch trigger: each variable set is held to the limits of a trigger call', async () => {
    const { expectError } = get();
    const t = await newTest('Batch limits', [request('{{base}}/batch-limits')]);
    const triggerUrl = pathOf(t.trigger_url);
    const batchUrl = triggerUrl.replace(/\/trigger$/, '/batch');
    const long = 'x'.repeat(100_001);
    const many = Object.fromEntries(Array.from({ length: 501 }, (_, n) => [`v${n}`, n]));
    // The single trigger refuses these…
    await expectError(
      {
        method: 'POST',
        url: triggerUrl,
        as: null,
        body: 'nul=a%00b',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      400,
      'validation_failed',
      'body.nul',
    );
    await expectError(
      { method: 'POST', url: triggerUrl, as: null, body: { big: long } },
      400,
      'validation_failed',
      'body.big',
    );
    await expectError(
      { method: 'POST', url: triggerUrl, as: null, body: many },
      400,
      'validation_failed',
      'query',
    );
    // …and so does the batch, naming the variable set and the variable (a NUL is refused as in
    // any JSON body).
    const big = await expectError(
      { method: 'POST', url: batchUrl, as: null, body: [{ n: 1 }, { big: long }] },
      400,
      'validation_failed',
      '/1/big',
    );
    assert.match(big.message, /longer than 100000 characters/);
    const nul = await expectError(
      { method: 'POST', url: batchUrl, as: null, body: [{ nul: 'a\u0000b' }] },
      400,
      'validation_failed',
      '/0/nul',
    );
    assert.match(nul.message, /NUL/);
    const crowded = await expectError(
      { method: 'POST', url: batchUrl, as: null, body: [{ n: 1 }, { n: 2 }, many] },
      400,
      'validation_failed',
      '/2',
    );
    assert.match(crowded.message, /more than 500 parameters/);
    // At the limits, a set is taken.
    const edge = Object.fromEntries(Array.from({ length: 500 }, (_, n) => [`v${n}`, n]));
    const response = await get().call({
      method: 'POST',
      url: batchUrl,
      as: null,
      body: [{ ...edge, v0: 'x'.repeat(100_000) }],
    });
    assert.equal(response.statusCode, 201, response.body);
    for (const run of response.json().data.runs) await waitFinished(t.id, run.test_run_id);
  });

  test('the bucket trigger runs every test of the bucket', async () => {
    const { data, call } = get();
    const key = (await data('POST', '/buckets', { name: `Trigger bucket ${Date.now()}` })).key;
    const made = [];
    for (const name of ['One', 'Two']) {
      const created = await data('POST', `/buckets/${key}/tests`, { name });
      await data(
        'PUT',
        `/buckets/${key}/tests/${created.id}/environments/${created.default_environment_id}`,
        {
          initial_variables: { base },
        },
      );
      made.push(
        await data('PUT', `/buckets/${key}/tests/${created.id}`, { steps: [request('{{base}}/bucket')] }),
      );
    }
    const bucketInfo = await data('GET', `/buckets/${key}`);
    const response = await call({ method: 'POST', url: pathOf(bucketInfo.trigger_url), as: null });
    assert.equal(response.statusCode, 201, response.body);
    const runs = response.json().data.runs;
    assert.deepEqual(runs.map((r: { test_name: string }) => r.test_name).sort(), ['One', 'Two']);
  });

  test('ten triggers per ten seconds per URL, then 429 with Retry-After', async () => {
    const t = await newTest('Rate', [request('{{base}}/rate')]);
    for (let i = 0; i < 10; i++) assert.equal((await trigger(t.trigger_url)).statusCode, 201);
    const limited = await trigger(t.trigger_url);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}`);
  });

  test('a working run shows the steps it has finished so far', async () => {
    const { data } = get();
    const t = await newTest('Progress', [request('{{base}}/progress-first'), request('{{base}}/held')]);
    const started = (await trigger(t.trigger_url)).json().data.runs[0];
    const url = `${tests()}/${t.id}/results/${started.test_run_id}`;
    const deadline = Date.now() + 10_000;
    let run = await data('GET', url);
    while (!(run.result === 'working' && run.requests.length === 1) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      run = await data('GET', url);
    }
    assert.equal(run.result, 'working');
    assert.equal(run.requests.length, 1, 'the first step shows while the second one waits');
    assert.equal(run.requests[0].result, 'pass');
    assert.match(run.requests[0].url, /\/progress-first$/);
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    held.shift()!();
    const final = await waitFinished(t.id, started.test_run_id);
    assert.equal(final.result, 'pass');
    assert.equal(final.requests.length, 2);
  });

  test('a queued or working run can be canceled; a finished one answers 409', async () => {
    const { data, call } = get();
    const t = await newTest('Cancel', [{ step_type: 'pause', duration: 30 }, request('{{base}}/never')]);
    const started = (await trigger(t.trigger_url)).json().data.runs[0];
    const url = `${tests()}/${t.id}/results/${started.test_run_id}`;
    const deadline = Date.now() + 10_000;
    while ((await data('GET', url)).result !== 'working' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const canceled = await data('DELETE', url);
    assert.equal(canceled.result, 'canceled');
    const final = await waitFinished(t.id, started.test_run_id);
    assert.equal(final.result, 'canceled');
    const again = await call({ method: 'DELETE', url });
    assert.equal(again.statusCode, 409);
  });

  test('subtests run another test with params; cycles are an error, not a hang', async () => {
    const { data } = get();
    const tag = `sub${Date.now()}`;
    const child = await newTest('Child', [
      request(`{{base}}/child/{{who}}?tag=${tag}`, {
        variables: [{ name: 'child_path', source: 'response_json', property: 'path' }],
      }),
    ]);
    const parent = await newTest('Parent', [
      {
        step_type: 'subtest',
        test_uuid: child.id,
        params: [{ name: 'who', value: '{{name}}' }],
        assertions: [
          { source: 'response_status', comparison: 'equal_number', value: 200 },
          { source: 'response_json', property: 'child_path', comparison: 'equal', value: '/child/carol' },
        ],
        variables: [{ name: 'from_child', source: 'response_json', property: 'child_path' }],
      },
    ]);
    const started = (await trigger(`${parent.trigger_url}?name=carol`)).json().data.runs[0];
    const run = await waitFinished(parent.id, started.test_run_id);
    assert.equal(run.result, 'pass', JSON.stringify(run.requests, null, 2));
    assert.equal(run.variables.from_child, '/child/carol');
    const childRunId = run.requests[0].subtest_run_id;
    const childRun = await data('GET', `${tests()}/${child.id}/results/${childRunId}`);
    assert.equal(childRun.source, 'subtest');
    assert.equal(childRun.parent_run_id, run.test_run_id);

    // A cycle: child now calls the parent.
    await data('PUT', `${tests()}/${child.id}`, {
      steps: [{ step_type: 'subtest', test_uuid: parent.id }],
    });
    const cyclic = (await trigger(parent.trigger_url)).json().data.runs[0];
    const failed = await waitFinished(parent.id, cyclic.test_run_id);
    assert.equal(failed.result, 'fail');
  });

  test('results list pages newest first with count, since and before; metrics summarise runs', async () => {
    const { data, expectError } = get();
    const t = await newTest('History', [request('{{base}}/history')]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const started = (await trigger(t.trigger_url)).json().data.runs[0];
      await waitFinished(t.id, started.test_run_id);
      ids.push(started.test_run_id);
    }
    const all = await data('GET', `${tests()}/${t.id}/results`);
    assert.deepEqual(
      all.map((r: { test_run_id: string }) => r.test_run_id),
      [...ids].reverse(),
    );
    const two = await data('GET', `${tests()}/${t.id}/results?count=2`);
    assert.equal(two.length, 2);
    const older = await data('GET', `${tests()}/${t.id}/results?before=${all[0].queued_at}`);
    assert.deepEqual(
      older.map((r: { test_run_id: string }) => r.test_run_id),
      [ids[1], ids[0]],
    );
    const newer = await data('GET', `${tests()}/${t.id}/results?since=${all[2].queued_at}`);
    assert.deepEqual(
      newer.map((r: { test_run_id: string }) => r.test_run_id),
      [ids[2], ids[1]],
    );
    const capped = await data('GET', `${tests()}/${t.id}/results?count=5000`);
    assert.equal(capped.length, 3);

    const metrics = await data('GET', `${tests()}/${t.id}/metrics?timeframe=hour`);
    assert.equal(metrics.this_time_period.total_test_runs, 3);
    assert.equal(metrics.this_time_period.success_ratio, 1);
    assert.ok(metrics.this_time_period.response_time_50th_percentile > 0);
    assert.equal(metrics.response_times.length, 60);
    const none = await data('GET', `${tests()}/${t.id}/metrics?timeframe=day&region=nowhere`);
    assert.equal(none.this_time_period.total_test_runs, 0);
    await expectError(
      { method: 'GET', url: `${tests()}/${t.id}/metrics?timeframe=year` },
      400,
      'validation_failed',
      '?timeframe',
    );
    await expectError({ method: 'GET', url: `${tests()}/${t.id}/results/not-a-run` }, 404, 'not_found');
  });

  test("runs and results of another account's test stay invisible", async () => {
    const { call } = get();
    const t = await newTest('Private', [request('{{base}}/private')]);
    const started = (await trigger(t.trigger_url)).json().data.runs[0];
    await waitFinished(t.id, started.test_run_id);
    const bob = get().bob;
    for (const url of [
      `${tests()}/${t.id}/results`,
      `${tests()}/${t.id}/results/${started.test_run_id}`,
      `${tests()}/${t.id}/metrics`,
    ]) {
      assert.equal((await call({ method: 'GET', url, as: bob })).statusCode, 404, url);
    }
    assert.equal(
      (await call({ method: 'POST', url: `${tests()}/${t.id}/runs`, body: {}, as: bob })).statusCode,
      404,
    );
  });
});

test('logs mask trigger ids and trigger parameters', async () => {
  const { loggedUrl } = await import('../../src/api/app.js');
  assert.equal(loggedUrl('/radar/AbC123/trigger?api_key=secret'), '/radar/[trigger id]/trigger?[parameters]');
  assert.equal(loggedUrl('/radar/bucket/AbC123/trigger'), '/radar/bucket/[trigger id]/trigger');
  assert.equal(loggedUrl('/radar/AbC123/batch'), '/radar/[trigger id]/batch');
  assert.equal(loggedUrl('/buckets/abc/tests?count=2'), '/buckets/abc/tests?count=2');
  assert.equal(loggedUrl('/app/?code=vgl_ac_secret&state=s'), '/app/?[parameters]');
  assert.equal(loggedUrl('/app/b/abc/tests'), '/app/b/abc/tests');
  assert.equal(loggedUrl('/public/messages/TokEn123'), '/public/messages/[share token]');
});
