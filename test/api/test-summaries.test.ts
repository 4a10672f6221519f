import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { runsRepo } from '../../src/store/repositories/runs.js';
import { describeApi } from '../helpers/api.js';
import { runRow } from '../helpers/seed.js';

await describeApi('test summaries', (get) => {
  test('each test with its schedules, last run (as in the detail) and 20 recent runs, oldest first', async () => {
    const h = get();
    const bucket = await h.data('POST', '/buckets', { name: 'Summaries' });
    const b = `/buckets/${bucket.key}`;
    const first = await h.data('POST', `${b}/tests`, { name: 'First', description: 'd' });
    const second = await h.data('POST', `${b}/tests`, { name: 'Second' });
    const schedule = await h.data('POST', `${b}/tests/${first.id}/schedules`, { interval: '1h' });
    const rows = [];
    for (let i = 0; i < 25; i++)
      rows.push(
        runRow(first.id, bucket.key, i % 3 === 0 ? 'fail' : 'pass', 1_700_000_000 + i, i === 24 ? null : i),
      );
    rows.push(runRow(first.id, bucket.key, 'working', 1_800_000_000, null));
    rows.push(runRow(first.id, bucket.key, 'canceled', 1_800_000_001, null));
    await runsRepo.insert(h.store.db, rows);

    const response = await h.call({ method: 'GET', url: `${b}/test-summaries` });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.deepEqual(body.meta, { status: 'success', total: 2 });
    // Oldest first: the reverse of GET …/tests, which lists newest first.
    assert.deepEqual(
      body.data.map((t: any) => t.id),
      (await h.data('GET', `${b}/tests`)).map((t: any) => t.id).reverse(),
    );
    // Both tests were made in the same second: the list orders them by id then, so look them up.
    const one = body.data.find((t: any) => t.id === first.id);
    const two = body.data.find((t: any) => t.id === second.id);
    assert.deepEqual(Object.keys(one).sort(), [
      'created_at',
      'default_environment_id',
      'description',
      'id',
      'last_run',
      'name',
      'recent_runs',
      'schedules',
    ]);
    assert.equal(one.description, 'd');
    assert.deepEqual(one.schedules, [
      { id: schedule.id, environment_id: schedule.environment_id, interval: '1h' },
    ]);
    assert.deepEqual(one.last_run, (await h.data('GET', `${b}/tests/${first.id}`)).last_run);
    assert.equal(one.last_run.test_run_id, rows[24]!.id);
    assert.equal(one.recent_runs.length, 20);
    assert.deepEqual(
      one.recent_runs.map((r: any) => r.test_run_id),
      rows.slice(5, 25).map((r) => r.id),
    );
    assert.deepEqual(one.recent_runs[0], {
      test_run_id: rows[5]!.id,
      result: 'pass',
      started_at: 1_700_000_005,
      finished_at: 1_700_000_005.5,
      response_time_ms: 5,
    });
    assert.equal(one.recent_runs[19].response_time_ms, null);
    assert.deepEqual(two.schedules, []);
    assert.deepEqual(two.recent_runs, []);
    assert.equal(two.last_run, null);
    assert.equal(second.name, two.name);

    const page = await h.call({ method: 'GET', url: `${b}/test-summaries?count=1&offset=1` });
    assert.deepEqual(
      page.json().data.map((t: any) => t.id),
      [body.data[1].id],
    );
    assert.equal(page.json().meta.total, 2);
  });

  test('500 tests with 20 runs each on one page', async (t) => {
    const h = get();
    const bucket = await h.data('POST', '/buckets', { name: 'Many' });
    const b = `/buckets/${bucket.key}`;
    // Straight into the store: the API would stop at 100 test environments per bucket.
    const shared = await h.data('POST', `${b}/environments`, { name: 'Shared' });
    const created = Array.from({ length: 500 }, (_, i) => ({
      id: newId(),
      bucket_key: bucket.key,
      name: `T${i}`,
      description: null,
      created_by: h.alice.accountId,
      created_at: 1_600_000_000 + i,
      updated_at: 1_600_000_000 + i,
      default_environment_id: shared.id as string,
      trigger_id: newId(),
    }));
    for (let i = 0; i < created.length; i += 100)
      await h.store.db
        .insertInto('tests')
        .values(created.slice(i, i + 100))
        .execute();
    const rows = created.flatMap((t, i) =>
      Array.from({ length: 21 }, (_, j) => runRow(t.id, bucket.key, 'pass', 1_700_000_000 + j, i + j)),
    );
    for (let i = 0; i < rows.length; i += 200) await runsRepo.insert(h.store.db, rows.slice(i, i + 200));
    const started = performance.now();
    const body = (await h.call({ method: 'GET', url: `${b}/test-summaries?count=1000` })).json();
    const took = performance.now() - started;
    assert.equal(body.meta.total, 500);
    assert.equal(body.data.length, 500);
    for (const [i, summary] of body.data.entries()) {
      assert.equal(summary.recent_runs.length, 20);
      assert.equal(summary.recent_runs[0].response_time_ms, i + 1);
      assert.equal(summary.last_run.test_run_id, rows[i * 21 + 20]!.id);
    }
    // Not asserted (machines differ); a diagnostic for whoever reads the output.
    t.diagnostic(`test-summaries of 500 tests × 21 runs on ${h.dialect}: ${took.toFixed(0)} ms`);
  });

  test('recent runs by start and last run by finish, from a long history with overlapping runs', async () => {
    const h = get();
    const test = await h.data('POST', `/buckets/${h.alice.bucketKey}/tests`, { name: 'Long history' });
    const b = `/buckets/${h.alice.bucketKey}`;
    const base = 1_650_000_000;
    // 3,000 older runs, then runs that overlap: the newest by start is not the newest by finish,
    // and runs that are queued, working or canceled count for neither.
    const rows = Array.from({ length: 3_000 }, (_, i) =>
      runRow(test.id, h.alice.bucketKey, 'pass', base + i * 60, 5),
    );
    const late = base + 3_000 * 60;
    const slow = { ...runRow(test.id, h.alice.bucketKey, 'fail', late, 900), finished_at: late + 500 };
    const quick = Array.from({ length: 25 }, (_, i) =>
      runRow(test.id, h.alice.bucketKey, 'pass', late + 10 + i, i),
    );
    const working = runRow(test.id, h.alice.bucketKey, 'working', late + 100);
    const canceled = {
      ...runRow(test.id, h.alice.bucketKey, 'canceled', late + 101),
      finished_at: late + 900,
    };
    for (const batch of [rows, [slow, ...quick, working, canceled]])
      for (let i = 0; i < batch.length; i += 200) await runsRepo.insert(h.store.db, batch.slice(i, i + 200));

    const summaries = await h.data('GET', `${b}/test-summaries`);
    const summary = summaries.find((s: { id: string }) => s.id === test.id);
    assert.equal(summary.last_run.test_run_id, slow.id, 'the last run is the one that finished last');
    assert.equal(summary.last_run.result, 'fail');
    assert.deepEqual(
      summary.recent_runs.map((r: { test_run_id: string }) => r.test_run_id),
      quick.slice(5).map((r) => r.id),
      'the 20 newest by start, oldest first',
    );
    assert.deepEqual(summary.last_run, (await h.data('GET', `${b}/tests/${test.id}`)).last_run);
  });

  test('validation, foreign buckets and scope', async () => {
    const h = get();
    const b = `/buckets/${h.alice.bucketKey}/test-summaries`;
    await h.expectError({ method: 'GET', url: `${b}?count=0` }, 400, 'validation_failed', '?count');
    await h.expectError({ method: 'GET', url: `${b}?offset=-1` }, 400, 'validation_failed', '?offset');
    await h.expectError(
      { method: 'GET', url: `/buckets/${h.bob.bucketKey}/test-summaries` },
      404,
      'not_found',
    );
    const noRead = await h.tokenWith(['test:write']);
    await h.expectError({ method: 'GET', url: b, as: noRead }, 403, 'forbidden');
    const capped = await h.call({ method: 'GET', url: `${b}?count=5000` });
    assert.equal(capped.statusCode, 200);
  });
});
