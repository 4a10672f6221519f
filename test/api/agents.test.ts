import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/** A run outcome as the engine makes it: one passing request step. */
function outcome(result: 'pass' | 'fail' = 'pass') {
  const now = Date.now() / 1000;
  return {
    result,
    started_at: now - 1,
    finished_at: now,
    error: null,
    initial_variables: { a: '1' },
    variables: { a: '1', b: '2' },
    environment_script: null,
    requests: [
      {
        uuid: 'step-1',
        step_type: 'request',
        result,
        method: 'GET',
        url: 'http://10.0.0.7/health',
        note: '',
        error: null,
        assertions: [
          {
            result,
            source: 'response_status',
            property: '',
            comparison: 'equal_number',
            target_value: 200,
            actual_value: 200,
            error: null,
          },
        ],
        scripts: [],
        variables: [],
        response_status_code: 200,
        response_time_ms: 12.5,
        response_size_bytes: 2,
        timings: {
          dns_lookup_ms: 0,
          dial_ms: 1,
          tls_handshake_ms: 0,
          send_headers_ms: 0,
          send_body_ms: 0,
          wait_for_response_ms: 10,
          receive_response_ms: 1,
        },
        started_at: now - 1,
        finished_at: now,
        request: {
          method: 'GET',
          url: 'http://10.0.0.7/health',
          headers: { accept: ['*/*'] },
          body: '',
          body_encoding: 'text',
          size_bytes: 0,
          truncated: false,
        },
        response: {
          status: 200,
          reason: 'OK',
          headers: { 'content-type': ['application/json'] },
          body: '{}',
          body_encoding: 'text',
          size_bytes: 2,
          truncated: false,
        },
      },
    ],
    requests_executed: 1,
    assertions_defined: 1,
    assertions_passed: result === 'pass' ? 1 : 0,
    assertions_failed: result === 'pass' ? 0 : 1,
    scripts_defined: 0,
    scripts_passed: 0,
    scripts_failed: 0,
    variables_defined: 0,
    variables_passed: 0,
    variables_failed: 0,
  };
}

void describeApi('remote agents', (get) => {
  let teamId = '';
  let agent: { id: string; name: string; region: string; token: string };

  const teamOf = async (who: 'alice' | 'bob') => {
    const h = get();
    const r = await h.call({ method: 'GET', url: '/account', as: h[who] });
    return r.json().data.teams[0].id as string;
  };

  /** A test of alice's bucket whose default environment picks `settings` (remote_agents, regions). */
  const testWith = async (settings: Record<string, unknown>) => {
    const h = get();
    const b = `/buckets/${h.alice.bucketKey}`;
    const t = await h.data('POST', `${b}/tests`, { name: `Agent test ${Math.random()}` });
    await h.data('PUT', `${b}/tests/${t.id}/environments/${t.default_environment_id}`, settings, 200);
    return t as { id: string; default_environment_id: string };
  };

  const runNow = async (testId: string) => {
    const h = get();
    return (await h.data('POST', `/buckets/${h.alice.bucketKey}/tests/${testId}/runs`)).runs as any[];
  };

  const poll = (token: string, wait = 5) =>
    get().call({
      method: 'POST',
      url: `/agent/v1/jobs/next?wait=${wait}`,
      as: token,
      headers: { 'user-agent': 'vigil-agent/9.8.7', 'x-vigil-agent-hostname': 'probe-1' },
    });

  test('registers an agent and shows its token once, stored only as a hash', async () => {
    const h = get();
    // The harness's in-process worker is stopped so that runs stay queued where the tests look.
    await h.server.stopWorker();
    teamId = await teamOf('alice');
    const r = await h.call({
      method: 'POST',
      url: `/teams/${teamId}/agents`,
      body: { name: 'Office probe', region: 'office-berlin' },
    });
    assert.equal(r.statusCode, 201, r.body);
    const created = r.json().data;
    assert.match(created.token, /^vgl_agent_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.uuid, created.id);
    assert.equal(created.name, 'Office probe');
    assert.equal(created.region, 'office-berlin');
    assert.equal(created.status, 'offline');
    assert.equal(created.last_seen_at, null);
    agent = { id: created.id, name: created.name, region: created.region, token: created.token };

    const row = await h.store.db
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', agent.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.token_hash, createHash('sha256').update(agent.token).digest('hex'));
    assert.ok(!JSON.stringify(row).includes(agent.token));

    const one = await h.data('GET', `/teams/${teamId}/agents/${agent.id}`);
    assert.equal(one.token, undefined);
    assert.equal(one.name, 'Office probe');
    const list = await h.data('GET', `/teams/${teamId}/agents`);
    assert.deepEqual(
      list.map((a: any) => a.id),
      [agent.id],
    );
    assert.equal(list[0].token, undefined);

    const plain = await h.data('POST', `/teams/${teamId}/agents`, { name: 'Default region' });
    assert.equal(plain.region, 'remote');
  });

  test('refuses bad names and regions with the field named', async () => {
    const h = get();
    const url = `/teams/${teamId}/agents`;
    await h.expectError({ method: 'POST', url, body: { name: '' } }, 400, 'validation_failed', '/name');
    await h.expectError(
      { method: 'POST', url, body: { name: 'x'.repeat(256) } },
      400,
      'validation_failed',
      '/name',
    );
    await h.expectError({ method: 'POST', url, body: {} }, 400, 'validation_failed', '/name');
    await h.expectError(
      { method: 'POST', url, body: { name: 'ok', region: 'Bad_Region' } },
      400,
      'validation_failed',
      '/region',
    );
    await h.expectError(
      { method: 'POST', url, body: { name: 'ok', region: '-leading' } },
      400,
      'validation_failed',
      '/region',
    );
  });

  test('api:read lists agents but cannot register or delete one', async () => {
    const h = get();
    const reader = await h.tokenWith(['api:read']);
    const r = await h.call({ method: 'GET', url: `/teams/${teamId}/agents`, as: reader });
    assert.equal(r.statusCode, 200);
    await h.expectError(
      { method: 'POST', url: `/teams/${teamId}/agents`, body: { name: 'nope' }, as: reader },
      403,
      'forbidden',
    );
    await h.expectError(
      { method: 'DELETE', url: `/teams/${teamId}/agents/${agent.id}`, as: reader },
      403,
      'forbidden',
    );
  });

  test("another account's team and agents are not found", async () => {
    const h = get();
    const bobTeam = await teamOf('bob');
    await h.expectError({ method: 'GET', url: `/teams/${bobTeam}/agents` }, 404, 'not_found');
    await h.expectError(
      { method: 'POST', url: `/teams/${bobTeam}/agents`, body: { name: 'intruder' } },
      404,
      'not_found',
    );
    await h.expectError(
      { method: 'GET', url: `/teams/${teamId}/agents/${agent.id}`, as: h.bob },
      404,
      'not_found',
    );
    await h.expectError(
      { method: 'DELETE', url: `/teams/${teamId}/agents/${agent.id}`, as: h.bob },
      404,
      'not_found',
    );
    await h.expectError({ method: 'GET', url: `/teams/${teamId}/agents/${UNKNOWN_UUID}` }, 404, 'not_found');
    await h.expectError({ method: 'GET', url: `/teams/not-a-uuid/agents` }, 404, 'not_found');
  });

  test('agent tokens and user tokens do not cross over', async () => {
    const h = get();
    const asAgent = await h.call({ method: 'GET', url: '/account', as: agent.token });
    assert.equal(asAgent.statusCode, 401);
    assert.equal(asAgent.json().error.code, 'unauthorized');
    const asUser = await h.call({ method: 'POST', url: '/agent/v1/jobs/next?wait=0', as: h.alice });
    assert.equal(asUser.statusCode, 401);
    assert.equal(asUser.json().error.code, 'unauthorized');
    assert.match(String(asUser.headers['www-authenticate']), /^Bearer/);
    const anonymous = await h.call({ method: 'POST', url: '/agent/v1/jobs/next?wait=0', as: null });
    assert.equal(anonymous.statusCode, 401);
    // The protocol is not part of the user API's OpenAPI document.
    const doc = h.app.swagger() as { paths: Record<string, unknown> };
    assert.ok(Object.keys(doc.paths).every((p) => !p.startsWith('/agent/')));
    assert.ok(Object.keys(doc.paths).includes('/teams/{team_id}/agents'));
  });

  test('a run for the agent waits for it, runs there and is stored with the agent name', async () => {
    const h = get();
    const t = await testWith({ remote_agents: [{ uuid: agent.id, name: 'label in env' }] });
    const [started, ...more] = await runNow(t.id);
    assert.equal(more.length, 0);
    assert.equal(started.agent, agent.name);
    assert.equal(started.region, agent.region);

    const r = await poll(agent.token);
    assert.equal(r.statusCode, 200, r.body);
    const { run, definition } = r.json().data;
    assert.equal(run.id, started.test_run_id);
    assert.equal(run.agent, agent.name);
    assert.equal(definition.test.id, t.id);
    assert.equal(definition.agent, agent.name);
    assert.ok(Array.isArray(definition.test.steps));

    const resultUrl = `/buckets/${h.alice.bucketKey}/tests/${t.id}/results/${run.id}`;
    const working = await h.data('GET', resultUrl);
    assert.equal(working.result, 'working');

    const listed = await h.data('GET', `/teams/${teamId}/agents/${agent.id}`);
    assert.equal(listed.status, 'online');
    assert.equal(listed.version, '9.8.7');
    assert.equal(listed.hostname, 'probe-1');
    const announced = await h.store.db
      .selectFrom('workers')
      .selectAll()
      .where('id', '=', `agent:${agent.id}`)
      .executeTakeFirstOrThrow();
    assert.equal(announced.kind, 'agent');
    assert.equal(announced.agent_id, agent.id);
    assert.deepEqual(JSON.parse(announced.regions), [`agent-${agent.id}`]);

    const beat = await h.call({ method: 'POST', url: `/agent/v1/runs/${run.id}/heartbeat`, as: agent.token });
    assert.equal(beat.statusCode, 204, beat.body);

    // Hostile results are refused whole.
    const bad = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${run.id}/result`,
      as: agent.token,
      body: { outcome: { ...outcome(), result: 'bogus' } },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().error.field, '/outcome/result');
    const badStep = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${run.id}/result`,
      as: agent.token,
      body: { outcome: { ...outcome(), requests: [{ uuid: 'x' }] } },
    });
    assert.equal(badStep.statusCode, 400, badStep.body);

    const posted = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${run.id}/result`,
      as: agent.token,
      body: { outcome: outcome() },
    });
    assert.equal(posted.statusCode, 204, posted.body);
    const stored = await h.data('GET', resultUrl);
    assert.equal(stored.result, 'pass');
    assert.equal(stored.agent, agent.name);
    assert.equal(stored.region, agent.region);
    assert.equal(stored.requests.length, 1);
    assert.equal(stored.assertions_passed, 1);
    const step = await h.data('GET', `${resultUrl}/steps/step-1`);
    assert.equal(step.response.body, '{}');

    const again = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${run.id}/result`,
      as: agent.token,
      body: { outcome: outcome('fail') },
    });
    assert.equal(again.statusCode, 409);
    assert.equal((await h.data('GET', resultUrl)).result, 'pass');
  });

  test('hostile protocol input is refused with a 4xx, never a 5xx', async () => {
    const h = get();
    const good = outcome();
    const step = good.requests[0]!;
    const payloads: [string, string, string?][] = [
      ['array', '[]'],
      ['null', 'null'],
      ['no outcome', '{}'],
      ['huge number', '{"outcome":1e400}'],
      ['deep nesting', '{"outcome":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}'],
      ['NUL in a variable', JSON.stringify({ outcome: { ...good, variables: { a: 'x\u0000y' } } })],
      [
        'status code too large',
        JSON.stringify({ outcome: { ...good, requests: [{ ...step, response_status_code: 1e10 }] } }),
      ],
      ['counter too large', JSON.stringify({ outcome: { ...good, requests_executed: 1e12 } })],
      [
        'unknown comparison',
        JSON.stringify({
          outcome: {
            ...good,
            requests: [{ ...step, assertions: [{ ...step.assertions[0], comparison: 'rm -rf' }] }],
          },
        }),
      ],
      [
        'previous attempt garbage',
        JSON.stringify({ outcome: { ...good, previous_attempt: { result: 'pass' } } }),
      ],
      ['prototype pollution', '{"outcome":{"__proto__":{"polluted":true}}}'],
      ['text body', JSON.stringify({ outcome: good }), 'text/plain'],
    ];
    for (const url of [
      `/agent/v1/runs/${UNKNOWN_UUID}/result`,
      `/agent/v1/runs/${UNKNOWN_UUID}/subtests/record`,
    ]) {
      for (const [label, payload, type] of payloads) {
        const r = await h.app.inject({
          method: 'POST',
          url,
          headers: { authorization: `Bearer ${agent.token}`, 'content-type': type ?? 'application/json' },
          payload,
        });
        assert.ok(r.statusCode >= 400 && r.statusCode < 500, `${url} ${label} → ${r.statusCode} ${r.body}`);
        assert.equal(r.json().error.status, r.statusCode);
      }
    }
    for (const url of [
      '/agent/v1/jobs/next?wait=31',
      '/agent/v1/jobs/next?wait=-1',
      '/agent/v1/jobs/next?wait=abc',
    ]) {
      const r = await h.call({ method: 'POST', url, as: agent.token });
      assert.equal(r.statusCode, 400, `${url} → ${r.body}`);
    }
    const notMine = await h.call({
      method: 'POST',
      url: '/agent/v1/runs/not-a-uuid/heartbeat',
      as: agent.token,
    });
    assert.equal(notMine.statusCode, 409);
  });

  test('nothing queued: the long-poll answers 204', async () => {
    const r = await poll(agent.token, 0);
    assert.equal(r.statusCode, 204, r.body);
  });

  test('a canceled run answers 409 to its heartbeat and result', async () => {
    const h = get();
    const t = await testWith({ remote_agents: [{ uuid: agent.id }] });
    const [started] = await runNow(t.id);
    const r = await poll(agent.token);
    assert.equal(r.statusCode, 200, r.body);
    const runId = r.json().data.run.id;
    assert.equal(runId, started.test_run_id);
    const resultUrl = `/buckets/${h.alice.bucketKey}/tests/${t.id}/results/${runId}`;
    await h.data('DELETE', resultUrl, undefined, 200);
    const beat = await h.call({ method: 'POST', url: `/agent/v1/runs/${runId}/heartbeat`, as: agent.token });
    assert.equal(beat.statusCode, 409);
    assert.equal(beat.json().error.code, 'conflict');
    const posted = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${runId}/result`,
      as: agent.token,
      body: { outcome: outcome() },
    });
    assert.equal(posted.statusCode, 409);
    assert.equal((await h.data('GET', resultUrl)).result, 'canceled');
  });

  test('another agent cannot touch the run, nor take it', async () => {
    const h = get();
    const other = await h.data('POST', `/teams/${teamId}/agents`, { name: 'Other' });
    const t = await testWith({ remote_agents: [{ uuid: agent.id }] });
    await runNow(t.id);
    const stolen = await poll(other.token, 0);
    assert.equal(stolen.statusCode, 204);
    const r = await poll(agent.token);
    const runId = r.json().data.run.id;
    const beat = await h.call({ method: 'POST', url: `/agent/v1/runs/${runId}/heartbeat`, as: other.token });
    assert.equal(beat.statusCode, 409);
    const released = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${runId}/release`,
      as: agent.token,
    });
    assert.equal(released.statusCode, 204);
    // Given back once: it is queued again for the same agent.
    const again = await poll(agent.token);
    assert.equal(again.json().data.run.id, runId);
    await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${runId}/result`,
      as: agent.token,
      body: { outcome: outcome() },
    });
  });

  test('regions and agents: one run each; unknown agents alone are refused', async () => {
    const h = get();
    const both = await testWith({ regions: ['nowhere-1'], remote_agents: [{ uuid: agent.id }] });
    const runs = await runNow(both.id);
    assert.deepEqual(
      runs.map((r) => [r.region, r.agent]),
      [
        ['nowhere-1', null],
        [agent.region, agent.name],
      ],
    );
    for (const run of runs)
      await h.data(
        'DELETE',
        `/buckets/${h.alice.bucketKey}/tests/${both.id}/results/${run.test_run_id}`,
        undefined,
        200,
      );

    const bobTeam = await teamOf('bob');
    const bobAgent = await h.call({
      method: 'POST',
      url: `/teams/${bobTeam}/agents`,
      body: { name: "Bob's" },
      as: h.bob,
    });
    assert.equal(bobAgent.statusCode, 201);
    const foreign = await testWith({
      remote_agents: [{ uuid: bobAgent.json().data.id }, { uuid: UNKNOWN_UUID }],
    });
    await h.expectError(
      { method: 'POST', url: `/buckets/${h.alice.bucketKey}/tests/${foreign.id}/runs` },
      400,
      'validation_failed',
      'remote_agents',
    );
    const stolen = await poll(bobAgent.json().data.token, 0);
    assert.equal(stolen.statusCode, 204);
  });

  test('subtests of an agent run resolve on the server, within the team', async () => {
    const h = get();
    const child = await testWith({ initial_variables: { from_child: 'yes' } });
    const t = await testWith({ remote_agents: [{ uuid: agent.id }] });
    await runNow(t.id);
    const runId = (await poll(agent.token)).json().data.run.id;
    const url = `/agent/v1/runs/${runId}/subtests/resolve`;
    const resolved = await h.call({
      method: 'POST',
      url,
      as: agent.token,
      body: { test_uuid: child.id, variables: { p: '1' } },
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    const definition = resolved.json().data;
    assert.equal(definition.test.id, child.id);
    assert.equal(definition.environment.settings.initial_variables.from_child, 'yes');
    assert.equal(definition.agent, agent.name);
    const unknown = await h.call({
      method: 'POST',
      url,
      as: agent.token,
      body: { test_uuid: UNKNOWN_UUID, variables: {} },
    });
    assert.match(unknown.json().data.error, /test_uuid/);
    const recorded = await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${runId}/subtests/record`,
      as: agent.token,
      body: { test_uuid: child.id, variables: { p: '1' }, outcome: outcome() },
    });
    assert.equal(recorded.statusCode, 200, recorded.body);
    const childRun = await h.data(
      'GET',
      `/buckets/${h.alice.bucketKey}/tests/${child.id}/results/${recorded.json().data.run_id}`,
    );
    assert.equal(childRun.source, 'subtest');
    assert.equal(childRun.agent, agent.name);
    await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${runId}/result`,
      as: agent.token,
      body: { outcome: outcome() },
    });
  });

  test('a worker of every region leaves runs meant for an agent alone', async () => {
    const h = get();
    const t = await testWith({ remote_agents: [{ uuid: agent.id }] });
    const [started] = await runNow(t.id);
    const { queue } = h.server.runtime;
    // Drain what a worker of every region may take; the agent's run is never among it.
    const taken: string[] = [];
    for (let job = await queue.claim('every-region-probe', ['run-test'], null, 5_000); job;) {
      taken.push((job.payload as { runId: string }).runId);
      await queue.complete(job.id, 'every-region-probe');
      job = await queue.claim('every-region-probe', ['run-test'], null, 5_000);
    }
    assert.ok(
      !taken.includes(started.test_run_id),
      'a worker of every region took a run meant for a remote agent',
    );
    const polled = await poll(agent.token, 0);
    assert.equal(polled.statusCode, 200, polled.body);
    assert.equal(polled.json().data.run.id, started.test_run_id);
    // The server tells the agent how often to heartbeat and the limits a server worker applies.
    assert.equal(polled.json().data.heartbeat_seconds, h.server.runtime.registry.liveness.heartbeatMs / 1000);
    assert.deepEqual(polled.json().data.limits, {
      run_timeout_seconds: 900,
      response_body_limit: 1024 * 1024,
      check_timeout_ms: 1000,
    });
    await h.call({
      method: 'POST',
      url: `/agent/v1/runs/${started.test_run_id}/result`,
      as: agent.token,
      body: { outcome: outcome() },
    });
  });

  test('a deleted agent is refused at once', async () => {
    const h = get();
    const r = await h.call({ method: 'DELETE', url: `/teams/${teamId}/agents/${agent.id}` });
    assert.equal(r.statusCode, 204);
    const refused = await poll(agent.token, 0);
    assert.equal(refused.statusCode, 401);
    await h.expectError({ method: 'GET', url: `/teams/${teamId}/agents/${agent.id}` }, 404, 'not_found');
    await h.expectError({ method: 'DELETE', url: `/teams/${teamId}/agents/${agent.id}` }, 404, 'not_found');
    const list = await h.data('GET', `/teams/${teamId}/agents`);
    assert.ok(list.every((a: any) => a.id !== agent.id));
  });
});
