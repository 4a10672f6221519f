import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { goClient, providerEnvironment, providerStep } from './client.js';

/** What the provider keeps of an environment in its state, from a write answer or a read. */
const envState = (env: any) => ({
  id: env.id,
  name: env.name,
  script: env.script,
  initial_variables: env.initial_variables,
  regions: env.regions,
  retry_on_failure: env.retry_on_failure,
  verify_ssl: env.verify_ssl,
  webhooks: env.webhooks,
  parent_environment_id: env.parent_environment_id,
});

const stepState = (step: any) => ({
  id: step.id,
  step_type: step.step_type,
  method: step.method,
  url: step.url,
  headers: step.headers,
  assertions: step.assertions,
  variables: step.variables,
  body: step.body,
  note: step.note,
});

/**
 * A Terraform user's apply, refresh, change and destroy of every resource of the runscope provider,
 * with the requests the provider makes, against API_COMPAT=runscope.
 */
await describeApi(
  'compat: the Terraform create → read → update → delete cycle (API_COMPAT=runscope)',
  (get) => {
    test('bucket, test, step, test environment, shared environment and schedule', async () => {
      const h = get();
      const { data, send } = goClient(h);
      const team = (await data('GET', '/account', undefined, 200)).teams[0].id;

      // runscope_bucket
      const bucket = await data(
        'POST',
        `/buckets?name=${encodeURIComponent('tf: main')}&team_uuid=${team}`,
        undefined,
        201,
      );
      const readBucket = await data('GET', `/buckets/${bucket.key}`, undefined, 200);
      assert.deepEqual(
        {
          key: readBucket.key,
          name: readBucket.name,
          team: readBucket.team,
          trigger_url: readBucket.trigger_url,
        },
        { key: bucket.key, name: 'tf: main', team: bucket.team, trigger_url: bucket.trigger_url },
      );
      const b = `/buckets/${bucket.key}`;

      // runscope_test
      const created = await data(
        'POST',
        `${b}/tests`,
        { name: 'api-test', description: 'checks the api' },
        201,
      );
      const t = `${b}/tests/${created.id}`;
      let read = await data('GET', t, undefined, 200);
      assert.equal(read.id, created.id);
      assert.equal(read.name, 'api-test');
      assert.equal(read.description, 'checks the api');
      assert.equal(read.trigger_url, created.trigger_url);

      // runscope_environment (test): create, refresh, change, refresh
      const env = await data('POST', `${t}/environments`, providerEnvironment('staging'), 201);
      assert.deepEqual(
        envState(await data('GET', `${t}/environments/${env.id}`, undefined, 200)),
        envState(env),
      );
      const envChanged = await data(
        'PUT',
        `${t}/environments/${env.id}`,
        providerEnvironment('staging', {
          initial_variables: { base_url: 'https://staging.example.org' },
          regions: ['us1', 'eu1'],
          retry_on_failure: true,
          webhooks: ['https://hooks.example.org/runscope'],
        }),
        200,
      );
      assert.equal(envChanged.id, env.id);
      assert.deepEqual(envChanged.initial_variables, { base_url: 'https://staging.example.org' });
      assert.deepEqual(envChanged.regions, ['us1', 'eu1']);
      assert.deepEqual(
        envState(await data('GET', `${t}/environments/${env.id}`, undefined, 200)),
        envState(envChanged),
      );

      // runscope_environment (shared)
      const shared = await data('POST', `${b}/environments`, providerEnvironment('shared'), 201);
      assert.equal(shared.test_id, null);
      assert.deepEqual(
        envState(await data('GET', `${b}/environments/${shared.id}`, undefined, 200)),
        envState(shared),
      );
      const sharedChanged = await data(
        'PUT',
        `${b}/environments/${shared.id}`,
        providerEnvironment('shared renamed', { script: 'variables.set("x", "1");' }),
        200,
      );
      assert.equal(sharedChanged.name, 'shared renamed');
      assert.deepEqual(
        envState(await data('GET', `${b}/environments/${shared.id}`, undefined, 200)),
        envState(sharedChanged),
      );

      // runscope_test update: the provider sends name, description and default_environment_id.
      const updated = await data(
        'PUT',
        t,
        { name: 'api-test v2', description: 'still checks the api', default_environment_id: env.id },
        200,
      );
      read = await data('GET', t, undefined, 200);
      assert.equal(read.name, 'api-test v2');
      assert.equal(read.default_environment_id, env.id);
      assert.deepEqual(read.steps, updated.steps);

      // runscope_step: POST answers the step list; the provider takes the last element.
      const stepBody = providerStep('{{base_url}}/health');
      const list = await data('POST', `${t}/steps`, stepBody, 201);
      assert.ok(Array.isArray(list));
      const step = list[list.length - 1];
      const s = `${t}/steps/${step.id}`;
      assert.deepEqual(stepState(await data('GET', s, undefined, 200)), stepState(step));
      const stepChanged = await data(
        'PUT',
        s,
        { ...stepBody, id: step.id, url: '{{base_url}}/ready', note: 'ready' },
        200,
      );
      assert.equal(stepChanged.id, step.id);
      assert.equal(stepChanged.url, '{{base_url}}/ready');
      assert.deepEqual(stepState(await data('GET', s, undefined, 200)), stepState(stepChanged));

      // runscope_schedule
      const schedule = await data(
        'POST',
        `${t}/schedules`,
        { environment_id: env.id, interval: '1h', note: 'hourly' },
        201,
      );
      const sc = `${t}/schedules/${schedule.id}`;
      const readSchedule = await data('GET', sc, undefined, 200);
      assert.deepEqual(
        [
          readSchedule.id,
          readSchedule.environment_id,
          readSchedule.interval,
          readSchedule.note,
          readSchedule.exported_at,
        ],
        [schedule.id, env.id, '1h', 'hourly', schedule.exported_at],
      );
      const scheduleChanged = await data(
        'PUT',
        sc,
        { environment_id: shared.id, interval: '1.0d', note: 'daily' },
        200,
      );
      assert.equal(scheduleChanged.interval, '1d');
      const reread = await data('GET', sc, undefined, 200);
      assert.deepEqual(
        [reread.id, reread.environment_id, reread.interval, reread.note],
        [schedule.id, shared.id, '1d', 'daily'],
      );

      // terraform destroy, in dependency order; each resource reads 404 afterwards.
      for (const [url, gone] of [
        [sc, sc],
        [s, s],
        [`${b}/environments/${shared.id}`, `${b}/environments/${shared.id}`],
      ] as const) {
        const deleted = await send('DELETE', url);
        assert.equal(deleted.status, 204, deleted.body);
        assert.equal(deleted.body, '');
        assert.equal((await send('GET', gone)).status, 404);
      }
      // The test's default environment goes with the test.
      assert.equal((await send('DELETE', t)).status, 204);
      assert.equal((await send('GET', `${t}/environments/${env.id}`)).status, 404);
      assert.equal((await send('GET', t)).status, 404);
      assert.equal((await send('DELETE', b)).status, 204);
      assert.equal((await send('GET', b)).status, 404);
    });
  },
  { env: { API_COMPAT: 'runscope' } },
);
