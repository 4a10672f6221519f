import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { oauthRoutes, type SessionLookup } from '../../src/api/oauth/routes.js';
import { OAuthService } from '../../src/services/oauth.js';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

const CALLBACK = 'https://client.example/callback';
const PUBLIC_CALLBACK = 'https://spa.example/cb';

/** Sessions for the tests: the account id comes from a header, the CSRF token is derived from it. */
const fakeSessions: SessionLookup = {
  async current(request) {
    const id = request.headers['x-test-account'];
    return typeof id === 'string' ? { accountId: id, csrfToken: `csrf-${id}` } : null;
  },
  checkCsrf(session, submitted) {
    return submitted === session.csrfToken;
  },
};

const form = (fields: Record<string, string | undefined>): string =>
  new URLSearchParams(
    Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();

const query = (fields: Record<string, string | undefined>): string =>
  `/signin/oauth/authorize?${form(fields)}`;

const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describeApi('OAuth web application flow', (get) => {
  let oauth: FastifyInstance;
  let logs = '';
  let offset = 0;
  /** Every secret value the flow handles; none may reach the log. */
  const secrets: string[] = [];
  let client: { clientId: string; clientSecret: string };
  let spa: { clientId: string; clientSecret: string };
  let account: string;

  before(async () => {
    const h = get();
    account = h.alice.accountId;
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    });
    oauth = Fastify({ logger: { level: 'trace', stream } });
    await oauth.register(
      oauthRoutes(
        {
          services: {
            ...h.server.services,
            oauth: new OAuthService({
              store: h.store,
              tokens: h.server.services.tokens,
              publicUrl: PUBLIC_URL,
              now: () => Date.now() + offset,
            }),
          },
        },
        fakeSessions,
      ),
    );
    await oauth.ready();
    const created = await h.server.services.tokens.createApplication(h.store.db, {
      accountId: h.bob.accountId,
      name: `Bob's <Monitor> & "Co"`,
      websiteUrl: 'https://client.example',
      callbackUrl: CALLBACK,
    });
    client = created;
    const createdSpa = await h.server.services.tokens.createApplication(h.store.db, {
      accountId: h.bob.accountId,
      name: 'Single page app',
      websiteUrl: 'https://spa.example',
      callbackUrl: PUBLIC_CALLBACK,
      isPublic: true,
    });
    spa = createdSpa;
    secrets.push(created.clientSecret, created.accessToken, createdSpa.clientSecret, createdSpa.accessToken);
  });

  after(async () => {
    await oauth?.close();
  });

  const postForm = (
    url: string,
    fields: Record<string, string | undefined>,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> =>
    oauth.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: form(fields),
    });

  /** Approves on the confirmation form as alice and answers the code from the callback. */
  async function approve(
    fields: Record<string, string | undefined> = {},
    clientId = client.clientId,
    callback = CALLBACK,
  ): Promise<string> {
    const response = await postForm(
      '/signin/oauth/authorize',
      {
        client_id: clientId,
        redirect_uri: callback,
        scope: 'api:read',
        state: 'xyz',
        decision: 'authorize',
        _csrf: `csrf-${account}`,
        ...fields,
      },
      { 'x-test-account': account },
    );
    assert.equal(response.statusCode, 303, response.body);
    const location = new URL(response.headers.location as string);
    const code = location.searchParams.get('code');
    assert.ok(code, `a code in ${location}`);
    secrets.push(code);
    return code;
  }

  async function exchange(
    code: string,
    fields: Record<string, string | undefined> = {},
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const response = await postForm(
      '/signin/oauth/access_token',
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CALLBACK,
        client_id: client.clientId,
        client_secret: client.clientSecret,
        ...fields,
      },
      headers,
    );
    if (response.statusCode === 200) secrets.push(response.json().access_token);
    return response;
  }

  const assertOAuthError = (response: LightMyRequestResponse, status: number, error: string) => {
    assert.equal(response.statusCode, status, response.body);
    const body = response.json();
    assert.equal(body.error, error);
    assert.equal(typeof body.error_description, 'string');
    assert.equal(response.headers['cache-control'], 'no-store');
  };

  test('the full flow grants a token with only the granted scopes', async () => {
    const page = await oauth.inject({
      method: 'GET',
      url: query({
        client_id: client.clientId,
        redirect_uri: CALLBACK,
        response_type: 'code',
        scope: 'api:read message:write',
        state: 'st-1',
      }),
      headers: { 'x-test-account': account },
    });
    assert.equal(page.statusCode, 200, page.body);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.ok(page.body.includes('Bob&#39;s &lt;Monitor&gt; &amp; &quot;Co&quot;'), 'names the app, escaped');
    assert.ok(!page.body.includes('<Monitor>'));
    assert.ok(page.body.includes('See your buckets'), 'describes api:read');
    assert.ok(page.body.includes('share, unshare and delete captured messages'), 'describes message:write');
    assert.ok(!page.body.includes('Create and delete buckets'), 'no scope that was not asked for');
    assert.ok(page.body.includes(`name="_csrf" value="csrf-${account}"`));
    assert.ok(page.body.includes('value="authorize"') && page.body.includes('value="deny"'));

    const code = await approve({ scope: 'api:read message:write', state: 'st-1' });
    const response = await exchange(code);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.equal(body.token_type, 'bearer');
    assert.equal(body.scope, 'api:read message:write');
    assert.match(body.access_token, /^vgl_at_/);

    const h = get();
    const root = await h.call({ method: 'GET', url: '/', as: body.access_token });
    assert.equal(root.statusCode, 200, root.body);
    await h.expectError(
      { method: 'POST', url: '/buckets', body: { name: 'x' }, as: body.access_token },
      403,
      'forbidden',
    );
  });

  test('the callback gets the state back with the code', async () => {
    const response = await postForm(
      '/signin/oauth/authorize',
      {
        client_id: client.clientId,
        redirect_uri: CALLBACK,
        state: 'a b&c',
        decision: 'authorize',
        _csrf: `csrf-${account}`,
      },
      { 'x-test-account': account },
    );
    assert.equal(response.statusCode, 303);
    const location = new URL(response.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, CALLBACK);
    assert.equal(location.searchParams.get('state'), 'a b&c');
    secrets.push(location.searchParams.get('code')!);
    const token = await exchange(location.searchParams.get('code')!);
    assert.equal(token.json().scope, 'api:read', 'no scope asked: api:read');
  });

  test('without a session the user is sent to sign in, and comes back', async () => {
    const url = query({
      client_id: client.clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      state: 's',
    });
    const response = await oauth.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, `/signin?next=${encodeURIComponent(url)}`);
  });

  test('deny sends access_denied to the callback', async () => {
    const response = await postForm(
      '/signin/oauth/authorize',
      {
        client_id: client.clientId,
        redirect_uri: CALLBACK,
        state: 'st-2',
        decision: 'deny',
        _csrf: `csrf-${account}`,
      },
      { 'x-test-account': account },
    );
    assert.equal(response.statusCode, 303);
    const location = new URL(response.headers.location as string);
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('state'), 'st-2');
    assert.equal(location.searchParams.get('code'), null);
  });

  test('an unknown client or another callback gets an error page, never a redirect', async () => {
    for (const fields of [
      { client_id: '00000000-0000-4000-8000-000000000000', redirect_uri: CALLBACK },
      { client_id: 'not-a-uuid', redirect_uri: CALLBACK },
      { client_id: client.clientId, redirect_uri: 'https://evil.example/callback' },
      { client_id: client.clientId, redirect_uri: `${CALLBACK}/` },
      { client_id: client.clientId },
    ]) {
      const response = await oauth.inject({
        method: 'GET',
        url: query({ ...fields, response_type: 'code', state: 's' }),
        headers: { 'x-test-account': account },
      });
      assert.equal(response.statusCode, 400, JSON.stringify(fields));
      assert.equal(response.headers.location, undefined);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.match(String(response.headers['content-security-policy']), /frame-ancestors 'none'/);
      const posted = await postForm(
        '/signin/oauth/authorize',
        { ...fields, decision: 'authorize', _csrf: `csrf-${account}` },
        { 'x-test-account': account },
      );
      assert.equal(posted.statusCode, 400);
      assert.equal(posted.headers.location, undefined);
    }
  });

  test('a bad response_type or scope goes back to the callback with the error', async () => {
    for (const [fields, error] of [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: 'code', scope: 'api:read admin' }, 'invalid_scope'],
      [
        { response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' },
        'invalid_request',
      ],
    ] as const) {
      const response = await oauth.inject({
        method: 'GET',
        url: query({ client_id: client.clientId, redirect_uri: CALLBACK, state: 'st-3', ...fields }),
        headers: { 'x-test-account': account },
      });
      assert.equal(response.statusCode, 303, JSON.stringify(fields));
      const location = new URL(response.headers.location as string);
      assert.equal(`${location.origin}${location.pathname}`, CALLBACK);
      assert.equal(location.searchParams.get('error'), error);
      assert.equal(location.searchParams.get('state'), 'st-3');
    }
  });

  test('a code used twice is refused and the token it gave is revoked', async () => {
    const code = await approve();
    const first = await exchange(code);
    assert.equal(first.statusCode, 200);
    const token = first.json().access_token;
    const h = get();
    assert.equal((await h.call({ method: 'GET', url: '/', as: token })).statusCode, 200);
    assertOAuthError(await exchange(code), 400, 'invalid_grant');
    const after = await h.call({ method: 'GET', url: '/', as: token });
    assert.equal(after.statusCode, 401);
  });

  test('a code expires after 60 seconds', async () => {
    const code = await approve();
    offset = 61_000;
    try {
      assertOAuthError(await exchange(code), 400, 'invalid_grant');
    } finally {
      offset = 0;
    }
    const fresh = await approve();
    offset = 59_000;
    try {
      assert.equal((await exchange(fresh)).statusCode, 200);
    } finally {
      offset = 0;
    }
  });

  test('the exchange checks the redirect_uri, the client and the grant type', async () => {
    const code = await approve();
    assertOAuthError(await exchange(code, { redirect_uri: `${CALLBACK}/other` }), 400, 'invalid_grant');
    assertOAuthError(
      await exchange(code, { client_id: spa.clientId, client_secret: spa.clientSecret }),
      400,
      'invalid_grant',
    );
    assertOAuthError(await exchange(code, { grant_type: 'password' }), 400, 'unsupported_grant_type');
    assertOAuthError(await exchange(code, { grant_type: undefined }), 400, 'invalid_request');
    assertOAuthError(await exchange('vgl_ac_unknown'), 400, 'invalid_grant');
    const json = await oauth.inject({
      method: 'POST',
      url: '/signin/oauth/access_token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ grant_type: 'authorization_code', code }),
    });
    assertOAuthError(json, 400, 'invalid_request');
    assert.equal((await exchange(code)).statusCode, 200, 'failed attempts do not use the code up');
  });

  test('a wrong client secret is invalid_client', async () => {
    const code = await approve();
    assertOAuthError(await exchange(code, { client_secret: 'vgl_cs_wrong' }), 401, 'invalid_client');
    assertOAuthError(await exchange(code, { client_secret: undefined }), 401, 'invalid_client');
    const basic = await exchange(
      code,
      { client_id: undefined, client_secret: undefined },
      { authorization: `Basic ${Buffer.from(`${client.clientId}:vgl_cs_wrong`).toString('base64')}` },
    );
    assertOAuthError(basic, 401, 'invalid_client');
    assert.match(String(basic.headers['www-authenticate']), /^Basic/);
  });

  test('HTTP Basic client authentication works', async () => {
    const code = await approve();
    const response = await exchange(
      code,
      { client_id: undefined, client_secret: undefined },
      {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
    );
    assert.equal(response.statusCode, 200, response.body);
  });

  test('PKCE: public clients must use it, and the verifier must match', async () => {
    const refused = await oauth.inject({
      method: 'GET',
      url: query({
        client_id: spa.clientId,
        redirect_uri: PUBLIC_CALLBACK,
        response_type: 'code',
        state: 'p',
      }),
      headers: { 'x-test-account': account },
    });
    assert.equal(refused.statusCode, 303);
    assert.equal(new URL(refused.headers.location as string).searchParams.get('error'), 'invalid_request');

    const { verifier, challenge } = pkcePair();
    const page = await oauth.inject({
      method: 'GET',
      url: query({
        client_id: spa.clientId,
        redirect_uri: PUBLIC_CALLBACK,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      headers: { 'x-test-account': account },
    });
    assert.equal(page.statusCode, 200, page.body);
    assert.ok(page.body.includes(`name="code_challenge" value="${challenge}"`));

    const fields = { code_challenge: challenge, code_challenge_method: 'S256' };
    const spaExchange = (code: string, codeVerifier: string | undefined) =>
      exchange(code, {
        client_id: spa.clientId,
        client_secret: undefined,
        redirect_uri: PUBLIC_CALLBACK,
        code_verifier: codeVerifier,
      });
    const code = await approve(fields, spa.clientId, PUBLIC_CALLBACK);
    assertOAuthError(await spaExchange(code, pkcePair().verifier), 400, 'invalid_grant');
    assertOAuthError(await spaExchange(code, undefined), 400, 'invalid_grant');
    const ok = await spaExchange(code, verifier);
    assert.equal(ok.statusCode, 200, ok.body);
    const h = get();
    assert.equal((await h.call({ method: 'GET', url: '/', as: ok.json().access_token })).statusCode, 200);

    // A verifier for a code that had no challenge is refused too.
    const plain = await approve();
    assertOAuthError(await exchange(plain, { code_verifier: verifier }), 400, 'invalid_grant');
  });

  test('the confirmation form needs the session and its CSRF token', async () => {
    const fields = {
      client_id: client.clientId,
      redirect_uri: CALLBACK,
      state: 's',
      decision: 'authorize',
    };
    for (const [extra, headers] of [
      [{}, { 'x-test-account': account }],
      [{ _csrf: 'csrf-someone-else' }, { 'x-test-account': account }],
      [{ _csrf: `csrf-${account}` }, {}],
    ] as const) {
      const response = await postForm('/signin/oauth/authorize', { ...fields, ...extra }, headers);
      assert.equal(response.statusCode, 403);
      assert.equal(response.headers.location, undefined);
      assert.match(String(response.headers['content-security-policy']), /frame-ancestors 'none'/);
    }
  });

  test('revocation stops a token at once', async () => {
    const token = (await exchange(await approve())).json().access_token;
    const h = get();
    assert.equal((await h.call({ method: 'GET', url: '/', as: token })).statusCode, 200);

    const bad = await postForm('/signin/oauth/revoke', {
      token,
      client_id: client.clientId,
      client_secret: 'vgl_cs_wrong',
    });
    assertOAuthError(bad, 401, 'invalid_client');
    assert.equal((await h.call({ method: 'GET', url: '/', as: token })).statusCode, 200);

    const other = await postForm('/signin/oauth/revoke', {
      token,
      client_id: spa.clientId,
      client_secret: spa.clientSecret,
    });
    assert.equal(other.statusCode, 200, 'another client gets 200 but revokes nothing');
    assert.equal((await h.call({ method: 'GET', url: '/', as: token })).statusCode, 200);

    const revoked = await postForm(
      '/signin/oauth/revoke',
      { token },
      {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
    );
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal((await h.call({ method: 'GET', url: '/', as: token })).statusCode, 401);

    const unknown = await postForm('/signin/oauth/revoke', {
      token: 'vgl_at_unknown',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    assert.equal(unknown.statusCode, 200);
  });

  test('secrets, codes and tokens never reach the log', () => {
    assert.ok(logs.includes('/signin/oauth/access_token'), 'the log saw the requests');
    assert.ok(secrets.length > 10);
    for (const secret of secrets) {
      assert.ok(!logs.includes(secret), `a secret value appears in the log: ${secret.slice(0, 10)}…`);
    }
  });
});
