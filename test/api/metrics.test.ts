import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import parsePrometheusTextFormat, { type MetricFamily, type Sample } from 'parse-prometheus-text-format';
import { nowFloat } from '../../src/domain/ids.js';
import { Scheduler } from '../../src/services/scheduler.js';
import { type ApiHarness, describeApi, PUBLIC_URL } from '../helpers/api.js';
import { freePort, ROOT } from '../helpers/cli.js';
import { finishedRun, settled, startReceiver } from '../helpers/receiver.js';

const receiver = await startReceiver();
after(() => receiver.close());

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Base units only: no milliseconds, kilobytes and the like. */
const NON_BASE_UNITS = /_(milliseconds|ms|microseconds|minutes|hours|kilobytes|megabytes|kb|mb)(_|$)/;

function families(text: string): Map<string, MetricFamily> {
  return new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]));
}

/**
 * Every series by its own name (`…_count`, `…_bucket` of histograms apart): the parser folds a
 * histogram's label sets into one, so their series are read again as untyped families.
 */
function series(text: string): Map<string, MetricFamily> {
  const untyped = text
    .split('\n')
    .filter((line) => !line.startsWith('# TYPE '))
    .join('\n');
  // Series of one histogram alternate (buckets, sum, count per label set): the runs of one name join.
  const all = new Map<string, MetricFamily>();
  for (const family of parsePrometheusTextFormat(untyped)) {
    const seen = all.get(family.name);
    if (seen) seen.metrics.push(...family.metrics);
    else all.set(family.name, family);
  }
  return all;
}

function family(all: Map<string, MetricFamily>, name: string, type: MetricFamily['type']): MetricFamily {
  const found = all.get(name);
  assert.ok(found, `${name} is exposed`);
  assert.equal(found.type, type, `${name} is a ${type.toLowerCase()}`);
  return found;
}

/** The sample whose labels include these. */
function sample(of: MetricFamily, labels: Record<string, string>): Sample | undefined {
  return of.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

async function scrape(h: ApiHarness, headers: Record<string, string> = {}) {
  const response = await h.call({ method: 'GET', url: '/metrics', as: null, headers });
  return response;
}

/** Calls a trigger URL; answers the id of the run it started. */
async function trigger(h: ApiHarness, triggerUrl: string): Promise<string> {
  const triggered = await h.call({ method: 'POST', url: triggerUrl.slice(PUBLIC_URL.length), as: null });
  assert.equal(triggered.statusCode, 201, triggered.body);
  return triggered.json().data.runs[0].test_run_id as string;
}

await describeApi('metrics on the API origin', (get) => {
  test('a scrape after API calls, a run, deliveries and messages has every family, named by the conventions', async () => {
    const h = get();
    const key = h.alice.bucketKey;
    const created = await h.data('POST', `/buckets/${key}/tests`, { name: 'metrics' });
    await h.data(
      'PUT',
      `/buckets/${key}/tests/${created.id}/environments/${created.default_environment_id}`,
      {
        initial_variables: { base: receiver.base },
        webhooks: [`${receiver.base}/hook`],
      },
    );
    const full = await h.data('PUT', `/buckets/${key}/tests/${created.id}`, {
      steps: [
        {
          step_type: 'request',
          method: 'GET',
          url: '{{base}}/ok',
          assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
        },
      ],
    });
    await h.data('GET', `/buckets/${key}/tests/${created.id}`);
    const runId = await trigger(h, full.trigger_url);
    assert.equal((await finishedRun(h, created.id, runId)).result, 'pass');
    await settled(h, created.id, runId, 1);
    await h.data('POST', `/buckets/${key}/messages`, {
      request: { method: 'GET', url: 'https://example.com/a', headers: {} },
    });
    const captured = await h.call({
      method: 'POST',
      url: `/capture/${key}/hook`,
      body: { a: 1 },
      on: 'traffic',
    });
    assert.equal(captured.statusCode, 200, captured.body);
    // A schedule fired by hand: the lag of its run is observed.
    await h.data('POST', `/buckets/${key}/tests/${created.id}/schedules`, {
      environment_id: created.default_environment_id,
      interval: '1m',
    });
    const scheduler = new Scheduler({
      store: h.store,
      launcher: h.server.services.launcher,
      metrics: h.server.runtime.metrics!,
    });
    await scheduler.tick();
    assert.equal(await scheduler.tick(nowFloat() + 120), 1);
    // A job nobody serves waits in the queue, due 5 s ago.
    await h.server.runtime.queue.enqueue(
      h.store.db,
      'run-test',
      { runId: 'metrics-test' },
      { region: 'agent-metrics-test', runAfter: nowFloat() - 5 },
    );

    const response = await scrape(h);
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const all = families(response.body);

    for (const [name, { type }] of all) {
      assert.match(name, NAME);
      assert.ok(name.startsWith('vigil_'), `${name} has the vigil_ prefix`);
      assert.doesNotMatch(name, /[A-Z]/, `${name} is snake_case`);
      assert.doesNotMatch(name, NON_BASE_UNITS, `${name} uses base units`);
      if (type === 'COUNTER') assert.match(name, /_total$/, `counter ${name} ends in _total`);
      // prom-client's default gauges of active handles and resources end in _total by its own naming.
      else if (!/^vigil_(nodejs|process)_/.test(name))
        assert.doesNotMatch(name, /_total$/, `${type} ${name} does not end in _total`);
      if (type === 'HISTOGRAM') assert.match(name, /_(seconds|bytes)$/, `histogram ${name} has its unit`);
    }

    const requests = family(all, 'vigil_http_requests_total', 'COUNTER');
    const byRoute = sample(requests, {
      route: '/buckets/:bucket_key/tests/:test_id',
      method: 'GET',
      status_code: '200',
    });
    assert.ok(byRoute && Number(byRoute.value) >= 1, 'requests are counted by route pattern');
    assert.ok(sample(requests, { route: '/capture/:bucket_key/*', method: 'POST', status_code: '200' }));
    for (const m of requests.metrics) {
      assert.ok(!m.labels?.route?.includes(key), `no raw URL in route labels: ${m.labels?.route}`);
      assert.ok(!m.labels?.route?.includes(created.id), `no raw URL in route labels: ${m.labels?.route}`);
    }
    family(all, 'vigil_http_request_duration_seconds', 'HISTOGRAM');
    const each = series(response.body);
    const latency = sample(each.get('vigil_http_request_duration_seconds_count')!, {
      route: '/buckets/:bucket_key/tests/:test_id',
      method: 'GET',
      status_code: '200',
    });
    assert.ok(Number(latency?.value) >= 1, 'latency is observed by route pattern');
    const inf = sample(each.get('vigil_http_request_duration_seconds_bucket')!, {
      route: '/buckets/:bucket_key/tests/:test_id',
      le: '+Inf',
    });
    assert.equal(inf?.value, latency?.value);

    const runs = family(all, 'vigil_runs_finished_total', 'COUNTER');
    assert.ok(Number(sample(runs, { result: 'pass', source: 'trigger_url' })?.value) >= 1);
    family(all, 'vigil_run_duration_seconds', 'HISTOGRAM');
    const durations = each.get('vigil_run_duration_seconds_count')!;
    assert.ok(Number(sample(durations, { result: 'pass', source: 'trigger_url' })?.value) >= 1);

    const ingested = family(all, 'vigil_messages_ingested_total', 'COUNTER');
    assert.ok(Number(sample(ingested, { source: 'api' })?.value) >= 1);
    assert.ok(Number(sample(ingested, { source: 'capture' })?.value) >= 1);

    const deliveries = family(all, 'vigil_notification_deliveries_total', 'COUNTER');
    assert.ok(Number(sample(deliveries, { channel: 'webhook', outcome: 'delivered' })?.value) >= 1);

    const lag = family(all, 'vigil_scheduler_lag_seconds', 'HISTOGRAM');
    assert.ok(Number(lag.metrics[0]?.count) >= 1, 'the fired schedule is observed');
    assert.ok(Number(each.get('vigil_scheduler_lag_seconds_count')?.metrics[0]?.value) >= 1);

    const waiting = family(all, 'vigil_queue_jobs_waiting', 'GAUGE');
    assert.ok(Number(sample(waiting, { job: 'run-test' })?.value) >= 1);
    const age = family(all, 'vigil_queue_oldest_job_age_seconds', 'GAUGE');
    assert.ok(Number(sample(age, { job: 'run-test' })?.value) >= 4, 'the oldest job has waited 5 s');

    family(all, 'vigil_process_resident_memory_bytes', 'GAUGE');
    family(all, 'vigil_process_cpu_seconds_total', 'COUNTER');
    family(all, 'vigil_nodejs_eventloop_lag_seconds', 'GAUGE');
    family(all, 'vigil_nodejs_heap_size_used_bytes', 'GAUGE');
  });

  test('the docs list every metric, and the Grafana dashboard reads only metrics that exist', async () => {
    const h = get();
    const all = families((await scrape(h)).body);
    const doc = fs.readFileSync(path.join(ROOT, 'docs/observability.md'), 'utf8');
    for (const name of all.keys()) {
      if (/^vigil_(nodejs|process)_/.test(name)) continue;
      assert.ok(doc.includes(`\`${name}\``), `docs/observability.md lists ${name}`);
    }
    const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/grafana/vigil.json'), 'utf8')) as {
      title: string;
      uid: string;
      schemaVersion: number;
      panels: { type: string; gridPos: object; targets?: { expr: string; refId: string }[] }[];
    };
    assert.equal(dashboard.title, 'Vigil');
    assert.ok(dashboard.uid && dashboard.schemaVersion > 30);
    const graphs = dashboard.panels.filter((panel) => panel.type !== 'row');
    assert.ok(graphs.length >= 10);
    for (const panel of graphs) {
      assert.ok(panel.gridPos && panel.targets && panel.targets.length > 0);
      for (const target of panel.targets) {
        for (const [used] of target.expr.matchAll(/vigil_[a-z0-9_]+/g)) {
          const name = used.replace(/_(bucket|count|sum)$/, '');
          assert.ok(all.has(name), `the dashboard's ${used} is exposed`);
        }
      }
    }
  });

  test('/metrics needs no token, is not in the OpenAPI document, and an unknown URL counts as unmatched', async () => {
    const h = get();
    assert.equal((await scrape(h)).statusCode, 200);
    const openapi = await h.call({ method: 'GET', url: '/openapi.json', as: null });
    assert.equal(openapi.statusCode, 200);
    assert.ok(!Object.keys(openapi.json().paths).includes('/metrics'));
    const missing = await h.call({ method: 'GET', url: '/no/such/thing/8f3a', as: null });
    assert.equal(missing.statusCode, 404);
    const all = families((await scrape(h)).body);
    const requests = family(all, 'vigil_http_requests_total', 'COUNTER');
    assert.ok(sample(requests, { route: 'unmatched', method: 'GET', status_code: '404' }));
    assert.ok(!requests.metrics.some((m) => m.labels?.route?.includes('8f3a')));
  });

  // Last of the suite: it stops the in-process worker.
  test('a run canceled while queued counts as canceled, with no duration', async () => {
    const h = get();
    const key = h.alice.bucketKey;
    await h.server.stopWorker();
    const created = await h.data('POST', `/buckets/${key}/tests`, { name: 'canceled' });
    const runId = await trigger(h, created.trigger_url);
    const before = series((await scrape(h)).body);
    const count = (all: Map<string, MetricFamily>, name: string) =>
      Number(sample(all.get(name)!, { result: 'canceled', source: 'trigger_url' })?.value ?? 0);
    const canceled = await h.call({
      method: 'DELETE',
      url: `/buckets/${key}/tests/${created.id}/results/${runId}`,
    });
    assert.equal(canceled.statusCode, 200, canceled.body);
    const after = series((await scrape(h)).body);
    assert.equal(count(after, 'vigil_runs_finished_total'), count(before, 'vigil_runs_finished_total') + 1);
    assert.equal(
      count(after, 'vigil_run_duration_seconds_count'),
      count(before, 'vigil_run_duration_seconds_count'),
    );
  });
});

const TOKEN = 'metrics-token-0123456789abcdef';

await describeApi(
  'metrics with METRICS_TOKEN',
  (get) => {
    test('401 without the token or with another, 200 with it', async () => {
      const h = get();
      const missing = await scrape(h);
      assert.equal(missing.statusCode, 401);
      assert.equal(missing.json().error.code, 'unauthorized');
      assert.match(String(missing.headers['www-authenticate']), /^Bearer/);
      assert.equal((await scrape(h, { authorization: `Bearer ${TOKEN}x` })).statusCode, 401);
      // An API token is not a metrics token.
      assert.equal((await scrape(h, { authorization: `Bearer ${h.alice.token}` })).statusCode, 401);
      const ok = await scrape(h, { authorization: `Bearer ${TOKEN}` });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.ok(families(ok.body).has('vigil_http_requests_total'));
    });
  },
  { env: { METRICS_TOKEN: TOKEN } },
);

const METRICS_PORT = await freePort();

await describeApi(
  'metrics on METRICS_PORT',
  (get) => {
    test('served on their own port with the token, not on the API origin', async () => {
      const h = get();
      assert.equal((await scrape(h, { authorization: `Bearer ${TOKEN}` })).statusCode, 404);
      assert.equal(h.server.metricsListener?.port, METRICS_PORT);
      const url = `http://127.0.0.1:${METRICS_PORT}/metrics`;
      assert.equal((await fetch(url)).status, 401);
      assert.equal((await fetch(`http://127.0.0.1:${METRICS_PORT}/other`)).status, 404);
      const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.status, 200);
      const all = families(await ok.text());
      family(all, 'vigil_runs_finished_total', 'COUNTER');
      family(all, 'vigil_queue_jobs_waiting', 'GAUGE');
    });
  },
  // Both dialects' suites take the same port, one after the other.
  { env: { METRICS_TOKEN: TOKEN, METRICS_PORT: String(METRICS_PORT) } },
);

await describeApi(
  'metrics switched off',
  (get) => {
    test('METRICS_ENABLED=false: no /metrics and nothing counted', async () => {
      const h = get();
      assert.equal((await scrape(h)).statusCode, 404);
      assert.equal(h.server.runtime.metrics, undefined);
      assert.equal(h.server.metricsListener, null);
    });
  },
  { env: { METRICS_ENABLED: 'false' } },
);
