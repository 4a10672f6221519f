import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';

await describeApi('tests API', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

  test('POST creates a test with one default environment and one default request step', async () => {
    const { data } = get();
    const created = await data('POST', tests(), { name: 'Users API', description: 'checks users' });
    assert.equal(created.name, 'Users API');
    assert.equal(created.description, 'checks users');
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(typeof created.created_at, 'number');
    assert.deepEqual(Object.keys(created.created_by).sort(), ['email', 'id', 'name']);
    assert.equal(created.created_by.email, 'alice@example.com');
    assert.equal(created.environments.length, 1);
    assert.equal(created.default_environment_id, created.environments[0].id);
    assert.equal(created.environments[0].test_id, created.id);
    assert.deepEqual(created.schedules, []);
    assert.equal(created.last_run, null);
    assert.match(created.trigger_url, /^http:\/\/vigil\.test\/radar\/[A-Za-z0-9_-]+\/trigger$/);
    assert.equal(created.steps.length, 1);
    const [step] = created.steps;
    assert.equal(step.step_type, 'request');
    assert.equal(step.method, 'GET');
    assert.equal(step.body, '');
    assert.deepEqual(step.headers, {});
    assert.deepEqual(step.assertions, [
      { source: 'response_status', property: '', comparison: 'is_equal', value: 200 },
    ]);
  });

  test('list items carry exactly the list fields; detail adds the rest', async () => {
    const { data } = get();
    const created = await data('POST', tests(), { name: 'Listed', description: null });
    const list = await data('GET', tests());
    const item = list.find((t: any) => t.id === created.id);
    assert.deepEqual(Object.keys(item).sort(), [
      'created_at',
      'created_by',
      'default_environment_id',
      'description',
      'id',
      'name',
    ]);
    const detail = await data('GET', `${tests()}/${created.id}`);
    assert.deepEqual(Object.keys(detail).sort(), [
      'created_at',
      'created_by',
      'default_environment_id',
      'description',
      'environments',
      'id',
      'last_run',
      'name',
      'schedules',
      'steps',
      'trigger_url',
    ]);
    assert.deepEqual(detail, created);
  });

  test('list pages with count and offset', async () => {
    const { data } = get();
    for (const name of ['p1', 'p2', 'p3']) await data('POST', tests(), { name });
    const all = await data('GET', `${tests()}?count=1000`);
    const page = await data('GET', `${tests()}?count=2&offset=1`);
    assert.deepEqual(
      page.map((t: any) => t.id),
      all.slice(1, 3).map((t: any) => t.id),
    );
  });

  test('POST with an array creates every test and answers an array of full tests', async () => {
    const { data } = get();
    const created = await data('POST', tests(), [{ name: 'A1' }, { name: 'A2', description: 'second' }]);
    assert.equal(created.length, 2);
    assert.deepEqual(
      created.map((t: any) => t.name),
      ['A1', 'A2'],
    );
    for (const t of created) assert.equal(t.steps.length, 1);
  });

  test('a rejected array create writes nothing', async () => {
    const { call, data } = get();
    const before = await data('GET', `${tests()}?count=1000`);
    const response = await call({ method: 'POST', url: tests(), body: [{ name: 'ok' }, { name: '' }] });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error.field, '/1/name');
    // A semantic failure later in the batch (an unknown environment reference) also rolls back the earlier items.
    const bad = await call({
      method: 'POST',
      url: tests(),
      body: [
        { name: 'fine' },
        { name: 'broken', default_environment_id: '00000000-0000-4000-8000-000000000000' },
      ],
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.field, '/1/default_environment_id');
    const after = await data('GET', `${tests()}?count=1000`);
    assert.deepEqual(after, before);
  });

  test('PUT changes only the properties given', async () => {
    const { data } = get();
    const created = await data('POST', tests(), { name: 'Before', description: 'keep me' });
    const renamed = await data('PUT', `${tests()}/${created.id}`, { name: 'After' });
    assert.equal(renamed.name, 'After');
    assert.equal(renamed.description, 'keep me');
    assert.deepEqual(renamed.steps, created.steps);
    const described = await data('PUT', `${tests()}/${created.id}`, { description: null });
    assert.equal(described.name, 'After');
    assert.equal(described.description, null);
  });

  test('PUT default_environment_id switches to another environment of the test or a shared one', async () => {
    const { data, call } = get();
    const created = await data('POST', tests(), { name: 'Envs' });
    const env = await data('POST', `${tests()}/${created.id}/environments`, { name: 'Staging' });
    const updated = await data('PUT', `${tests()}/${created.id}`, { default_environment_id: env.id });
    assert.equal(updated.default_environment_id, env.id);
    const shared = await data('POST', `/buckets/${get().alice.bucketKey}/environments`, { name: 'Shared' });
    assert.equal(
      (await data('PUT', `${tests()}/${created.id}`, { default_environment_id: shared.id }))
        .default_environment_id,
      shared.id,
    );
    const other = await data('POST', tests(), { name: 'Other' });
    const foreign = await call({
      method: 'PUT',
      url: `${tests()}/${created.id}`,
      body: { default_environment_id: other.default_environment_id },
    });
    assert.equal(foreign.statusCode, 400);
    assert.equal(foreign.json().error.field, '/default_environment_id');
  });

  test('PUT steps replaces the step list, keeping ids of the test own steps', async () => {
    const { data } = get();
    const created = await data('POST', tests(), { name: 'Steps via PUT' });
    const first = created.steps[0];
    const updated = await data('PUT', `${tests()}/${created.id}`, {
      steps: [
        { step_type: 'pause', duration: 2 },
        { ...first, url: 'https://example.com/health' },
      ],
    });
    assert.equal(updated.steps.length, 2);
    assert.equal(updated.steps[0].step_type, 'pause');
    assert.equal(updated.steps[1].id, first.id);
    assert.equal(updated.steps[1].url, 'https://example.com/health');
  });

  test('DELETE answers 204 with no body and removes steps, schedules, environments', async () => {
    const { data, call, store } = get();
    const created = await data('POST', tests(), { name: 'Doomed' });
    await data('POST', `${tests()}/${created.id}/schedules`, { interval: '5m' });
    const response = await call({ method: 'DELETE', url: `${tests()}/${created.id}` });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assert.equal((await call({ method: 'GET', url: `${tests()}/${created.id}` })).statusCode, 404);
    const count = async (table: 'steps' | 'schedules' | 'environments') =>
      (await store.db.selectFrom(table).select('id').where('test_id', '=', created.id).execute()).length;
    assert.equal(await count('steps'), 0);
    assert.equal(await count('schedules'), 0);
    assert.equal(await count('environments'), 0);
  });

  test('unknown, malformed and foreign test ids are 404', async () => {
    const { call, data, bob } = get();
    const mine = await data('POST', tests(), { name: 'Private' });
    for (const url of [
      `${tests()}/00000000-0000-4000-8000-000000000000`,
      `${tests()}/not-a-uuid`,
      `/buckets/${bob.bucketKey}/tests/${mine.id}`,
    ]) {
      const response = await call({ method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().error.code, 'not_found');
    }
    const asBob = await call({ method: 'GET', url: `${tests()}/${mine.id}`, as: bob });
    assert.equal(asBob.statusCode, 404);
    const deleteAsBob = await call({ method: 'DELETE', url: `${tests()}/${mine.id}`, as: bob });
    assert.equal(deleteAsBob.statusCode, 404);
    assert.equal((await call({ method: 'GET', url: `${tests()}/${mine.id}` })).statusCode, 200);
  });

  test('export and import recreate the test with new ids', async () => {
    const { call, data } = get();
    const bucket = get().alice.bucketKey;
    const shared = await data('POST', `/buckets/${bucket}/environments`, {
      name: 'Base',
      initial_variables: { host: 'https://api.example.com' },
    });
    const created = await data('POST', tests(), { name: 'Portable', description: 'travels' });
    const staging = await data('POST', `${tests()}/${created.id}/environments`, {
      name: 'Staging',
      parent_environment_id: shared.id,
      initial_variables: { user: 'u1' },
    });
    await data('POST', `${tests()}/${created.id}/steps`, {
      step_type: 'condition',
      left_value: '{{user}}',
      comparison: 'equal',
      right_value: 'u1',
      steps: [{ step_type: 'request', method: 'post', url: '{{host}}/users', body: '{"a":1}' }],
    });
    await data('POST', `${tests()}/${created.id}/schedules`, {
      environment_id: staging.id,
      interval: '1h',
      note: 'hourly',
    });
    const download = await call({ method: 'GET', url: `${tests()}/${created.id}/export` });
    assert.equal(download.statusCode, 200);
    assert.equal(download.headers['content-disposition'], 'attachment; filename="Portable.json"');
    // A download is the bare test, not the envelope: the file goes straight to `vigil run` or an import.
    const exported = download.json();
    assert.equal(exported.data, undefined);
    assert.equal(exported.vigil_export_version, 1);
    assert.equal(exported.environments.length, 2);
    assert.equal(exported.shared_environments.length, 1);

    const imported = await data('POST', tests(), exported);
    assert.notEqual(imported.id, created.id);
    assert.equal(imported.name, 'Portable');
    assert.equal(imported.environments.length, 2);
    const newStaging = imported.environments.find((e: any) => e.name === 'Staging');
    assert.notEqual(newStaging.id, staging.id);
    assert.equal(
      newStaging.parent_environment_id,
      shared.id,
      'an existing shared parent is linked, not copied',
    );
    assert.equal(imported.schedules[0].environment_id, newStaging.id);
    assert.equal(imported.schedules[0].interval, '1h');
    const original = await data('GET', `${tests()}/${created.id}`);
    const strip = (steps: any[]): any[] =>
      steps.map(({ id: _id, steps: inner, ...rest }) => (inner ? { ...rest, steps: strip(inner) } : rest));
    assert.deepEqual(strip(imported.steps), strip(original.steps));
    assert.ok(imported.steps.every((s: any) => !original.steps.some((o: any) => o.id === s.id)));

    // Into another account's bucket the shared parent does not exist: it is recreated there.
    const { bob } = get();
    const response = await call({
      method: 'POST',
      url: `/buckets/${bob.bucketKey}/tests`,
      body: exported,
      as: bob,
    });
    assert.equal(response.statusCode, 201, response.body);
    const bobsShared = (
      await call({ method: 'GET', url: `/buckets/${bob.bucketKey}/environments`, as: bob })
    ).json().data;
    assert.equal(bobsShared.length, 1);
    assert.deepEqual(bobsShared[0].initial_variables, { host: 'https://api.example.com' });
  });

  test('the answer to a create is the test as a read gives it back, whatever it holds', async () => {
    const { data } = get();
    const bucket = get().alice.bucketKey;
    const shared = await data('POST', `/buckets/${bucket}/environments`, { name: 'Shared base' });
    const environments = Array.from({ length: 6 }, (_, i) => ({
      id: `env-${i}`,
      name: `Env ${i}`,
      ...(i === 0 ? { parent_environment_id: shared.id } : { parent_environment_id: `env-${i - 1}` }),
      initial_variables: { n: String(i) },
      regions: ['local'],
    }));
    const created = await data('POST', tests(), {
      name: 'Everything at once',
      description: 'steps, environments, schedules',
      environments,
      default_environment_id: 'env-3',
      steps: [
        { step_type: 'request', method: 'GET', url: 'https://example.com/a', headers: { A: ['1'] } },
        {
          step_type: 'condition',
          left_value: '{{n}}',
          comparison: 'equal',
          right_value: '3',
          steps: [
            { step_type: 'request', method: 'POST', url: 'https://example.com/b', body: '{"x":1}' },
            { step_type: 'pause', duration: 1 },
          ],
        },
        { step_type: 'pause', duration: 2 },
      ],
      schedules: [
        { environment_id: 'env-2', interval: '1h', note: 'hourly' },
        { environment_id: 'env-5', interval: '5m', note: 'often' },
        { environment_id: 'env-0', interval: '1d', note: 'daily' },
      ],
    });
    assert.equal(created.environments.length, 6);
    assert.equal(created.schedules.length, 3);
    assert.deepEqual(created, await data('GET', `${tests()}/${created.id}`));

    const [first, second] = await data('POST', tests(), [{ name: 'One' }, { name: 'Two' }]);
    assert.deepEqual(first, await data('GET', `${tests()}/${first.id}`));
    assert.deepEqual(second, await data('GET', `${tests()}/${second.id}`));
  });

  test('a deleted test posted back with ?restored_from has a creation revision saying so', async () => {
    const { call, data } = get();
    const created = await data('POST', tests(), { name: 'Deleted by mistake' });
    await data('POST', `${tests()}/${created.id}/schedules`, { interval: '1h' });
    const exported = (await call({ method: 'GET', url: `${tests()}/${created.id}/export` })).json();
    assert.equal((await call({ method: 'DELETE', url: `${tests()}/${created.id}` })).statusCode, 204);

    const restored = await data('POST', `${tests()}?restored_from=${created.id}`, exported);
    assert.equal(restored.name, 'Deleted by mistake');
    assert.equal(restored.steps.length, 1);
    assert.equal(restored.schedules.length, 1);
    const revisions = await data('GET', `${tests()}/${restored.id}/revisions`);
    assert.equal(revisions.test_revisions.length, 1);
    assert.equal(revisions.test_revisions[0].action, 'create');
    assert.equal(revisions.test_revisions[0].snapshot.restored_from, created.id);

    const plain = await data('POST', tests(), exported);
    const plainRevisions = await data('GET', `${tests()}/${plain.id}/revisions`);
    assert.equal(plainRevisions.test_revisions[0].snapshot.restored_from, undefined);
  });

  test('?restored_from must be an id and brings back one test, not an array', async () => {
    const { call } = get();
    const notId = await call({ method: 'POST', url: `${tests()}?restored_from=nope`, body: { name: 'x' } });
    assert.equal(notId.statusCode, 400, notId.body);
    const several = await call({
      method: 'POST',
      url: `${tests()}?restored_from=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`,
      body: [{ name: 'a' }, { name: 'b' }],
    });
    assert.equal(several.statusCode, 400, several.body);
    assert.equal(several.json().error.field, '?restored_from');
  });

  test('revisions record every change with a snapshot, environments keyed by id', async () => {
    const { data } = get();
    const created = await data('POST', tests(), { name: 'History' });
    await data('PUT', `${tests()}/${created.id}`, { name: 'History 2' });
    await data('POST', `${tests()}/${created.id}/steps`, { step_type: 'pause', duration: 3 });
    await data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
      verify_ssl: false,
    });
    const revisions = await data('GET', `${tests()}/${created.id}/revisions`);
    assert.equal(revisions.test_revisions.length, 3);
    const [first, second, third] = revisions.test_revisions;
    assert.equal(first.action, 'create');
    assert.equal(first.item_type, 'radar_test');
    assert.equal(first.snapshot.name, 'History');
    assert.equal(second.snapshot.name, 'History 2');
    assert.equal(third.snapshot.steps.length, 2);
    assert.ok(first.timestamp < second.timestamp && second.timestamp < third.timestamp);
    for (const key of [
      'uuid',
      'timestamp',
      'item_type',
      'author_uuid',
      'author_name',
      'author_email',
      'organization_id',
      'bucket_key',
      'source',
    ]) {
      assert.ok(key in first, key);
    }
    assert.equal(first.author_email, 'alice@example.com');
    assert.equal(first.source, 'api');
    assert.equal(first.bucket_key, get().alice.bucketKey);
    const envRevisions = revisions.env_revisions[created.default_environment_id];
    assert.equal(envRevisions.length, 2);
    assert.equal(envRevisions[0].item_type, 'environment');
    assert.equal(envRevisions[1].snapshot.verify_ssl, false);
  });

  test('edits marked as coming from the dashboard are recorded with that source', async () => {
    const { call, data } = get();
    const created = await data('POST', tests(), { name: 'From UI' });
    await call({
      method: 'PUT',
      url: `${tests()}/${created.id}`,
      body: { name: 'From UI 2' },
      headers: { 'x-vigil-source': 'dashboard' },
    });
    const revisions = await data('GET', `${tests()}/${created.id}/revisions`);
    assert.equal(revisions.test_revisions.at(-1).source, 'dashboard');
  });
});
