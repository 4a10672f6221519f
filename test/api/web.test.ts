import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { createServer } from '../../src/main.js';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { injectPage } from '../helpers/web.js';

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PASSWORD = 'correct horse battery';

type Response = LightMyRequestResponse;

function setCookies(response: Response): string[] {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

/** The value a response sets for a cookie, or undefined. */
function cookieValue(response: Response, name: string): string | undefined {
  const line = setCookies(response).find((c) => c.startsWith(`${name}=`));
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!);
}

function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  assert.ok(match, `a hidden ${name} field in ${html}`);
  return match[1]!;
}

function assertPageHeaders(response: Response) {
  assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(response.headers['content-security-policy'], CSP);
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.equal(response.headers['referrer-policy'], 'no-referrer');
  assert.equal(response.headers['cache-control'], 'no-store');
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

await describeApi('web pages', (get) => {
  const inject = (options: Parameters<typeof injectPage>[1]) => injectPage(get().app, options);

  /** The sign-in form's CSRF token and the matching cookie. */
  async function signInForm(): Promise<{ csrf: string; cookies: Record<string, string> }> {
    const page = await inject({ method: 'GET', url: '/signin' });
    assert.equal(page.statusCode, 200);
    const csrf = hiddenField(page.body, 'csrf_token');
    assert.equal(cookieValue(page, 'vigil_csrf'), csrf);
    return { csrf, cookies: { vigil_csrf: csrf } };
  }

  async function signIn(
    email: string,
    password: string,
    next?: string,
    remoteAddress?: string,
  ): Promise<Response> {
    const { csrf, cookies } = await signInForm();
    return inject({
      method: 'POST',
      url: '/signin',
      cookies,
      ...(remoteAddress && { remoteAddress }),
      fields: { csrf_token: csrf, email, password, ...(next !== undefined && { next }) },
    });
  }

  test('signing in sets an HttpOnly, SameSite session cookie and /profile shows the name', async () => {
    const response = await signIn('alice@example.com', PASSWORD);
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, '/profile');
    const line = setCookies(response).find((c) => c.startsWith('vigil_session='));
    assert.ok(line);
    assert.match(line, /; HttpOnly/);
    assert.match(line, /; SameSite=Lax/);
    assert.match(line, /; Path=\//);
    assert.doesNotMatch(line, /Secure/, 'PUBLIC_URL is http');
    const session = cookieValue(response, 'vigil_session')!;
    assert.ok(session.length >= 43);

    const account = await inject({ method: 'GET', url: '/profile', cookies: { vigil_session: session } });
    assert.equal(account.statusCode, 200);
    assertPageHeaders(account);
    assert.match(account.body, /Alice/);
    assert.match(account.body, /alice@example\.com/);
  });

  test('/profile without a session redirects to the sign-in page', async () => {
    const response = await inject({ method: 'GET', url: '/profile' });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/signin?next=%2Fprofile');
    const forged = await inject({ method: 'GET', url: '/profile', cookies: { vigil_session: 'nope' } });
    assert.equal(forged.statusCode, 303);
  });

  test('a wrong password answers 401 and the form again', async () => {
    const response = await signIn('alice@example.com', 'not the password');
    assert.equal(response.statusCode, 401);
    assertPageHeaders(response);
    assert.match(response.body, /not right/);
    assert.equal(cookieValue(response, 'vigil_session'), undefined);
    const unknown = await signIn('nobody@example.com', PASSWORD);
    assert.equal(unknown.statusCode, 401);
  });

  test('a missing or wrong CSRF token answers 403', async () => {
    const { csrf, cookies } = await signInForm();
    const fields = { email: 'alice@example.com', password: PASSWORD };
    for (const request of [
      { cookies, fields },
      { cookies, fields: { ...fields, csrf_token: 'x'.repeat(csrf.length) } },
      { fields: { ...fields, csrf_token: csrf } },
    ]) {
      const response = await inject({ method: 'POST', url: '/signin', ...request });
      assert.equal(response.statusCode, 403, JSON.stringify(request));
      assertPageHeaders(response);
      assert.equal(cookieValue(response, 'vigil_session'), undefined);
    }
    const signup = await inject({
      method: 'POST',
      url: '/signup',
      cookies,
      fields: { name: 'Mallory', email: 'mallory@example.com', password: 'long enough password' },
    });
    assert.equal(signup.statusCode, 403);

    const session = cookieValue(await signIn('alice@example.com', PASSWORD), 'vigil_session')!;
    const signout = await inject({
      method: 'POST',
      url: '/signout',
      cookies: { vigil_session: session },
      fields: { csrf_token: csrf },
    });
    assert.equal(signout.statusCode, 403);
    const still = await inject({ method: 'GET', url: '/profile', cookies: { vigil_session: session } });
    assert.equal(still.statusCode, 200);
  });

  test('next only leads to paths on this site', async () => {
    const ok = await signIn('alice@example.com', PASSWORD, '/docs?x=1');
    assert.equal(ok.headers.location, '/docs?x=1');
    for (const next of ['//evil.test', 'https://evil.test', '/\\evil.test', 'evil.test', '']) {
      const response = await signIn('alice@example.com', PASSWORD, next);
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/profile', next);
    }
    const page = await inject({ method: 'GET', url: '/signin?next=%2F%2Fevil.test' });
    assert.equal(hiddenField(page.body, 'next'), '/profile');
  });

  test('five failed sign-ins of an account answer 429 with Retry-After, even with the right password', async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await signIn('bob@example.com', `wrong ${i}`)).statusCode, 401);
    }
    const response = await signIn('bob@example.com', PASSWORD);
    assert.equal(response.statusCode, 429);
    assertPageHeaders(response);
    const retryAfter = Number(response.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, String(retryAfter));
    assert.match(response.body, /Too many/);
    assert.equal(cookieValue(response, 'vigil_session'), undefined);
  });

  test("a stranger's wrong passwords hold back the stranger's address, not the owner", async () => {
    const stranger = '203.0.113.9';
    for (let i = 0; i < 5; i++) {
      assert.equal((await signIn('alice@example.com', `guess ${i}`, undefined, stranger)).statusCode, 401);
    }
    assert.equal((await signIn('alice@example.com', PASSWORD, undefined, stranger)).statusCode, 429);
    const owner = await signIn('alice@example.com', PASSWORD, undefined, '198.51.100.7');
    assert.equal(owner.statusCode, 303, 'the owner, from an address with no failures, signs in');
    assert.ok(cookieValue(owner, 'vigil_session'));
    assert.equal(
      (await signIn('alice@example.com', PASSWORD, undefined, stranger)).statusCode,
      429,
      "the owner's success does not free the stranger's address",
    );
  });

  test('signing out ends the session', async () => {
    const session = cookieValue(await signIn('alice@example.com', PASSWORD), 'vigil_session')!;
    const account = await inject({ method: 'GET', url: '/profile', cookies: { vigil_session: session } });
    const csrf = hiddenField(account.body, 'csrf_token');
    const signout = await inject({
      method: 'POST',
      url: '/signout',
      cookies: { vigil_session: session },
      fields: { csrf_token: csrf },
    });
    assert.equal(signout.statusCode, 303);
    assert.equal(cookieValue(signout, 'vigil_session'), '');
    const after = await inject({ method: 'GET', url: '/profile', cookies: { vigil_session: session } });
    assert.equal(after.statusCode, 303);
  });

  test("the sign-out page asks for confirmation with the session's token", async () => {
    const signedOut = await inject({ method: 'GET', url: '/signout' });
    assert.equal(signedOut.statusCode, 303);
    assert.equal(signedOut.headers.location, '/signin');
    const session = cookieValue(await signIn('alice@example.com', PASSWORD), 'vigil_session')!;
    const page = await inject({ method: 'GET', url: '/signout', cookies: { vigil_session: session } });
    assert.equal(page.statusCode, 200);
    assertPageHeaders(page);
    assert.match(page.body, /Sign out of Vigil\?/);
    const signout = await inject({
      method: 'POST',
      url: '/signout',
      cookies: { vigil_session: session },
      fields: { csrf_token: hiddenField(page.body, 'csrf_token') },
    });
    assert.equal(signout.statusCode, 303);
    const after = await inject({ method: 'GET', url: '/profile', cookies: { vigil_session: session } });
    assert.equal(after.statusCode, 303);
  });

  test('signing up creates an account that can sign in', async () => {
    const page = await inject({ method: 'GET', url: '/signup' });
    assert.equal(page.statusCode, 200);
    assertPageHeaders(page);
    const csrf = hiddenField(page.body, 'csrf_token');
    const cookies = { vigil_csrf: cookieValue(page, 'vigil_csrf')! };

    const short = await inject({
      method: 'POST',
      url: '/signup',
      cookies,
      fields: { csrf_token: csrf, name: 'Carol', email: 'carol@example.com', password: 'too short' },
    });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /Password must be 10/);

    const name = 'Carol <b>&</b>';
    const created = await inject({
      method: 'POST',
      url: '/signup',
      cookies,
      fields: { csrf_token: csrf, name, email: 'Carol@Example.com', password: 'a long password' },
    });
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, '/profile');
    const account = await inject({
      method: 'GET',
      url: '/profile',
      cookies: { vigil_session: cookieValue(created, 'vigil_session')! },
    });
    assert.match(account.body, /Carol &lt;b&gt;&amp;&lt;\/b&gt;/);

    const again = await inject({
      method: 'POST',
      url: '/signup',
      cookies,
      fields: { csrf_token: csrf, name: 'Carol', email: 'carol@example.com', password: 'a long password' },
    });
    assert.equal(again.statusCode, 409);

    const signedIn = await signIn('carol@example.com', 'a long password');
    assert.equal(signedIn.statusCode, 303);
    assert.ok(cookieValue(signedIn, 'vigil_session'));
  });

  test('every page carries the security headers', async () => {
    for (const url of ['/signin', '/signup', '/profile']) {
      const response = await inject({ method: 'GET', url });
      assert.equal(response.headers['content-security-policy'], CSP, url);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(response.headers['referrer-policy'], 'no-referrer', url);
      assert.equal(response.headers['cache-control'], 'no-store', url);
      if (response.statusCode === 200) {
        assertPageHeaders(response);
        assert.doesNotMatch(response.body, /<script/i);
      }
    }
  });

  test('SIGNUP=closed refuses the sign-up page and form', async () => {
    const config = {
      ...loadConfig({ PUBLIC_URL, LOG_LEVEL: 'silent', SIGNUP: 'closed' }),
      databaseUrl: undefined,
    };
    const server = await createServer(config, { store: get().store, worker: false });
    try {
      const page = await server.app.inject({ method: 'GET', url: '/signup' });
      assert.equal(page.statusCode, 404);
      assertPageHeaders(page);
      const post = await server.app.inject({
        method: 'POST',
        url: '/signup',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ name: 'Dave', email: 'dave@example.com', password: 'a long password' }),
      });
      assert.equal(post.statusCode, 404);
      const signin = await server.app.inject({ method: 'GET', url: '/signin' });
      assert.doesNotMatch(signin.body, /href="\/signup"/);
    } finally {
      await server.stop();
    }
  });
});
