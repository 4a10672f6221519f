import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { describeApi } from '../helpers/api.js';

await describeApi('restoring revisions', (get) => {
  const restore = (b: string, testId: string, revision: string) =>
    `${b}/tests/${testId}/revisions/${revision}/restore`;

  test('a test revision sets name, description, default environment, steps and schedules back', async () => {
    const h = get();
    const b = `/buckets/${h.alice.bucketKey}`;
    const created = await h.data('POST', `${b}/tests`, { name: 'Original', description: 'first' });
    const t = `${b}/tests/${created.id}`;
    const firstStep = created.steps[0];
    await h.data('POST', `${t}/steps`, { step_type: 'pause', duration: 3 });
    const snapshotState = await h.data('GET', t);
    const schedule = await h.data('POST', `${t}/schedules`, { interval: '1h', note: 'kept' });
    const revisions = (await h.data('GET', `${t}/revisions`)).test_revisions;
    const target = revisions.at(-1); // after the schedule: two steps, one schedule
    const other = await h.data('POST', `${t}/environments`, { name: 'Other' });
    await h.data('PUT', t, {
      name: 'Changed',
      description: null,
      default_environment_id: other.id,
      steps: [{ step_type: 'request', method: 'POST', url: 'https://example.com/x' }],
    });
    await h.data('PUT', `${t}/schedules/${schedule.id}`, { interval: '1d', note: 'changed' });
    await h.data('POST', `${t}/schedules`, { interval: '5m' });

    const response = await h.call({
      method: 'POST',
      url: restore(b, created.id, target.uuid),
      headers: { 'x-vigil-source': 'dashboard' },
    });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.deepEqual(body.meta, { status: 'success', skipped: [] });
    assert.equal(body.data.name, 'Original');
    assert.equal(body.data.description, 'first');
    assert.equal(body.data.default_environment_id, created.default_environment_id);
    assert.deepEqual(body.data.steps, snapshotState.steps);
    assert.equal(body.data.steps[0].id, firstStep.id);
    assert.deepEqual(
      body.data.schedules.map((s: any) => [s.id, s.interval, s.note]),
      [[schedule.id, '1h', 'kept']],
    );
    assert.deepEqual(body.data, await h.data('GET', t));
    const after = (await h.data('GET', `${t}/revisions`)).test_revisions.at(-1);
    assert.equal(after.action, 'update');
    assert.equal(after.source, 'dashboard');
    assert.equal(after.snapshot.name, 'Original');
  });

  test('parts naming environments that are gone are left out and listed in meta.skipped', async () => {
    const h = get();
    const b = `/buckets/${h.alice.bucketKey}`;
    const created = await h.data('POST', `${b}/tests`, { name: 'Skips' });
    const t = `${b}/tests/${created.id}`;
    const extra = await h.data('POST', `${t}/environments`, { name: 'Extra' });
    await h.data('PUT', t, { default_environment_id: extra.id });
    await h.data('POST', `${t}/schedules`, { interval: '1h', environment_id: extra.id });
    await h.data('POST', `${t}/schedules`, {
      interval: '1d',
      environment_id: created.default_environment_id,
    });
    const target = (await h.data('GET', `${t}/revisions`)).test_revisions.at(-1);
    await h.data('PUT', t, { default_environment_id: created.default_environment_id, name: 'Renamed' });
    assert.equal((await h.call({ method: 'DELETE', url: `${t}/environments/${extra.id}` })).statusCode, 204);

    const body = (await h.call({ method: 'POST', url: restore(b, created.id, target.uuid) })).json();
    assert.equal(body.data.name, 'Skips');
    assert.equal(body.data.default_environment_id, created.default_environment_id);
    assert.deepEqual(
      body.data.schedules.map((s: any) => s.interval),
      ['1d'],
    );
    // Schedules made in the same second keep no particular order among themselves.
    assert.equal(body.meta.skipped.length, 2);
    assert.equal(body.meta.skipped[0].field, '/default_environment_id');
    assert.match(body.meta.skipped[1].field, /^\/schedules\/[01]$/);
    assert.match(body.meta.skipped[1].message, new RegExp(`${extra.id}.*1h`));
  });

  test('an environment revision restores that environment, recreating it when deleted', async () => {
    const h = get();
    const b = `/buckets/${h.alice.bucketKey}`;
    const shared = await h.data('POST', `${b}/environments`, { name: 'Base', initial_variables: { a: '1' } });
    const created = await h.data('POST', `${b}/tests`, { name: 'Envs' });
    const t = `${b}/tests/${created.id}`;
    const env = await h.data('POST', `${t}/environments`, {
      name: 'Staging',
      parent_environment_id: shared.id,
      initial_variables: { user: 'u1' },
      verify_ssl: false,
    });
    await h.data('PUT', `${t}/environments/${env.id}`, { name: 'Renamed', initial_variables: {} });
    let revisions = (await h.data('GET', `${t}/revisions`)).env_revisions[env.id];
    const createRevision = revisions[0];
    assert.equal(createRevision.action, 'create');

    let body = (await h.call({ method: 'POST', url: restore(b, created.id, createRevision.uuid) })).json();
    let restored = body.data.environments.find((e: any) => e.id === env.id);
    assert.equal(restored.name, 'Staging');
    assert.deepEqual(restored.initial_variables, { user: 'u1' });
    assert.equal(restored.verify_ssl, false);
    assert.equal(restored.parent_environment_id, shared.id);

    assert.equal((await h.call({ method: 'DELETE', url: `${t}/environments/${env.id}` })).statusCode, 204);
    revisions = (await h.data('GET', `${t}/revisions`)).env_revisions[env.id];
    const deletion = revisions.at(-1);
    assert.equal(deletion.action, 'delete');
    body = (await h.call({ method: 'POST', url: restore(b, created.id, deletion.uuid) })).json();
    restored = body.data.environments.find((e: any) => e.id === env.id);
    assert.equal(restored.name, 'Staging');
    assert.deepEqual(await h.data('GET', `${t}/environments/${env.id}`), restored);
    revisions = (await h.data('GET', `${t}/revisions`)).env_revisions[env.id];
    assert.equal(revisions.at(-1).action, 'create');

    // A shared environment the test uses (its environment inherits from it).
    await h.data('PUT', `${b}/environments/${shared.id}`, { name: 'Base 2' });
    const sharedRevisions = await h.store.db
      .selectFrom('revisions')
      .select(['id', 'action'])
      .where('item_id', '=', shared.id)
      .orderBy('timestamp')
      .execute();
    const response = await h.call({ method: 'POST', url: restore(b, created.id, sharedRevisions[0]!.id) });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((await h.data('GET', `${b}/environments/${shared.id}`)).name, 'Base');
    // A test that does not use it cannot restore it.
    const unrelated = await h.data('POST', `${b}/tests`, { name: 'Unrelated' });
    await h.expectError(
      { method: 'POST', url: restore(b, unrelated.id, sharedRevisions[0]!.id) },
      404,
      'not_found',
    );
  });

  test('unknown, foreign and deletion revisions; scopes', async () => {
    const h = get();
    const b = `/buckets/${h.alice.bucketKey}`;
    const one = await h.data('POST', `${b}/tests`, { name: 'One' });
    const two = await h.data('POST', `${b}/tests`, { name: 'Two' });
    const twoRevision = (await h.data('GET', `${b}/tests/${two.id}/revisions`)).test_revisions[0];
    await h.expectError({ method: 'POST', url: restore(b, one.id, twoRevision.uuid) }, 404, 'not_found');
    await h.expectError({ method: 'POST', url: restore(b, one.id, newId()) }, 404, 'not_found');
    await h.expectError({ method: 'POST', url: restore(b, one.id, 'not-a-uuid') }, 404, 'not_found');
    await h.expectError(
      { method: 'POST', url: restore(b, one.id, twoRevision.uuid), as: h.bob },
      404,
      'not_found',
    );
    const bobTest = (
      await h.call({
        method: 'POST',
        url: `/buckets/${h.bob.bucketKey}/tests`,
        body: { name: 'B' },
        as: h.bob,
      })
    ).json().data;
    const bobRevision = (
      await h.call({
        method: 'GET',
        url: `/buckets/${h.bob.bucketKey}/tests/${bobTest.id}/revisions`,
        as: h.bob,
      })
    ).json().data.test_revisions[0];
    await h.expectError({ method: 'POST', url: restore(b, one.id, bobRevision.uuid) }, 404, 'not_found');

    // A deletion revision of the test itself (reachable only by its id: a deleted test is gone).
    const oneRevision = (await h.data('GET', `${b}/tests/${one.id}/revisions`)).test_revisions[0];
    const deletionId = newId();
    await h.store.db
      .insertInto('revisions')
      .values({
        ...(await h.store.db
          .selectFrom('revisions')
          .selectAll()
          .where('id', '=', oneRevision.uuid)
          .executeTakeFirstOrThrow()),
        id: deletionId,
        action: 'delete',
      })
      .execute();
    const error = await h.expectError(
      { method: 'POST', url: restore(b, one.id, deletionId) },
      409,
      'conflict',
    );
    assert.match(error.message, /deletion/);

    const readOnly = await h.tokenWith(['api:read']);
    await h.expectError(
      { method: 'POST', url: restore(b, one.id, oneRevision.uuid), as: readOnly },
      403,
      'forbidden',
    );
  });
});
