import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { assertShape, goClient } from './client.js';

/** Lists, paths, trigger parameters and errors as the original service's clients use them. */
await describeApi('compat: lists, legacy paths, trigger parameters and errors', (get) => {
  test('GET …/tests is newest first, pages with count/offset and breaks ties by id (item 11)', async () => {
    const h = get();
    const client = goClient(h);
    const bucket = (await client.data('POST', '/buckets?name=paging', undefined, 201)).key;
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three', 'four']) {
      ids.push((await client.data('POST', `/buckets/${bucket}/tests`, { name }, 201)).id);
    }
    // Two tests created in the same second: the id breaks the tie, the same way on every page.
    const at = [1_700_000_000, 1_700_000_100, 1_700_000_100, 1_700_000_200];
    for (const [i, id] of ids.entries()) {
      await h.store.db.updateTable('tests').set({ created_at: at[i]! }).where('id', '=', id).execute();
    }
    const all = (await client.data('GET', `/buckets/${bucket}/tests`, undefined, 200)).map(
      (t: { id: string }) => t.id,
    );
    const tied = [ids[1]!, ids[2]!].sort().reverse();
    assert.deepEqual(all, [ids[3], ...tied, ids[0]]);
    // go-runscope pages with ?count=10; a script walks the pages with offset.
    const paged: string[] = [];
    for (let offset = 0; offset < 4; offset += 2) {
      const page = await client.data(
        'GET',
        `/buckets/${bucket}/tests?count=2&offset=${offset}`,
        undefined,
        200,
      );
      assert.equal(page.length, 2);
      paged.push(...page.map((t: { id: string }) => t.id));
    }
    assert.deepEqual(paged, all);
  });

  test('a doubled leading slash reaches the same route (item 12)', async () => {
    const client = goClient(get());
    const key = get().alice.bucketKey;
    const bucket = await client.data('GET', `//buckets/${key}`, undefined, 200);
    assert.equal(bucket.key, key);
    assert.ok(Array.isArray(await client.data('GET', `//buckets/${key}/tests?count=10`, undefined, 200)));
  });

  test('trigger parameters runscope_* steer the run; legacy url and results alias (items 12, 13)', async () => {
    const h = get();
    const client = goClient(h);
    const key = h.alice.bucketKey;
    const created = await client.data('POST', `/buckets/${key}/tests`, { name: 'triggered' }, 201);
    const other = await client.data(
      'POST',
      `/buckets/${key}/tests/${created.id}/environments`,
      { name: 'other', initial_variables: { from: 'env' } },
      201,
    );
    const triggerPath = new URL(created.trigger_url).pathname;
    const response = await h.app.inject({
      method: 'GET',
      url: `${triggerPath}?runscope_environment=${other.id}&runscope_region=eu1&greeting=hi`,
    });
    assert.equal(response.statusCode, 201, response.body);
    const [run] = response.json().data.runs;
    assertShape(
      run,
      {
        test_run_id: 'string',
        test_run_url: 'string',
        url: 'string',
        test_url: 'string',
        variables: 'object',
      },
      'run',
    );
    assert.equal(run.environment_id, other.id);
    assert.equal(run.region, 'eu1');
    assert.deepEqual(run.variables, { greeting: 'hi' });
    assert.equal(run.url, run.test_run_url);

    // A form POST as CI scripts send it, with the notification URL checked like vigil_notification_url.
    const bad = await h.app.inject({
      method: 'POST',
      url: triggerPath,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'runscope_notification_url=not-a-url',
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.match(bad.json().error.message, /notification_url/);
    const agent = await h.app.inject({ method: 'GET', url: `${triggerPath}?runscope_agent=no-such-agent` });
    assert.equal(agent.statusCode, 400, agent.body);
    assert.match(agent.json().error.message, /agent/);

    // The legacy results path of the Jenkins plugin.
    const legacy = `/buckets/${key}/radar/${created.id}/results`;
    const list = await client.data('GET', legacy, undefined, 200);
    assert.ok(list.some((r: { test_run_id: string }) => r.test_run_id === run.test_run_id));
    const one = await client.data('GET', `${legacy}/${run.test_run_id}`, undefined, 200);
    assert.equal(one.test_run_id, run.test_run_id);
    assert.equal(
      (await client.send('GET', `/buckets/${key}/radar/${created.id}/results/latest`)).status,
      200,
    );
    assert.equal(
      (await client.send('GET', `/buckets/${h.bob.bucketKey}/radar/${created.id}/results`)).status,
      404,
    );
  });

  test('errors keep the envelope with a top-level status and a string error.message (item 14)', async () => {
    const h = get();
    const client = goClient(h);
    for (const [response, status] of [
      [
        await client.send('GET', `/buckets/${h.alice.bucketKey}/tests/00000000-0000-4000-8000-000000000000`),
        404,
      ],
      [await client.send('POST', `/buckets/${h.alice.bucketKey}/tests`, { name: '' }), 400],
      [
        await h.app.inject({ method: 'GET', url: '/buckets', headers: { authorization: 'Bearer nope' } }),
        401,
      ],
    ] as const) {
      const r = response as { statusCode?: number; status?: number; json(): any };
      const body = r.json();
      assert.equal(r.statusCode ?? r.status, status);
      assert.equal(body.status, status);
      assert.equal(body.data, null);
      assert.deepEqual(body.meta, { status: 'error' });
      assert.equal(body.error.status, status);
      assert.equal(typeof body.error.message, 'string');
      assert.ok(body.error.message.length > 0);
    }
  });

  test('integrations carry id, uuid, type and description; an environment names one by id (item 4)', async () => {
    const h = get();
    const client = goClient(h);
    const team = (await client.data('GET', '/account', undefined, 200)).teams[0].id;
    const created = await client.data(
      'POST',
      `/teams/${team}/integrations`,
      {
        integration_type: 'slack',
        description: 'Ops channel',
        config: { url: 'https://hooks.slack.com/services/T/B/x' },
      },
      201,
    );
    const [item] = (await client.data('GET', `/teams/${team}/integrations`, undefined, 200)).filter(
      (i: { id: string }) => i.id === created.id,
    );
    assertShape(item, { id: 'string', uuid: 'string', type: 'string', description: 'string' }, 'integration');
    assert.equal(item.uuid, item.id);
    assert.equal(item.type, 'slack');
    // The sport24ru provider sends the id alone; the answer echoes the type and description.
    const env = await client.data(
      'POST',
      `/buckets/${h.alice.bucketKey}/environments`,
      { name: 'with slack', integrations: [{ id: created.id, integration_type: '', description: '' }] },
      201,
    );
    assert.deepEqual(env.integrations, [
      { id: created.id, integration_type: 'slack', description: 'Ops channel' },
    ]);
  });

  test('GET /regions answers data.regions with the original fields (item 5)', async () => {
    const regions = await goClient(get()).data('GET', '/regions', undefined, 200);
    assert.ok(Array.isArray(regions.regions));
    assert.ok(regions.regions.length > 0, 'the in-process worker announces its regions');
    for (const region of regions.regions) {
      assertShape(
        region,
        { region_code: 'string', location: 'string', service_provider: 'string', hostname: 'string' },
        'region',
      );
    }
  });

  test('metrics answer the metrics object at the top level and in data (item 7)', async () => {
    const h = get();
    const client = goClient(h);
    const created = await client.data(
      'POST',
      `/buckets/${h.alice.bucketKey}/tests`,
      { name: 'measured' },
      201,
    );
    const response = await client.send(
      'GET',
      `/buckets/${h.alice.bucketKey}/tests/${created.id}/metrics?region=all&timeframe=month&environment_uuid=all`,
    );
    assert.equal(response.status, 200, response.body);
    const body = response.json();
    for (const metrics of [body, body.data]) {
      assertShape(
        metrics,
        {
          response_times: 'array',
          this_time_period: 'object',
          change_from_last_period: 'object',
          region: 'string',
          timeframe: 'string',
          environment_uuid: 'string',
        },
        'metrics',
      );
      assert.equal(metrics.region, 'all');
      assert.equal(metrics.timeframe, 'month');
      assert.equal(metrics.environment_uuid, 'all');
    }
    assert.deepEqual(body.meta, { status: 'success' });
    assert.equal(body.error, null);
  });
});
