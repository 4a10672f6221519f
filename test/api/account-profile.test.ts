import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';
import { injectPage } from '../helpers/web.js';

const PASSWORD = 'correct horse battery';

await describeApi('account profile: name and password', (get) => {
  /** A signed-in browser of the web pages: its session cookie. */
  async function signIn(email: string, password: string): Promise<Record<string, string> | null> {
    const { app } = get();
    const form = await injectPage(app, { method: 'GET', url: '/signin' });
    const csrf = /name="csrf_token" value="([^"]*)"/.exec(form.body)![1]!;
    const response = await injectPage(app, {
      method: 'POST',
      url: '/signin',
      cookies: { vigil_csrf: csrf },
      fields: { csrf_token: csrf, email, password },
    });
    if (response.statusCode !== 303) return null;
    const header = response.headers['set-cookie'];
    const lines = Array.isArray(header) ? header : [String(header)];
    const line = lines.find((c) => c.startsWith('vigil_session='))!;
    return { vigil_session: decodeURIComponent(line.slice('vigil_session='.length).split(';')[0]!) };
  }

  const profileStatus = async (cookies: Record<string, string>) =>
    (await injectPage(get().app, { method: 'GET', url: '/profile', cookies })).statusCode;

  test('PUT /account renames the account and answers it', async () => {
    const h = get();
    const before = await h.data('GET', '/account');
    const after = await h.data('PUT', '/account', {
      name: '  Alice Liddell  ',
      email: 'ignored@example.com',
    });
    assert.equal(after.name, 'Alice Liddell');
    assert.equal(after.email, 'alice@example.com', 'the e-mail address does not change');
    assert.deepEqual(after.teams, before.teams);
    assert.equal((await h.data('GET', '/account')).name, 'Alice Liddell');
    // Other accounts are untouched.
    const bob = await h.call({ method: 'GET', url: '/account', as: h.bob });
    assert.equal(bob.json().data.name, 'Bob');
  });

  test('PUT /account refuses blank, long, missing and mistyped names naming /name', async () => {
    const h = get();
    for (const body of [{ name: '   ' }, { name: '' }, { name: 'x'.repeat(256) }, {}, { name: 7 }]) {
      await h.expectError({ method: 'PUT', url: '/account', body }, 400, 'validation_failed', '/name');
    }
    assert.equal((await h.data('GET', '/account')).name, 'Alice Liddell');
  });

  test('profile routes need a personal token: an application token gets 403, none 401', async () => {
    const h = get();
    const oauth = await h.tokenWith([
      'api:read',
      'test:write',
      'bucket:write',
      'message:write',
      'account:email',
    ]);
    const rename = await h.call({ method: 'PUT', url: '/account', body: { name: 'Mallory' }, as: oauth });
    assert.equal(rename.statusCode, 403);
    assert.match(rename.json().error.message, /personal access token/);
    const change = await h.call({
      method: 'POST',
      url: '/account/password',
      body: { current_password: PASSWORD, new_password: 'an application choice' },
      as: oauth,
    });
    assert.equal(change.statusCode, 403);
    const anonymous = await h.call({ method: 'PUT', url: '/account', body: { name: 'X' }, as: null });
    assert.equal(anonymous.statusCode, 401);
    assert.equal((await h.data('GET', '/account')).name, 'Alice Liddell');
  });

  test('POST /account/password checks the current password and the sign-up rule', async () => {
    const h = get();
    const url = '/account/password';
    const wrong = await h.expectError(
      {
        method: 'POST',
        url,
        body: { current_password: 'not it at all', new_password: 'a brand new secret' },
      },
      400,
      'validation_failed',
      '/current_password',
    );
    assert.match(wrong.message, /current password/);
    await h.expectError(
      { method: 'POST', url, body: { current_password: PASSWORD, new_password: 'short' } },
      400,
      'validation_failed',
      '/new_password',
    );
    await h.expectError(
      { method: 'POST', url, body: { current_password: PASSWORD, new_password: 'x'.repeat(1025) } },
      400,
      'validation_failed',
      '/new_password',
    );
    await h.expectError(
      { method: 'POST', url, body: { new_password: 'a brand new secret' } },
      400,
      'validation_failed',
      '/current_password',
    );
    // Nothing changed: the old password still signs in.
    assert.ok(await h.server.services.accounts.checkPassword('alice@example.com', PASSWORD));
  });

  test('a new password: sign-in uses it, web sessions end, tokens stay valid', async () => {
    const h = get();
    const session = await signIn('alice@example.com', PASSWORD);
    assert.ok(session, 'signed in with the old password');
    assert.equal(await profileStatus(session), 200);
    const bobSession = (await signIn('bob@example.com', PASSWORD))!;

    const response = await h.call({
      method: 'POST',
      url: '/account/password',
      body: { current_password: PASSWORD, new_password: 'a brand new secret' },
    });
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(response.body, '');

    assert.equal(await profileStatus(session), 303, "alice's web session ended");
    assert.equal(await profileStatus(bobSession), 200, "bob's web session goes on");
    assert.equal(await signIn('alice@example.com', PASSWORD), null, 'the old password no longer works');
    assert.ok(await signIn('alice@example.com', 'a brand new secret'), 'the new one does');
    assert.equal((await h.call({ method: 'GET', url: '/account' })).statusCode, 200, 'the token still works');

    // And back, so the rest of the suite is unchanged.
    const back = await h.call({
      method: 'POST',
      url: '/account/password',
      body: { current_password: 'a brand new secret', new_password: PASSWORD },
    });
    assert.equal(back.statusCode, 204, back.body);
  });

  test('wrong current passwords are throttled like failed sign-ins (429 with Retry-After)', async () => {
    const h = get();
    const body = { current_password: 'guess', new_password: 'whatever it may be' };
    for (let i = 0; i < 5; i++) {
      const response = await h.call({ method: 'POST', url: '/account/password', body, as: h.bob });
      assert.equal(response.statusCode, 400, response.body);
    }
    const limited = await h.call({
      method: 'POST',
      url: '/account/password',
      body: { current_password: PASSWORD, new_password: 'even the right one waits' },
      as: h.bob,
    });
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json().error.code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.ok(await h.server.services.accounts.checkPassword('bob@example.com', PASSWORD), 'unchanged');
    // Another account is not held back by bob's failures.
    const alice = await h.call({
      method: 'POST',
      url: '/account/password',
      body: { current_password: PASSWORD, new_password: PASSWORD },
    });
    assert.equal(alice.statusCode, 204, alice.body);
  });
});
