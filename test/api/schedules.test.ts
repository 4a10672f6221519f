import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { withoutExportStamp } from '../helpers/export-stamp.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';
const INTERVALS = ['1m', '5m', '15m', '30m', '1h', '6h', '1d'];

await describeApi('schedules API', (harness) => {
  const get = () => withoutExportStamp(harness());
  const bucket = () => get().alice.bucketKey;
  const tests = (key = bucket()) => `/buckets/${key}/tests`;
  const schedules = (testId: string, key = bucket()) => `${tests(key)}/${testId}/schedules`;
  const testEnvs = (testId: string, key = bucket()) => `${tests(key)}/${testId}/environments`;
  const sharedEnvs = (key = bucket()) => `/buckets/${key}/environments`;
  const newTest = (name = 'Scheduled test', key = bucket()) => get().data('POST', tests(key), { name });

  const expectError = (...args: Parameters<ReturnType<typeof get>['expectError']>) =>
    get().expectError(...args);

  const scheduleRows = (testId: string) =>
    get().store.db.selectFrom('schedules').selectAll().where('test_id', '=', testId).execute();

  test('POST answers 201 with the schedule; environment_id defaults to the test default', async () => {
    const { call } = get();
    const t = await newTest();
    const before = Math.floor(Date.now() / 1000);
    const response = await call({ method: 'POST', url: schedules(t.id), body: { interval: '5m' } });
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.deepEqual(body.meta, { status: 'success' });
    assert.equal(body.error, null);
    const created = body.data;
    assert.deepEqual(Object.keys(created).sort(), [
      'created_at',
      'environment_id',
      'id',
      'interval',
      'next_run_at',
      'note',
    ]);
    assert.equal(created.next_run_at, null, 'not planned before the scheduler sees it');
    assert.match(created.id, UUID);
    assert.equal(created.environment_id, t.default_environment_id);
    assert.equal(created.interval, '5m');
    assert.equal(created.note, '');
    assert.ok(Number.isInteger(created.created_at));
    assert.ok(created.created_at >= before - 1 && created.created_at <= Math.floor(Date.now() / 1000) + 1);
  });

  test('CRUD: list, read, change and delete a schedule', async () => {
    const { call, data } = get();
    const t = await newTest();
    const staging = await data('POST', testEnvs(t.id), { name: 'Staging' });
    assert.deepEqual(await data('GET', schedules(t.id)), []);

    const created = await data('POST', schedules(t.id), {
      environment_id: staging.id,
      interval: '1h',
      note: 'hourly on staging',
    });
    assert.equal(created.environment_id, staging.id);
    assert.equal(created.interval, '1h');
    assert.equal(created.note, 'hourly on staging');
    const url = `${schedules(t.id)}/${created.id}`;

    const list = await call({ method: 'GET', url: schedules(t.id) });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().meta, { status: 'success' });
    assert.equal(list.json().error, null);
    assert.deepEqual(list.json().data, [created]);
    assert.deepEqual(await data('GET', url), created);

    // PUT changes only the properties given.
    const noted = await data('PUT', url, { note: 'renamed note' });
    assert.deepEqual(noted, { ...created, note: 'renamed note' });
    const faster = await data('PUT', url, { interval: '1m' });
    assert.deepEqual(faster, { ...noted, interval: '1m' });
    const moved = await data('PUT', url, { environment_id: t.default_environment_id });
    assert.deepEqual(moved, { ...faster, environment_id: t.default_environment_id });
    const cleared = await data('PUT', url, { note: '' });
    assert.deepEqual(cleared, { ...moved, note: '' });
    const all = await data('PUT', url, { environment_id: staging.id, interval: '1d', note: 'daily' });
    assert.deepEqual(all, { ...cleared, environment_id: staging.id, interval: '1d', note: 'daily' });
    assert.deepEqual(await data('GET', url), all);
    assert.equal(all.id, created.id);
    assert.equal(all.created_at, created.created_at);

    const second = await data('POST', schedules(t.id), { interval: '15m' });
    assert.deepEqual(
      (await data('GET', schedules(t.id))).map((s: any) => s.id).sort(),
      [created.id, second.id].sort(),
    );

    const response = await call({ method: 'DELETE', url });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    await expectError({ method: 'GET', url }, 404, 'not_found');
    await expectError({ method: 'DELETE', url }, 404, 'not_found');
    await expectError({ method: 'PUT', url, body: { note: 'back?' } }, 404, 'not_found');
    assert.deepEqual(await data('GET', schedules(t.id)), [second]);
    assert.equal((await scheduleRows(t.id)).length, 1);
  });

  test('every interval is accepted', async () => {
    const { data } = get();
    const t = await newTest();
    for (const interval of INTERVALS) {
      const created = await data('POST', schedules(t.id), { interval });
      assert.equal(created.interval, interval);
      assert.equal((await data('GET', `${schedules(t.id)}/${created.id}`)).interval, interval);
    }
    const one = (await data('GET', schedules(t.id)))[0];
    for (const interval of INTERVALS) {
      assert.equal((await data('PUT', `${schedules(t.id)}/${one.id}`, { interval })).interval, interval);
    }
  });

  test('the default environment_id is the test default at the time of creation', async () => {
    const { data } = get();
    const t = await newTest();
    const other = await data('POST', testEnvs(t.id), { name: 'New default' });
    const early = await data('POST', schedules(t.id), { interval: '5m' });
    assert.equal(early.environment_id, t.default_environment_id);
    await data('PUT', `${tests()}/${t.id}`, { default_environment_id: other.id });
    const late = await data('POST', schedules(t.id), { interval: '5m' });
    assert.equal(late.environment_id, other.id);
    assert.equal(
      (await data('GET', `${schedules(t.id)}/${early.id}`)).environment_id,
      t.default_environment_id,
    );
  });

  test('a shared environment of the bucket may be used', async () => {
    const { data } = get();
    const t = await newTest();
    const shared = await data('POST', sharedEnvs(), { name: 'Shared for schedules' });
    const created = await data('POST', schedules(t.id), { environment_id: shared.id, interval: '30m' });
    assert.equal(created.environment_id, shared.id);
    const other = await data('POST', schedules(t.id), { interval: '6h' });
    const moved = await data('PUT', `${schedules(t.id)}/${other.id}`, { environment_id: shared.id });
    assert.equal(moved.environment_id, shared.id);
    // A test whose default is shared gets it as the schedule default.
    await data('PUT', `${tests()}/${t.id}`, { default_environment_id: shared.id });
    assert.equal((await data('POST', schedules(t.id), { interval: '1d' })).environment_id, shared.id);
  });

  test("an environment that is neither the test's nor shared in the bucket is 400 /environment_id", async () => {
    const { call, data, bob } = get();
    const t = await newTest();
    const other = await newTest('Another test');
    const otherEnv = await data('POST', testEnvs(other.id), { name: 'Not yours' });
    const elsewhere = (await data('POST', '/buckets', { name: 'Schedules elsewhere' })).key;
    const foreignShared = await data('POST', sharedEnvs(elsewhere), { name: 'Other bucket shared' });
    const bobsShared = (
      await call({ method: 'POST', url: sharedEnvs(bob.bucketKey), body: { name: "Bob's" }, as: bob })
    ).json().data;
    const existing = await data('POST', schedules(t.id), { interval: '5m', note: 'keep' });

    for (const environmentId of [
      other.default_environment_id,
      otherEnv.id,
      foreignShared.id,
      bobsShared.id,
      MISSING,
      'not-a-uuid',
      '',
    ]) {
      const error = await expectError(
        { method: 'POST', url: schedules(t.id), body: { environment_id: environmentId, interval: '5m' } },
        400,
        'validation_failed',
        '/environment_id',
      );
      assert.ok(error.message.length > '/environment_id'.length, error.message);
      await expectError(
        {
          method: 'PUT',
          url: `${schedules(t.id)}/${existing.id}`,
          body: { environment_id: environmentId },
        },
        400,
        'validation_failed',
        '/environment_id',
      );
    }
    assert.deepEqual(await data('GET', schedules(t.id)), [existing]);
    assert.deepEqual(await data('GET', schedules(other.id)), []);
  });

  test('a bad interval is 400 naming /interval and listing the allowed values', async () => {
    const { data } = get();
    const t = await newTest();
    const existing = await data('POST', schedules(t.id), { interval: '5m' });
    for (const interval of ['2m', '60s', '1w', '5M', '', 5, null]) {
      const error = await expectError(
        { method: 'POST', url: schedules(t.id), body: { interval } },
        400,
        'validation_failed',
        '/interval',
      );
      if (typeof interval === 'string') {
        for (const allowed of INTERVALS) assert.ok(error.message.includes(allowed), error.message);
        assert.ok(error.message.includes(INTERVALS.join(', ')), error.message);
      }
      await expectError(
        { method: 'PUT', url: `${schedules(t.id)}/${existing.id}`, body: { interval } },
        400,
        'validation_failed',
        '/interval',
      );
    }
    await expectError(
      { method: 'POST', url: schedules(t.id), body: { note: 'no interval' } },
      400,
      'validation_failed',
      '/interval',
    );
    await expectError(
      { method: 'POST', url: schedules(t.id), body: { interval: '5m', note: 7 } },
      400,
      'validation_failed',
      '/note',
    );
    assert.deepEqual(await data('GET', schedules(t.id)), [existing]);
  });

  test('unknown, malformed, misplaced and foreign schedules are 404', async () => {
    const { data, bob } = get();
    const t1 = await newTest('First');
    const t2 = await newTest('Second');
    const s1 = await data('POST', schedules(t1.id), { interval: '5m', note: 'first' });

    const urls = [
      `${schedules(t1.id)}/${MISSING}`,
      `${schedules(t1.id)}/not-a-uuid`,
      // A schedule through another test's path.
      `${schedules(t2.id)}/${s1.id}`,
      // Unknown and malformed tests.
      `${schedules(MISSING)}/${s1.id}`,
      `${schedules('not-a-uuid')}/${s1.id}`,
      // Through Bob's bucket.
      `${schedules(t1.id, bob.bucketKey)}/${s1.id}`,
    ];
    for (const url of urls) {
      await expectError({ method: 'GET', url }, 404, 'not_found');
      await expectError({ method: 'PUT', url, body: { note: 'hijacked' } }, 404, 'not_found');
      await expectError({ method: 'DELETE', url }, 404, 'not_found');
    }
    for (const url of [schedules(MISSING), schedules('not-a-uuid'), schedules(t1.id, bob.bucketKey)]) {
      await expectError({ method: 'GET', url }, 404, 'not_found');
      await expectError({ method: 'POST', url, body: { interval: '5m' } }, 404, 'not_found');
    }
    // Bob, in Alice's bucket.
    const url = `${schedules(t1.id)}/${s1.id}`;
    await expectError({ method: 'GET', url: schedules(t1.id), as: bob }, 404, 'not_found');
    await expectError(
      { method: 'POST', url: schedules(t1.id), body: { interval: '5m' }, as: bob },
      404,
      'not_found',
    );
    await expectError({ method: 'GET', url, as: bob }, 404, 'not_found');
    await expectError({ method: 'PUT', url, body: { note: 'bob' }, as: bob }, 404, 'not_found');
    await expectError({ method: 'DELETE', url, as: bob }, 404, 'not_found');

    assert.deepEqual(await data('GET', url), s1);
    assert.deepEqual(await data('GET', schedules(t1.id)), [s1]);
    assert.deepEqual(await data('GET', schedules(t2.id)), []);
  });

  test('schedules appear in the test detail', async () => {
    const { call, data } = get();
    const t = await newTest();
    assert.deepEqual((await data('GET', `${tests()}/${t.id}`)).schedules, []);
    const a = await data('POST', schedules(t.id), { interval: '5m', note: 'a' });
    const b = await data('POST', schedules(t.id), { interval: '1d', note: 'b' });
    const byId = (list: any[]) => [...list].sort((x, y) => x.id.localeCompare(y.id));
    let detail = await data('GET', `${tests()}/${t.id}`);
    assert.deepEqual(byId(detail.schedules), byId([a, b]));
    assert.deepEqual(byId(detail.schedules), byId(await data('GET', schedules(t.id))));

    const changed = await data('PUT', `${schedules(t.id)}/${a.id}`, { interval: '15m' });
    detail = await data('GET', `${tests()}/${t.id}`);
    assert.deepEqual(byId(detail.schedules), byId([changed, b]));

    assert.equal((await call({ method: 'DELETE', url: `${schedules(t.id)}/${b.id}` })).statusCode, 204);
    detail = await data('GET', `${tests()}/${t.id}`);
    assert.deepEqual(detail.schedules, [changed]);
    // The list of tests stays without schedules.
    const item = (await data('GET', `${tests()}?count=1000`)).find((x: any) => x.id === t.id);
    assert.ok(!('schedules' in item));
  });

  test('schedule writes are recorded as test revisions', async () => {
    const { call, data } = get();
    const t = await newTest();
    const s = await data('POST', schedules(t.id), { interval: '5m', note: 'tracked' });
    await data('PUT', `${schedules(t.id)}/${s.id}`, { interval: '1h' });
    await call({ method: 'DELETE', url: `${schedules(t.id)}/${s.id}` });
    const revisions = (await data('GET', `${tests()}/${t.id}/revisions`)).test_revisions;
    assert.equal(revisions.length, 4);
    assert.deepEqual(
      revisions.map((r: any) => r.snapshot.schedules.map((x: any) => x.interval)),
      [[], ['5m'], ['1h'], []],
    );
  });

  test('deleting an environment removes its schedules', async () => {
    const { call, data } = get();
    const t = await newTest();
    const staging = await data('POST', testEnvs(t.id), { name: 'Staging' });
    const shared = await data('POST', sharedEnvs(), { name: 'Shared, scheduled' });
    const onDefault = await data('POST', schedules(t.id), { interval: '5m' });
    const onStaging = await data('POST', schedules(t.id), { environment_id: staging.id, interval: '1h' });
    await data('POST', schedules(t.id), { environment_id: staging.id, interval: '1d' });
    await data('POST', schedules(t.id), { environment_id: shared.id, interval: '6h' });
    const other = await newTest('Also on shared');
    await data('POST', schedules(other.id), { environment_id: shared.id, interval: '30m' });
    const otherKept = await data('POST', schedules(other.id), { interval: '30m' });

    assert.equal((await call({ method: 'DELETE', url: `${testEnvs(t.id)}/${staging.id}` })).statusCode, 204);
    const remaining = await data('GET', schedules(t.id));
    assert.deepEqual(
      remaining.map((s: any) => s.environment_id).sort(),
      [t.default_environment_id, shared.id].sort(),
    );
    await expectError({ method: 'GET', url: `${schedules(t.id)}/${onStaging.id}` }, 404, 'not_found');
    assert.ok(
      !(await data('GET', `${tests()}/${t.id}`)).schedules.some((s: any) => s.environment_id === staging.id),
    );

    assert.equal((await call({ method: 'DELETE', url: `${sharedEnvs()}/${shared.id}` })).statusCode, 204);
    assert.deepEqual(await data('GET', schedules(t.id)), [onDefault]);
    assert.deepEqual((await data('GET', `${tests()}/${t.id}`)).schedules, [onDefault]);
    assert.deepEqual(await data('GET', schedules(other.id)), [otherKept]);
    const rows = await get()
      .store.db.selectFrom('schedules')
      .select('id')
      .where('environment_id', 'in', [staging.id, shared.id])
      .execute();
    assert.deepEqual(rows, []);
  });

  test('a token with only api:read may read schedules but not write them', async () => {
    const { data, tokenWith } = get();
    const t = await newTest();
    const s = await data('POST', schedules(t.id), { interval: '5m', note: 'scoped' });
    const reader = await tokenWith(['api:read']);
    const list = await get().call({ method: 'GET', url: schedules(t.id), as: reader });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().data, [s]);
    const one = await get().call({ method: 'GET', url: `${schedules(t.id)}/${s.id}`, as: reader });
    assert.equal(one.statusCode, 200);
    await expectError(
      { method: 'POST', url: schedules(t.id), body: { interval: '5m' }, as: reader },
      403,
      'forbidden',
    );
    await expectError(
      { method: 'PUT', url: `${schedules(t.id)}/${s.id}`, body: { note: 'no' }, as: reader },
      403,
      'forbidden',
    );
    await expectError({ method: 'DELETE', url: `${schedules(t.id)}/${s.id}`, as: reader }, 403, 'forbidden');
    await expectError({ method: 'GET', url: schedules(t.id), as: null }, 401, 'unauthorized');
    assert.deepEqual(await data('GET', schedules(t.id)), [s]);
  });
});
