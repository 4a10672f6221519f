import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { injectPage } from '../helpers/web.js';

const field = (html: string, name: string) => {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  assert.ok(match, `a ${name} field in ${html}`);
  return match[1]!;
};
const cookie = (response: { headers: Record<string, unknown> }, name: string) => {
  const header = response.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? (header as string[]) : [String(header)];
  const line = lines.find((c) => c.startsWith(`${name}=`));
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!);
};

/** People, roles and invitations of a team, and the roles' permissions enforced on the routes. */
await describeApi('teams: people, roles, invitations and permissions', (get) => {
  const teamOf = async (as = get().alice) =>
    (await get().call({ method: 'GET', url: '/account', as })).json().data.teams[0] as {
      id: string;
      name: string;
    };

  test('GET /teams/<id>/people lists the members in the original service shape', async () => {
    const h = get();
    const team = await teamOf();
    const people = await h.data('GET', `/teams/${team.id}/people`);
    assert.equal(people.length, 1);
    const [alice] = people;
    for (const key of ['id', 'uuid', 'name', 'email', 'created_at', 'last_login_at', 'group_name']) {
      assert.ok(key in alice, key);
    }
    assert.equal(alice.id, h.alice.accountId);
    assert.equal(alice.uuid, alice.id);
    assert.equal(alice.email, 'alice@example.com');
    assert.equal(alice.group_name, 'Owners');
    assert.equal(alice.owner, true);
    const noEmail = await h.tokenWith(['api:read']);
    const hidden = await h.call({ method: 'GET', url: `/teams/${team.id}/people`, as: noEmail });
    assert.equal(hidden.json().data[0].email, '', 'e-mail addresses need account:email');
    await h.expectError({ method: 'GET', url: `/teams/${team.id}/people`, as: h.bob }, 404, 'not_found');
  });

  test('roles: create, read, change, delete, with permissions from the fixed list', async () => {
    const h = get();
    const team = await teamOf();
    const base = `/teams/${team.id}/roles`;
    const role = await h.data('POST', base, { name: 'Readers', permissions: ['view'] });
    assert.deepEqual(Object.keys(role).sort(), ['created_at', 'id', 'name', 'permissions', 'uuid']);
    assert.equal(role.uuid, role.id);
    assert.deepEqual(await h.data('GET', `${base}/${role.uuid}`), role);
    const changed = await h.data('PUT', `${base}/${role.uuid}`, { permissions: ['view', 'edit_tests'] });
    assert.deepEqual(changed.permissions, ['view', 'edit_tests']);
    assert.equal(changed.name, 'Readers');
    assert.ok((await h.data('GET', base)).some((r: { uuid: string }) => r.uuid === role.uuid));
    await h.expectError(
      { method: 'POST', url: base, body: { name: 'Bad', permissions: ['fly'] } },
      400,
      'validation_failed',
      '/permissions/0',
    );
    const deleted = await h.call({ method: 'DELETE', url: `${base}/${role.uuid}` });
    assert.equal(deleted.statusCode, 204);
    await h.expectError({ method: 'GET', url: `${base}/${role.uuid}` }, 404, 'not_found');
  });

  test('an invitation e-mail (outbox) lets the invited person join; roles limit what they may do', async () => {
    const h = get();
    const team = await teamOf();
    const bucket = h.alice.bucketKey;
    const readers = await h.data('POST', `/teams/${team.id}/roles`, {
      name: 'Viewers',
      permissions: ['view'],
    });
    const invitation = await h.data('POST', `/teams/${team.id}/invitations`, { email: 'Bob@Example.com' });
    assert.equal(invitation.email, 'bob@example.com');
    assert.ok(
      (await h.data('GET', `/teams/${team.id}/invitations`)).some(
        (i: { id: string }) => i.id === invitation.id,
      ),
    );

    // No SMTP_URL: the mail waits in the outbox with its link.
    const outbox = await h.data('GET', '/account/outbox');
    const mail = outbox.find((m: { subject: string }) => m.subject === `Join ${team.name} on Vigil`);
    assert.ok(mail, JSON.stringify(outbox));
    const link = /http:\/\/vigil\.test\/invitations\/(\S+)/.exec(mail.text);
    assert.ok(link, mail.text);
    const token = link[1]!;

    // Before joining, alice's bucket does not exist for bob.
    await h.expectError({ method: 'GET', url: `/buckets/${bucket}/tests`, as: h.bob }, 404, 'not_found');
    // Signed out, the link goes through sign-in and back.
    const page = await h.app.inject({ method: 'GET', url: `/invitations/${token}` });
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, `/signin?next=${encodeURIComponent(`/invitations/${token}`)}`);
    const joined = await h.call({ method: 'POST', url: `/invitations/${token}/accept`, as: h.bob });
    assert.equal(joined.statusCode, 200, joined.body);
    assert.equal(joined.json().data.id, team.id);
    await h.expectError({ method: 'POST', url: `/invitations/${token}/accept`, as: h.bob }, 404, 'not_found');

    // A member without a role may edit tests but not manage the team.
    const created = await h.call({
      method: 'POST',
      url: `/buckets/${bucket}/tests`,
      as: h.bob,
      body: { name: 'by bob' },
    });
    assert.equal(created.statusCode, 201, created.body);
    await h.expectError(
      { method: 'POST', url: `/teams/${team.id}/roles`, as: h.bob, body: { name: 'x', permissions: [] } },
      403,
      'forbidden',
    );

    // With the Viewers role: reads only.
    const people = await h.data('PUT', `/teams/${team.id}/people/${h.bob.accountId}`, {
      role_id: readers.uuid,
    });
    assert.equal(people.group_name, 'Viewers');
    assert.deepEqual(people.permissions, ['view']);
    assert.equal(
      (await h.call({ method: 'GET', url: `/buckets/${bucket}/tests`, as: h.bob })).statusCode,
      200,
    );
    const testId = created.json().data.id;
    for (const request of [
      { method: 'POST' as const, url: `/buckets/${bucket}/tests`, body: { name: 'no' } },
      { method: 'PUT' as const, url: `/buckets/${bucket}/tests/${testId}`, body: { name: 'no' } },
      { method: 'POST' as const, url: `/buckets/${bucket}/environments`, body: { name: 'no' } },
      { method: 'PUT' as const, url: `/buckets/${bucket}`, body: { name: 'no' } },
      { method: 'DELETE' as const, url: `/buckets/${bucket}/tests/${testId}` },
      { method: 'POST' as const, url: `/buckets?name=no&team_uuid=${team.id}` },
    ]) {
      await h.expectError({ ...request, as: h.bob }, 403, 'forbidden');
    }
    // Environments but not tests:
    await h.data('PUT', `/teams/${team.id}/roles/${readers.uuid}`, {
      permissions: ['view', 'manage_environments'],
    });
    const env = await h.call({
      method: 'POST',
      url: `/buckets/${bucket}/environments`,
      as: h.bob,
      body: { name: 'ok' },
    });
    assert.equal(env.statusCode, 201, env.body);
    await h.expectError(
      { method: 'POST', url: `/buckets/${bucket}/tests`, as: h.bob, body: { name: 'no' } },
      403,
      'forbidden',
    );
    await h.expectError(
      { method: 'DELETE', url: `/teams/${team.id}/roles/${readers.uuid}` },
      409,
      'conflict',
    );

    // Removed, bob no longer sees the team's buckets; the owner cannot be removed.
    await h.expectError(
      { method: 'DELETE', url: `/teams/${team.id}/people/${h.alice.accountId}` },
      409,
      'conflict',
    );
    assert.equal(
      (await h.call({ method: 'DELETE', url: `/teams/${team.id}/people/${h.bob.accountId}` })).statusCode,
      204,
    );
    await h.expectError({ method: 'GET', url: `/buckets/${bucket}/tests`, as: h.bob }, 404, 'not_found');
  });

  test('invitations: revoked and unknown links are 404; only manage_team may invite', async () => {
    const h = get();
    const team = await teamOf();
    const invitation = await h.data('POST', `/teams/${team.id}/invitations`, { email: 'carol@example.com' });
    assert.equal(
      (await h.call({ method: 'DELETE', url: `/teams/${team.id}/invitations/${invitation.id}` })).statusCode,
      204,
    );
    await h.expectError(
      { method: 'DELETE', url: `/teams/${team.id}/invitations/${invitation.id}` },
      404,
      'not_found',
    );
    await h.expectError(
      { method: 'POST', url: '/invitations/vgl_inv_unknown/accept', as: h.bob },
      404,
      'not_found',
    );
    await h.expectError(
      { method: 'POST', url: `/teams/${team.id}/invitations`, body: { email: 'alice@example.com' } },
      409,
      'conflict',
    );
    await h.expectError(
      { method: 'POST', url: `/teams/${team.id}/invitations`, body: { email: 'not an address' } },
      400,
      'validation_failed',
      '/email',
    );
    const bobTeam = await teamOf(h.bob);
    await h.expectError(
      { method: 'POST', url: `/teams/${bobTeam.id}/invitations`, body: { email: 'x@example.com' } },
      404,
      'not_found',
    );
  });

  test('an invitation link signs a new person up and, once they confirm, joins them to the team', async () => {
    const h = get();
    const team = await teamOf();
    await h.data('POST', `/teams/${team.id}/invitations`, { email: 'dora@example.com' });
    const mail = (await h.data('GET', '/account/outbox')).find((m: { recipients: { email: string }[] }) =>
      m.recipients.some((r) => r.email === 'dora@example.com'),
    );
    const path = new URL(/http:\/\/vigil\.test\/invitations\/\S+/.exec(mail.text)![0]).pathname;

    const signin = await injectPage(h.app, {
      method: 'GET',
      url: `/signin?next=${encodeURIComponent(path)}`,
    });
    assert.match(signin.body, new RegExp(`href="/signup\\?next=${encodeURIComponent(path)}"`));
    const signup = await injectPage(h.app, {
      method: 'GET',
      url: `/signup?next=${encodeURIComponent(path)}`,
    });
    const csrf = field(signup.body, 'csrf_token');
    assert.equal(field(signup.body, 'next'), path);
    const created = await injectPage(h.app, {
      method: 'POST',
      url: '/signup',
      cookies: { vigil_csrf: csrf },
      fields: {
        csrf_token: csrf,
        next: path,
        name: 'Dora',
        email: 'dora@example.com',
        password: 'correct horse battery',
      },
    });
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, path);
    const session = cookie(created, 'vigil_session')!;
    const page = await injectPage(h.app, { method: 'GET', url: path, cookies: { vigil_session: session } });
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.body, /<h1>Join Alice&#39;s team\?<\/h1>/);
    assert.match(page.body, /Join the team<\/button>/);
    const joined = await injectPage(h.app, {
      method: 'POST',
      url: path,
      cookies: { vigil_session: session },
      fields: { csrf_token: field(page.body, 'csrf_token') },
    });
    assert.equal(joined.statusCode, 303, joined.body);
    const people = await h.data('GET', `/teams/${team.id}/people`);
    assert.ok(
      people.some(
        (p: { email: string; group_name: string }) =>
          p.email === 'dora@example.com' && p.group_name === 'Members',
      ),
    );
    const again = await injectPage(h.app, { method: 'GET', url: path, cookies: { vigil_session: session } });
    assert.equal(again.statusCode, 404, 'the link is used up');
  });
});
