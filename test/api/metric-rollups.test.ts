import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { rebuildMetricRollups } from '../../src/store/repositories/metric-rollups.js';
import { rollupsRepo } from '../../src/store/repositories/rollups.js';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { runRow } from '../helpers/seed.js';

/** An upstream that answers 200, or 500 on /fail. */
let upstream: http.Server;
let base = '';

before(async () => {
  upstream = http.createServer((request, response) => {
    response.writeHead(request.url === '/fail' ? 500 : 200, { 'content-type': 'application/json' });
    response.end('{}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

after(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const PERCENTILES = [
  'response_time_50th_percentile',
  'response_time_95th_percentile',
  'response_time_99th_percentile',
] as const;

await describeApi('metrics from rollups', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

  async function newTest(name: string, path: string) {
    const { data } = get();
    const created = await data('POST', tests(), { name });
    await data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
      initial_variables: { base },
    });
    return data('PUT', `${tests()}/${created.id}`, {
      steps: [
        {
          step_type: 'request',
          method: 'GET',
          url: `{{base}}${path}`,
          assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
        },
      ],
    });
  }

  async function runOnce(t: { id: string; trigger_url: string }) {
    const { call, data } = get();
    const started = (
      await call({ method: 'GET', url: t.trigger_url.slice(PUBLIC_URL.length), as: null })
    ).json().data.runs[0];
    for (const deadline = Date.now() + 15_000; ;) {
      const run = await data('GET', `${tests()}/${t.id}/results/${started.test_run_id}`);
      if (!['queued', 'working'].includes(run.result)) return run;
      if (Date.now() > deadline) throw new Error(`run still ${run.result}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('runs count as they finish; day, week and month agree with the hour; removed runs still count', async () => {
    const { data, store } = get();
    const t = await newTest('Rolled', '/ok');
    const failing = await newTest('Rolled failing', '/fail');
    for (let i = 0; i < 3; i++) await runOnce(t);
    await runOnce(failing);

    const hour = await data('GET', `${tests()}/${t.id}/metrics?timeframe=hour`);
    const stored: { response_time_ms: number }[] = await data('GET', `${tests()}/${t.id}/results`);
    const average = Math.round((stored.reduce((sum, r) => sum + r.response_time_ms, 0) / 3) * 1_000) / 1_000;
    assert.equal(hour.this_time_period.total_test_runs, 3);
    for (const timeframe of ['day', 'week', 'month']) {
      const metrics = await data('GET', `${tests()}/${t.id}/metrics?timeframe=${timeframe}`);
      assert.equal(metrics.this_time_period.total_test_runs, 3, timeframe);
      assert.equal(metrics.this_time_period.success_ratio, 1, timeframe);
      // Every run is still stored: the percentiles are the exact ones, as the hour's.
      for (const key of PERCENTILES)
        assert.equal(metrics.this_time_period[key], hour.this_time_period[key], key);
      // The runs are a few seconds old: they are in the last point, or in the one before just after a turn.
      const points = metrics.response_times.filter(
        (p: { success_ratio: number | null }) => p.success_ratio !== null,
      );
      const runs = points.length;
      assert.ok(runs >= 1 && runs <= 2, timeframe);
      if (runs === 1) assert.equal(points[0].avg_response_time_ms, average);
    }
    const failed = await data('GET', `${tests()}/${failing.id}/metrics?timeframe=month`);
    assert.equal(failed.this_time_period.total_test_runs, 1);
    assert.equal(failed.this_time_period.success_ratio, 0);

    // Filters: another region or environment has none.
    const nowhere = await data('GET', `${tests()}/${t.id}/metrics?timeframe=day&region=nowhere`);
    assert.equal(nowhere.this_time_period.total_test_runs, 0);
    const region = (await data('GET', `${tests()}/${t.id}/results/latest`)).region;
    const here = await data('GET', `${tests()}/${t.id}/metrics?timeframe=day&region=${region}`);
    assert.equal(here.this_time_period.total_test_runs, 3);
    const env = await data(
      'GET',
      `${tests()}/${t.id}/metrics?timeframe=day&environment_uuid=${t.default_environment_id}`,
    );
    assert.equal(env.this_time_period.total_test_runs, 3);

    // Retention (or anything else) removing runs does not take them out of the rollups; the
    // percentiles then come from the histogram, within 2 % (and 0.02 ms) of the exact ones.
    await store.db.deleteFrom('test_runs').where('test_id', '=', t.id).execute();
    const after = await data('GET', `${tests()}/${t.id}/metrics?timeframe=day`);
    assert.equal(after.this_time_period.total_test_runs, 3);
    for (const key of PERCENTILES) {
      const truth = hour.this_time_period[key];
      assert.ok(
        Math.abs(after.this_time_period[key] - truth) <= 0.02 * (truth + 1),
        `${key}: ${after.this_time_period[key]} for ${truth}`,
      );
    }

    // Deleting the test deletes its rollups.
    assert.equal((await get().call({ method: 'DELETE', url: `${tests()}/${t.id}` })).statusCode, 204);
    const left = await store.db
      .selectFrom('test_metric_rollups')
      .select('test_id')
      .where('test_id', '=', t.id)
      .execute();
    assert.equal(left.length, 0);
  });

  test("deleting a bucket takes its tests' rollups with it", async () => {
    const { data, call, store, alice } = get();
    const key = (await data('POST', '/buckets', { name: 'Short-lived' })).key;
    const t = await data('POST', `/buckets/${key}/tests`, { name: 'Gone soon' });
    const run = {
      ...runRow(t.id, key, 'pass', Date.now() / 1000 - 60, 42),
      environment_id: t.default_environment_id,
    };
    await store.db.insertInto('test_runs').values(run).execute();
    await rebuildMetricRollups(store.db, t.id);
    await rollupsRepo.count(store.db, { ...run, result: 'pass', finished_at: run.finished_at! });
    const rows = async () => [
      (
        await store.db
          .selectFrom('test_metric_rollups')
          .select('test_id')
          .where('test_id', '=', t.id)
          .execute()
      ).length,
      (
        await store.db
          .selectFrom('test_daily_rollups')
          .select('test_id')
          .where('test_id', '=', t.id)
          .execute()
      ).length,
    ];
    assert.deepEqual(await rows(), [2, 1], 'an hour and a day of metrics, a day of uptime');
    assert.equal((await call({ method: 'DELETE', url: `/buckets/${key}`, as: alice })).statusCode, 204);
    assert.deepEqual(await rows(), [0, 0]);
  });

  test('rollups rebuilt from stored runs; a long history reads its percentiles from the histogram', async () => {
    const { data, store, server, alice } = get();
    const t = await newTest('Backfilled', '/ok');
    const now = Date.now() / 1000;
    // 40 days of history, one run an hour, one in ten failing, written straight to the store.
    const rows = Array.from({ length: 40 * 24 }, (_, i) => {
      const at = now - (i + 0.5) * 3_600;
      const row = runRow(t.id, alice.bucketKey, i % 10 === 0 ? 'fail' : 'pass', at, 20 + (i % 97) * 3);
      return { ...row, environment_id: t.default_environment_id };
    });
    for (let i = 0; i < rows.length; i += 200)
      await store.db
        .insertInto('test_runs')
        .values(rows.slice(i, i + 200))
        .execute();
    await rebuildMetricRollups(store.db, t.id);

    const exact = await data('GET', `${tests()}/${t.id}/metrics?timeframe=month`);
    const { results } = server.services;
    const limit = results.exactPercentilesUpTo;
    results.exactPercentilesUpTo = 0;
    try {
      const estimated = await data('GET', `${tests()}/${t.id}/metrics?timeframe=month`);
      assert.deepEqual(estimated.response_times, exact.response_times);
      assert.equal(estimated.this_time_period.total_test_runs, exact.this_time_period.total_test_runs);
      assert.equal(estimated.this_time_period.success_ratio, exact.this_time_period.success_ratio);
      for (const key of PERCENTILES) {
        const truth = exact.this_time_period[key];
        assert.ok(Math.abs(estimated.this_time_period[key] - truth) <= 0.02 * (truth + 1), key);
      }
    } finally {
      results.exactPercentilesUpTo = limit;
    }
    // The month is 29 whole days and today; the runs before its first day are the previous period.
    const firstDay = Math.floor(now / 86_400) * 86_400 - 29 * 86_400;
    const inMonth = rows.filter((r) => r.finished_at! >= firstDay);
    assert.equal(exact.this_time_period.total_test_runs, inMonth.length);
    const passes = inMonth.filter((r) => r.result === 'pass').length;
    assert.equal(
      exact.this_time_period.success_ratio,
      Math.round((passes / inMonth.length) * 10_000) / 10_000,
    );
    assert.equal(exact.response_times.length, 30);
    assert.ok(exact.change_from_last_period.total_test_runs !== null);
  });
});
