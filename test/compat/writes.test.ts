import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { assertShape, goClient, providerEnvironment } from './client.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/** Bucket and test writes exactly as the Go library and the Terraform providers send them. */
await describeApi('compat: bucket, test, environment and schedule writes', (get) => {
  const teamOf = async () =>
    (await goClient(get()).data('GET', '/account', undefined, 200)).teams[0].id as string;

  test('POST /buckets?name=&team_uuid= with Content-Type: application/json and no body (item 1)', async () => {
    const client = goClient(get());
    const team = await teamOf();
    const bucket = await client.data(
      'POST',
      `/buckets?name=${encodeURIComponent('tf bucket')}&team_uuid=${team}`,
      undefined,
      201,
    );
    assertShape(
      bucket,
      {
        key: 'string',
        name: 'string',
        default: 'boolean',
        verify_ssl: 'boolean',
        trigger_url: 'string',
        tests_url: 'string',
        messages_url: 'string',
        collections_url: 'string',
        team: 'object',
      },
      'bucket',
    );
    assert.equal(bucket.name, 'tf bucket');
    assert.equal(bucket.team.id, team);
    assert.equal((await client.data('GET', `/buckets/${bucket.key}`, undefined, 200)).key, bucket.key);
  });

  test('POST /buckets with a form body name=&team_uuid= (go-runscope) and JSON {name, team_id}', async () => {
    const h = get();
    const team = await teamOf();
    const form = await h.app.inject({
      method: 'POST',
      url: '/buckets',
      headers: {
        authorization: `Bearer ${h.alice.token}`,
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: `name=form+bucket&team_uuid=${team}`,
    });
    assert.equal(form.statusCode, 201, form.body);
    assert.equal(form.json().data.name, 'form bucket');
    const json = await goClient(h).data('POST', '/buckets', { name: 'json bucket', team_id: team }, 201);
    assert.equal(json.team.id, team);
  });

  test('an unknown or foreign team_uuid is refused, never the default team', async () => {
    const h = get();
    const client = goClient(h);
    const bobTeam = (await h.call({ method: 'GET', url: '/account', as: h.bob })).json().data.teams[0].id;
    for (const team of [UNKNOWN_UUID, bobTeam, 'not-a-team']) {
      const response = await client.send('POST', `/buckets?name=x&team_uuid=${team}`);
      assert.ok([400, 404].includes(response.status), `${team}: ${response.body}`);
      assert.equal(response.json().error.status, response.status);
    }
    const names = (await client.data('GET', '/buckets', undefined, 200)).map((b: { name: string }) => b.name);
    assert.ok(!names.includes('x'));
  });

  test('a test written with nulls and echoed read-only fields (item 2)', async () => {
    const client = goClient(get());
    const bucket = get().alice.bucketKey;
    // go-runscope's Test: no omitempty on environments, last_run and steps.
    const created = await client.data(
      'POST',
      `/buckets/${bucket}/tests`,
      { name: 'go test', description: 'from go', environments: null, last_run: null, steps: null },
      201,
    );
    assert.equal(created.name, 'go test');
    assert.equal(created.steps.length, 1, 'a new test has its default step');
    assert.equal(created.environments.length, 1);
    // The provider's update: name, description, default_environment_id; go-runscope echoes the read test.
    const echoed = {
      ...created,
      name: 'go test renamed',
      default_environment_id: '',
      environments: null,
      steps: null,
      last_run: null,
      schedules: [],
      version: '1.0',
      exported_at: 1700000000,
    };
    const updated = await client.data('PUT', `/buckets/${bucket}/tests/${created.id}`, echoed, 200);
    assert.equal(updated.name, 'go test renamed');
    assert.equal(updated.default_environment_id, created.default_environment_id, '"" leaves it unchanged');
    assert.deepEqual(
      updated.steps.map((s: { id: string }) => s.id),
      created.steps.map((s: { id: string }) => s.id),
      'steps: null leaves the steps unchanged',
    );
  });

  test('an environment written with nulls and the "no e-mail" default (items 2 and 8)', async () => {
    const client = goClient(get());
    const bucket = get().alice.bucketKey;
    const created = await client.data(
      'POST',
      `/buckets/${bucket}/tests`,
      { name: 'env test', description: '' },
      201,
    );
    const body = providerEnvironment('staging', { headers: null });
    const env = await client.data('POST', `/buckets/${bucket}/tests/${created.id}/environments`, body, 201);
    assertShape(
      env,
      {
        id: 'string',
        name: 'string',
        test_id: 'string',
        initial_variables: 'object',
        integrations: 'array',
        regions: 'array',
        remote_agents: 'array',
        emails: 'object',
        headers: 'object',
        version: 'string',
        exported_at: 'number',
      },
      'environment',
    );
    assert.deepEqual(env.initial_variables, {});
    assert.deepEqual(env.emails.recipients, []);

    const withHeaders = await client.data(
      'PUT',
      `/buckets/${bucket}/tests/${created.id}/environments/${env.id}`,
      {
        ...body,
        initial_variables: { base: 'https://example.org' },
        headers: { 'X-Team': ['qa'] },
        regions: null,
      },
      200,
    );
    assert.deepEqual(withHeaders.headers, { 'X-Team': ['qa'] });
    assert.deepEqual(withHeaders.initial_variables, { base: 'https://example.org' });
    // A test environment is also reachable under the bucket's environments (item 8).
    const viaBucket = await client.data('GET', `/buckets/${bucket}/environments/${env.id}`, undefined, 200);
    assert.equal(viaBucket.id, env.id);
    assert.equal(viaBucket.test_id, created.id);
    assert.deepEqual(viaBucket.headers, { 'X-Team': ['qa'] });
    const renamed = await client.data(
      'PUT',
      `/buckets/${bucket}/environments/${env.id}`,
      { ...body, name: 'staging 2' },
      200,
    );
    assert.equal(renamed.name, 'staging 2');
    assert.deepEqual(renamed.headers, { 'X-Team': ['qa'] }, 'headers: null leaves them unchanged');
    assert.equal((await client.send('DELETE', `/buckets/${bucket}/environments/${env.id}`)).status, 204);
    assert.equal(
      (await client.send('GET', `/buckets/${bucket}/tests/${created.id}/environments/${env.id}`)).status,
      404,
    );
  });

  test('schedules take the fractional interval form and answer the canonical one (item 9)', async () => {
    const client = goClient(get());
    const bucket = get().alice.bucketKey;
    const created = await client.data('POST', `/buckets/${bucket}/tests`, { name: 'scheduled' }, 201);
    const envId = created.default_environment_id;
    for (const [sent, canonical] of [
      ['1.0h', '1h'],
      ['5.0m', '5m'],
      ['1.0d', '1d'],
      ['15m', '15m'],
    ]) {
      const schedule = await client.data(
        'POST',
        `/buckets/${bucket}/tests/${created.id}/schedules`,
        { environment_id: envId, interval: sent, note: '' },
        201,
      );
      assertShape(
        schedule,
        {
          id: 'string',
          environment_id: 'string',
          interval: 'string',
          note: 'string',
          version: 'string',
          exported_at: 'number',
        },
        'schedule',
      );
      assert.equal(schedule.interval, canonical);
    }
    const [first] = await client.data(
      'GET',
      `/buckets/${bucket}/tests/${created.id}/schedules`,
      undefined,
      200,
    );
    const updated = await client.data(
      'PUT',
      `/buckets/${bucket}/tests/${created.id}/schedules/${first.id}`,
      { environment_id: envId, interval: '6.0h', note: 'nightly' },
      200,
    );
    assert.equal(updated.interval, '6h');
    assert.equal(updated.note, 'nightly');
    const refused = await client.send('POST', `/buckets/${bucket}/tests/${created.id}/schedules`, {
      environment_id: envId,
      interval: '2.5h',
    });
    assert.equal(refused.status, 400);
    assert.match(refused.json().error.message, /interval/);
  });
});
