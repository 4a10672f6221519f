import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

/** What the dashboard asks for. */
const EVERY_SCOPE = 'api:read test:write bucket:write message:write account:email';
import { injectPage } from '../helpers/web.js';

const CLIENT_ID = 'vigil-dashboard';
const CALLBACK = `${PUBLIC_URL}/app/`;
const PASSWORD = 'correct horse battery';

const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const authorizeUrl = (fields: Record<string, string | undefined>): string =>
  `/signin/oauth/authorize?${new URLSearchParams(
    Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )}`;

function cookieValue(response: LightMyRequestResponse, name: string): string | undefined {
  const header = response.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const line = lines.find((c) => c.startsWith(`${name}=`));
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!);
}

await describeApi('the dashboard OAuth client (vigil-dashboard)', (get) => {
  const inject = (options: Parameters<typeof injectPage>[1]) => injectPage(get().app, options);

  /** Signs in through the web pages and answers the session cookie. */
  async function signIn(email: string): Promise<Record<string, string>> {
    const form = await inject({ method: 'GET', url: '/signin' });
    const csrf = /name="csrf_token" value="([^"]*)"/.exec(form.body)![1]!;
    const response = await inject({
      method: 'POST',
      url: '/signin',
      cookies: { vigil_csrf: csrf },
      fields: { csrf_token: csrf, email, password: PASSWORD },
    });
    assert.equal(response.statusCode, 303, response.body);
    return { vigil_session: cookieValue(response, 'vigil_session')! };
  }

  /** The authorize request the SPA makes; answers the response and the verifier. */
  async function authorize(
    cookies: Record<string, string> | undefined,
    fields: Record<string, string | undefined> = {},
  ) {
    const pkce = pkcePair();
    const response = await inject({
      method: 'GET',
      url: authorizeUrl({
        client_id: CLIENT_ID,
        redirect_uri: CALLBACK,
        response_type: 'code',
        scope: EVERY_SCOPE,
        state: 'spa-state',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        ...fields,
      }),
      ...(cookies && { cookies }),
    });
    return { response, verifier: pkce.verifier };
  }

  /** A code for alice (signed in) and its verifier. */
  async function codeFor(cookies: Record<string, string>): Promise<{ code: string; verifier: string }> {
    const { response, verifier } = await authorize(cookies);
    assert.equal(response.statusCode, 303, response.body);
    const location = new URL(response.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, CALLBACK);
    assert.equal(location.searchParams.get('state'), 'spa-state');
    const code = location.searchParams.get('code');
    assert.ok(code);
    return { code, verifier };
  }

  const postForm = (url: string, fields: Record<string, string>) =>
    get().app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });

  const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
    postForm('/signin/oauth/access_token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: CLIENT_ID,
      code_verifier: verifier,
      ...extra,
    });

  async function dashboardRows(accountId: string) {
    return get()
      .store.db.selectFrom('client_applications')
      .select(['client_id', 'name', 'callback_url', 'is_public', 'builtin'])
      .where('account_id', '=', accountId)
      .where('builtin', '=', 'dashboard')
      .execute();
  }

  test('a dashboard token with fewer scopes stays within them: no credential routes', async () => {
    const h = get();
    const cookies = await signIn('alice@example.com');
    const { response: authorized, verifier } = await authorize(cookies, { scope: 'api:read' });
    assert.equal(authorized.statusCode, 303, authorized.body);
    const code = new URL(authorized.headers.location as string).searchParams.get('code')!;
    const token = (await exchange(code, verifier)).json().access_token as string;
    assert.equal((await h.call({ method: 'GET', url: '/account', as: token })).statusCode, 200);
    const minted = await h.call({
      method: 'POST',
      url: '/applications',
      as: token,
      body: {
        name: 'Escalation',
        website_url: 'https://example.com',
        callback_url: 'https://example.com/cb',
      },
    });
    assert.equal(
      minted.statusCode,
      403,
      'a read-only token may not create an application (and its owner token)',
    );
    const renamed = await h.call({ method: 'PUT', url: '/account', as: token, body: { name: 'Mallory' } });
    assert.equal(renamed.statusCode, 403);
    const listed = await h.call({ method: 'GET', url: '/account/tokens', as: token });
    assert.equal(listed.statusCode, 403);
  });

  test('the full flow: no consent page, a code at /app/, a dashboard token that acts as personal', async () => {
    const h = get();
    const cookies = await signIn('alice@example.com');
    const { code, verifier } = await codeFor(cookies);
    const response = await exchange(code, verifier);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.equal(body.token_type, 'bearer');
    assert.equal(body.scope, EVERY_SCOPE);
    assert.match(body.access_token, /^vgl_at_/);

    const account = await h.call({ method: 'GET', url: '/account', as: body.access_token });
    assert.equal(account.statusCode, 200, account.body);
    assert.equal(account.json().data.id, h.alice.accountId);
    const applications = await h.call({ method: 'GET', url: '/applications', as: body.access_token });
    assert.equal(applications.statusCode, 200, 'a personalToken route accepts the dashboard token');

    const rows = await dashboardRows(h.alice.accountId);
    assert.equal(rows.length, 1);
    assert.deepEqual(
      { name: rows[0]!.name, callback_url: rows[0]!.callback_url, is_public: Number(rows[0]!.is_public) },
      { name: 'Vigil dashboard', callback_url: CALLBACK, is_public: 1 },
    );
    const tokens = await h.call({ method: 'GET', url: '/account/tokens', as: body.access_token });
    const mine = tokens.json().data.find((t: { client_id: string }) => t.client_id === rows[0]!.client_id);
    assert.equal(mine.kind, 'dashboard');
    assert.equal(mine.client_name, 'Vigil dashboard');
  });

  test('without a session the browser goes to sign in first', async () => {
    const { response } = await authorize(undefined);
    assert.equal(response.statusCode, 303);
    assert.match(response.headers.location as string, /^\/signin\?next=%2Fsignin%2Foauth%2Fauthorize%3F/);
  });

  test('another redirect_uri gets the 400 error page', async () => {
    const cookies = await signIn('alice@example.com');
    for (const redirect of [`${PUBLIC_URL}/app`, `${PUBLIC_URL}/app/x`, 'https://evil.example/app/']) {
      const { response } = await authorize(cookies, { redirect_uri: redirect });
      assert.equal(response.statusCode, 400, redirect);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.equal(response.headers.location, undefined);
    }
  });

  test('PKCE is mandatory and the other checks still apply', async () => {
    const cookies = await signIn('alice@example.com');
    const cases: [Record<string, string | undefined>, string][] = [
      [{ code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ scope: 'api:read nope' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ state: 'x'.repeat(1025) }, 'invalid_request'],
    ];
    for (const [fields, error] of cases) {
      const { response } = await authorize(cookies, fields);
      assert.equal(response.statusCode, 303, JSON.stringify(fields));
      const location = new URL(response.headers.location as string);
      assert.equal(`${location.origin}${location.pathname}`, CALLBACK);
      assert.equal(location.searchParams.get('error'), error, JSON.stringify(fields));
      assert.equal(location.searchParams.get('code'), null);
    }
  });

  test('a client secret is invalid_client; a wrong verifier is invalid_grant', async () => {
    const cookies = await signIn('alice@example.com');
    const { code, verifier } = await codeFor(cookies);
    const withSecret = await exchange(code, verifier, { client_secret: 'vgl_cs_guess' });
    assert.equal(withSecret.statusCode, 401, withSecret.body);
    assert.equal(withSecret.json().error, 'invalid_client');
    const basic = await get().app.inject({
      method: 'POST',
      url: '/signin/oauth/access_token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:secret`).toString('base64')}`,
      },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CALLBACK,
      }).toString(),
    });
    assert.equal(basic.statusCode, 401);
    assert.equal(basic.json().error, 'invalid_client');
    const wrong = await exchange(code, pkcePair().verifier);
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error, 'invalid_grant');
    const ok = await exchange(code, verifier);
    assert.equal(ok.statusCode, 200, 'failed checks did not use the code up');
  });

  test('a dashboard code cannot be exchanged by its row id nor by another client', async () => {
    const h = get();
    const cookies = await signIn('alice@example.com');
    const { code, verifier } = await codeFor(cookies);
    const [row] = await dashboardRows(h.alice.accountId);
    const byRowId = await exchange(code, verifier, { client_id: row!.client_id });
    assert.equal(byRowId.statusCode, 401, 'the hidden row is no client of its own');
    assert.equal(byRowId.json().error, 'invalid_client');
    const app = await h.server.services.tokens.createApplication(h.store.db, {
      accountId: h.bob.accountId,
      name: 'Other',
      websiteUrl: 'https://other.example',
      callbackUrl: CALLBACK,
      isPublic: true,
    });
    const other = await exchange(code, verifier, { client_id: app.clientId });
    assert.equal(other.statusCode, 400);
    assert.equal(other.json().error, 'invalid_grant');
  });

  test('a replayed code fails and revokes the token it gave', async () => {
    const h = get();
    const cookies = await signIn('alice@example.com');
    const { code, verifier } = await codeFor(cookies);
    const first = await exchange(code, verifier);
    assert.equal(first.statusCode, 200);
    const token = first.json().access_token as string;
    assert.equal((await h.call({ method: 'GET', url: '/account', as: token })).statusCode, 200);
    const again = await exchange(code, verifier);
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().error, 'invalid_grant');
    assert.equal((await h.call({ method: 'GET', url: '/account', as: token })).statusCode, 401);
  });

  test('the SPA signs out through the revocation endpoint', async () => {
    const h = get();
    const cookies = await signIn('alice@example.com');
    const { code, verifier } = await codeFor(cookies);
    const token = (await exchange(code, verifier)).json().access_token as string;
    const withSecret = await postForm('/signin/oauth/revoke', {
      client_id: CLIENT_ID,
      client_secret: 'x',
      token,
    });
    assert.equal(withSecret.statusCode, 401);
    // A token that is not the dashboard's is left alone.
    const revokeOther = await postForm('/signin/oauth/revoke', {
      client_id: CLIENT_ID,
      token: h.alice.token,
    });
    assert.equal(revokeOther.statusCode, 200);
    assert.equal((await h.call({ method: 'GET', url: '/account' })).statusCode, 200);

    const revoked = await postForm('/signin/oauth/revoke', { client_id: CLIENT_ID, token });
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal((await h.call({ method: 'GET', url: '/account', as: token })).statusCode, 401);
  });

  test('the built-in row is hidden from the applications API and the account page', async () => {
    const h = get();
    const cookies = await signIn('alice@example.com');
    await codeFor(cookies);
    const [row] = await dashboardRows(h.alice.accountId);
    assert.ok(row);
    const list = await h.data('GET', '/applications');
    assert.ok(!list.some((app: { client_id: string }) => app.client_id === row.client_id));
    await h.expectError({ method: 'GET', url: `/applications/${row.client_id}` }, 404, 'not_found');
    await h.expectError({ method: 'DELETE', url: `/applications/${row.client_id}` }, 404, 'not_found');
    await h.expectError({ method: 'POST', url: `/applications/${row.client_id}/secret` }, 404, 'not_found');
    const page = await inject({ method: 'GET', url: '/profile', cookies });
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes(`/profile/applications/${row.client_id}/`), 'no buttons for the row');
    assert.equal((await dashboardRows(h.alice.accountId)).length, 1, 'still there');
  });

  test('signing in again, or two authorizations at once, reuse one row per account', async () => {
    const h = get();
    const before = await dashboardRows(h.bob.accountId);
    assert.equal(before.length, 0);
    const cookies = await Promise.all([signIn('bob@example.com'), signIn('bob@example.com')]);
    await Promise.all([codeFor(cookies[0]!), codeFor(cookies[1]!), codeFor(cookies[0]!)]);
    const rows = await dashboardRows(h.bob.accountId);
    assert.equal(rows.length, 1);
    await codeFor(await signIn('bob@example.com'));
    assert.deepEqual(await dashboardRows(h.bob.accountId), rows);
  });
});
