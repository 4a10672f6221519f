import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { SCOPES, type Scope } from '../../src/domain/scopes.js';
import { describeApi } from '../helpers/api.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface Operation {
  method: Method;
  path: string;
  scope: Scope | undefined;
  personalToken: boolean;
}

/** Operations anyone may call: trigger URLs carry their own secret, the rest are public by nature. */
const PUBLIC = [
  'GET /health',
  'GET /errors',
  'GET /radar/{trigger_id}/trigger',
  'POST /radar/{trigger_id}/trigger',
  'GET /radar/bucket/{trigger_id}/trigger',
  'POST /radar/bucket/{trigger_id}/trigger',
  'POST /radar/{trigger_id}/batch',
  'GET /public/messages/{token}',
  'GET /status/{slug}',
];

/** Operations that manage credentials: personal tokens only. */
const PERSONAL = [
  'POST /applications',
  'GET /applications',
  'GET /applications/{client_id}',
  'POST /applications/{client_id}/secret',
  'DELETE /applications/{client_id}',
  'GET /account/tokens',
  'POST /account/tokens',
  'DELETE /account/tokens/{token_id}',
  'PUT /account',
  'POST /account/password',
  'POST /invitations/{token}/accept',
];

/** Every operation of the OpenAPI document with the scope its `x-vigil-scope` names. */
function operationsOf(doc: { paths: Record<string, Record<string, Record<string, unknown>>> }): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase() as Method,
      path,
      scope: operation['x-vigil-scope'] as Scope | undefined,
      personalToken: operation['x-vigil-personal-token'] === true,
    })),
  );
}

const label = (op: { method: string; path: string }) => `${op.method} ${op.path}`;

await describeApi('every documented operation × every scope', (get) => {
  test('the OpenAPI document names the scope of every protected operation', async () => {
    const doc = (await get().call({ method: 'GET', url: '/openapi.json', as: null })).json();
    const operations = operationsOf(doc);
    assert.ok(operations.length > 50, `${operations.length} operations`);
    assert.deepEqual(
      operations
        .filter((op) => op.scope === undefined)
        .map(label)
        .sort(),
      [...PUBLIC].sort(),
    );
    for (const op of operations) {
      if (op.scope !== undefined) assert.ok(SCOPES.includes(op.scope), `${label(op)}: ${op.scope}`);
    }
    assert.deepEqual(
      operations
        .filter((op) => op.personalToken)
        .map(label)
        .sort(),
      [...PERSONAL].sort(),
    );
  });

  test('a token gets 403 exactly when it lacks the scope, or is an OAuth token on a personal route', async (t) => {
    const h = get();
    const doc = (await h.call({ method: 'GET', url: '/openapi.json', as: null })).json();
    const operations = operationsOf(doc);
    t.diagnostic(
      `Public, not checked here: ${operations
        .filter((op) => op.scope === undefined)
        .map(label)
        .join(', ')}`,
    );

    // Reads run against real ids, so their handlers answer; writes get unknown ids and no body, so
    // they stop at 400 or 404 once authorised and the fixture stays as it is.
    const bucket = await h.data('POST', '/buckets', { name: 'Scope table' });
    const base = `/buckets/${bucket.key}`;
    const created = await h.data('POST', `${base}/tests`, { name: 'Scoped' });
    const shared = await h.data('POST', `${base}/environments`, { name: 'Shared' });
    const schedule = await h.data('POST', `${base}/tests/${created.id}/schedules`, { interval: '1d' });
    const maintenanceWindow = await h.data('POST', `${base}/maintenance_windows`, {
      mode: 'mute',
      starts_at: 1,
      ends_at: 2,
    });
    const [message] = await h.data('POST', `${base}/messages`, {
      request: { method: 'GET', url: 'https://api.example.com/items' },
      response: { status: 200 },
    });
    const application = await h.data('POST', '/applications', {
      name: 'Scope table',
      website_url: 'https://example.com',
      callback_url: 'https://example.com/cb',
    });
    const view = await h.data('POST', `${base}/views`, { name: 'Scoped', stream: 'messages' });
    const tokens = await h.data('GET', '/account/tokens');
    const teamId = (await h.data('GET', '/account')).teams[0].id as string;
    const agent = await h.data('POST', `/teams/${teamId}/agents`, { name: 'Scope table' });
    const integration = await h.data('POST', `/teams/${teamId}/integrations`, {
      integration_type: 'webhook',
      config: { url: 'https://hooks.example.com/scopes' },
    });
    const role = await h.data('POST', `/teams/${teamId}/roles`, { name: 'Scoped', permissions: ['view'] });
    const statusPage = await h.data('POST', `${base}/status-pages`, {
      slug: `scopes-${h.dialect}`,
      title: 'Scoped',
      groups: [{ name: 'All', tests: [{ test_id: created.id, name: 'Scoped' }] }],
    });
    const real: Record<string, string> = {
      team_id: teamId,
      agent_id: agent.id,
      integration_id: integration.id,
      role_id: role.uuid,
      bucket_key: bucket.key,
      test_id: created.id,
      step_id: created.steps[0].id,
      environment_id: shared.id,
      schedule_id: schedule.id,
      window_id: maintenanceWindow.id,
      message_uuid: message.uuid,
      view_id: view.id,
      status_page_id: statusPage.id,
      slug: statusPage.slug,
      // No run is started: it would go on in the background after the test.
      test_run_id: randomUUID(),
      client_id: application.client_id,
      token_id: tokens[0].id,
    };
    const urlOf = (op: Operation) =>
      op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
        if (op.method === 'GET') {
          if (name === 'environment_id' && op.path.includes('{test_id}'))
            return created.default_environment_id;
          assert.ok(real[name], `a fixture id for {${name}}`);
          return real[name];
        }
        return name === 'bucket_key' ? 'zzzzzzzzzzzz' : randomUUID();
      });

    const callers: { name: string; token: string; scopes: readonly Scope[]; personal: boolean }[] = [];
    for (const scope of SCOPES) {
      const { token } = await h.server.services.tokens.issue(h.store.db, {
        accountId: h.alice.accountId,
        clientId: null,
        scopes: [scope],
        kind: 'personal',
      });
      callers.push({ name: scope, token, scopes: [scope], personal: true });
    }
    callers.push({ name: 'oauth *', token: await h.tokenWith([...SCOPES]), scopes: SCOPES, personal: false });

    t.diagnostic(
      `route × token → status (✓ allowed, ✗ 403); columns: ${callers.map((c) => c.name).join(' | ')}`,
    );
    let checked = 0;
    for (const op of operations) {
      const { scope } = op;
      if (scope === undefined) continue;
      const url = urlOf(op);
      const cells: string[] = [];
      for (const caller of callers) {
        const response = await h.call({ method: op.method, url, as: caller.token });
        const where: string = `${op.method} ${url} as ${caller.name} (needs ${scope})`;
        const lacksScope = !caller.scopes.includes(scope);
        const refused = lacksScope || (op.personalToken && !caller.personal);
        if (refused) {
          assert.equal(response.statusCode, 403, `${where}: ${response.body}`);
          const error = response.json().error;
          assert.equal(error.code, 'forbidden');
          assert.match(error.message, lacksScope ? new RegExp(scope) : /personal access token/, where);
        } else {
          assert.ok(![401, 403].includes(response.statusCode), `${where}: ${response.body}`);
          assert.ok(response.statusCode < 500, `${where}: ${response.body}`);
        }
        cells.push(`${refused ? '✗' : '✓'} ${response.statusCode}`);
        checked += 1;
      }
      const flags = op.personalToken ? ', personal' : '';
      t.diagnostic(`${label(op)} [${scope}${flags}]: ${cells.join(' | ')}`);
    }
    assert.equal(checked, operations.filter((op) => op.scope !== undefined).length * callers.length);

    const anonymous = await h.call({ method: 'GET', url: '/applications', as: null });
    assert.equal(anonymous.statusCode, 401);
  });
});
