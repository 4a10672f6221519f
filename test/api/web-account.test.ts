import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { hashSecret } from '../../src/domain/ids.js';
import { describeApi } from '../helpers/api.js';
import { injectPage } from '../helpers/web.js';

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PASSWORD = 'correct horse battery';

type Response = LightMyRequestResponse;

function cookieValue(response: Response, name: string): string | undefined {
  const header = response.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const line = lines.find((c) => c.startsWith(`${name}=`));
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!);
}

function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  assert.ok(match, `a hidden ${name} field in ${html}`);
  return match[1]!;
}

/** The text of the `<code class="secret">` after a `<dt>` label on a secret page. */
function shown(html: string, label: string): string {
  const match = new RegExp(`<dt>${label}</dt><dd><code class="secret">([^<]*)</code>`).exec(html);
  assert.ok(match, `${label} in ${html}`);
  return match[1]!;
}

function assertPageHeaders(response: Response) {
  assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(response.headers['content-security-policy'], CSP);
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.equal(response.headers['referrer-policy'], 'no-referrer');
  assert.equal(response.headers['cache-control'], 'no-store');
  assert.equal(response.headers['x-frame-options'], 'DENY');
}

await describeApi('web account page: applications and tokens', (get) => {
  const inject = (options: Parameters<typeof injectPage>[1]) => injectPage(get().app, options);

  /** A signed-in browser: its session cookie and the CSRF token of its account page. */
  async function signIn(email: string): Promise<{ cookies: Record<string, string>; csrf: string }> {
    const form = await inject({ method: 'GET', url: '/signin' });
    const formCsrf = hiddenField(form.body, 'csrf_token');
    const response = await inject({
      method: 'POST',
      url: '/signin',
      cookies: { vigil_csrf: formCsrf },
      fields: { csrf_token: formCsrf, email, password: PASSWORD },
    });
    assert.equal(response.statusCode, 303, response.body);
    const cookies = { vigil_session: cookieValue(response, 'vigil_session')! };
    const page = await inject({ method: 'GET', url: '/profile', cookies });
    assert.equal(page.statusCode, 200);
    return { cookies, csrf: hiddenField(page.body, 'csrf_token') };
  }

  async function createApp(
    browser: { cookies: Record<string, string>; csrf: string },
    fields: Record<string, string> = {},
  ): Promise<Response> {
    return inject({
      method: 'POST',
      url: '/profile/applications',
      cookies: browser.cookies,
      fields: {
        csrf_token: browser.csrf,
        name: 'Page app',
        website_url: 'https://app.example',
        callback_url: 'https://app.example/callback',
        ...fields,
      },
    });
  }

  const clientRow = (clientId: string) =>
    get()
      .store.db.selectFrom('client_applications')
      .select(['secret_hash', 'is_public'])
      .where('client_id', '=', clientId)
      .executeTakeFirst();

  test('creating an application shows its secret once, keeps only its hash and lists it', async () => {
    const alice = await signIn('alice@example.com');
    const created = await createApp(alice, { name: 'Page <app>', is_public: '1' });
    assert.equal(created.statusCode, 200, created.body);
    assertPageHeaders(created);
    assert.doesNotMatch(created.body, /<script/i);
    assert.match(created.body, /will not be shown again/);
    assert.match(created.body, /Page &lt;app&gt;/);
    const clientId = shown(created.body, 'Client ID');
    const secret = shown(created.body, 'Client secret');
    const accessToken = shown(created.body, 'Your access token');
    assert.match(secret, /^vgl_cs_/);
    assert.match(accessToken, /^vgl_at_/);

    const row = await clientRow(clientId);
    assert.ok(row);
    assert.notEqual(row.secret_hash, secret);
    assert.equal(row.secret_hash, hashSecret(secret));
    assert.equal(row.is_public, 1);

    const owner = await get().call({ method: 'GET', url: '/account', as: accessToken });
    assert.equal(owner.statusCode, 200);

    const page = await inject({ method: 'GET', url: '/profile', cookies: alice.cookies });
    assert.equal(page.statusCode, 200);
    assertPageHeaders(page);
    assert.match(page.body, new RegExp(clientId));
    assert.match(page.body, /https:\/\/app\.example\/callback/);
    assert.ok(!page.body.includes(secret), 'the secret is not shown again');
    assert.ok(!page.body.includes(accessToken), 'tokens are never listed');
    assert.ok(!page.body.includes(row.secret_hash), 'nor the hash');
    assert.match(page.body, new RegExp(`action="/profile/applications/${clientId}/secret"`));
    assert.match(page.body, new RegExp(`action="/profile/applications/${clientId}/delete"`));
  });

  test('a bad URL or an empty name shows the form again with a message naming the field', async () => {
    const alice = await signIn('alice@example.com');
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ name: '   ' }, /Name must not be blank/],
      [{ website_url: 'not-a-url' }, /Website URL must be an absolute http or https URL/],
      [{ callback_url: 'ftp://app.example/cb' }, /Callback URL must be an http or https URL/],
      [{ callback_url: 'https://app.example/cb#frag' }, /Callback URL must not have a #fragment/],
    ];
    for (const [fields, message] of cases) {
      const response = await createApp(alice, { ...fields, name: fields.name ?? 'Kept <name>' });
      assert.equal(response.statusCode, 400, JSON.stringify(fields));
      assertPageHeaders(response);
      assert.match(response.body, message);
      assert.match(response.body, /action="\/profile\/applications"/);
      if (fields.name === undefined) assert.match(response.body, /value="Kept &lt;name&gt;"/);
      assert.doesNotMatch(response.body, /vgl_cs_/);
    }
  });

  test('rotating the secret shows the new one once and changes the stored hash', async () => {
    const alice = await signIn('alice@example.com');
    const created = await createApp(alice);
    const clientId = shown(created.body, 'Client ID');
    const oldSecret = shown(created.body, 'Client secret');
    const before = (await clientRow(clientId))!.secret_hash;

    const rotated = await inject({
      method: 'POST',
      url: `/profile/applications/${clientId}/secret`,
      cookies: alice.cookies,
      fields: { csrf_token: alice.csrf },
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assertPageHeaders(rotated);
    assert.match(rotated.body, /will not be shown again/);
    const newSecret = shown(rotated.body, 'Client secret');
    assert.notEqual(newSecret, oldSecret);
    assert.doesNotMatch(rotated.body, /Your access token/);
    const after = (await clientRow(clientId))!.secret_hash;
    assert.notEqual(after, before);
    assert.equal(after, hashSecret(newSecret));
    assert.notEqual(after, hashSecret(oldSecret));
  });

  test('deleting an application redirects back and removes it and its tokens', async () => {
    const alice = await signIn('alice@example.com');
    const created = await createApp(alice);
    const clientId = shown(created.body, 'Client ID');
    const accessToken = shown(created.body, 'Your access token');
    const deleted = await inject({
      method: 'POST',
      url: `/profile/applications/${clientId}/delete`,
      cookies: alice.cookies,
      fields: { csrf_token: alice.csrf },
    });
    assert.equal(deleted.statusCode, 303, deleted.body);
    assert.equal(deleted.headers.location, '/profile');
    assert.equal(await clientRow(clientId), undefined);
    const page = await inject({ method: 'GET', url: '/profile', cookies: alice.cookies });
    assert.ok(!page.body.includes(clientId));
    assert.equal((await get().call({ method: 'GET', url: '/', as: accessToken })).statusCode, 401);
  });

  test('the page lists live tokens without their values; revoking one makes it fail at once', async () => {
    const alice = await signIn('alice@example.com');
    const created = await createApp(alice, { name: 'Token app' });
    const accessToken = shown(created.body, 'Your access token');
    assert.equal((await get().call({ method: 'GET', url: '/', as: accessToken })).statusCode, 200);
    const tokenId = (
      await get()
        .store.db.selectFrom('access_tokens')
        .select('id')
        .where('token_hash', '=', hashSecret(accessToken))
        .executeTakeFirstOrThrow()
    ).id;

    const page = await inject({ method: 'GET', url: '/profile', cookies: alice.cookies });
    assert.ok(!page.body.includes(accessToken));
    assert.ok(!page.body.includes(get().alice.token));
    assert.ok(!page.body.includes(hashSecret(accessToken)));
    const action = `action="/profile/tokens/${tokenId}/revoke"`;
    assert.ok(page.body.includes(action), 'a Revoke form for the token');
    const row = page.body.slice(
      page.body.lastIndexOf('<tr>', page.body.indexOf(action)),
      page.body.indexOf(action),
    );
    assert.match(row, /personal/);
    assert.match(row, /Token app/);
    assert.match(row, /api:read/);
    assert.match(row, /UTC/);

    const revoked = await inject({
      method: 'POST',
      url: `/profile/tokens/${tokenId}/revoke`,
      cookies: alice.cookies,
      fields: { csrf_token: alice.csrf },
    });
    assert.equal(revoked.statusCode, 303, revoked.body);
    assert.equal(revoked.headers.location, '/profile');
    assert.equal((await get().call({ method: 'GET', url: '/', as: accessToken })).statusCode, 401);
    const after = await inject({ method: 'GET', url: '/profile', cookies: alice.cookies });
    assert.ok(!after.body.includes(action));
    assert.equal((await get().call({ method: 'GET', url: '/' })).statusCode, 200, "alice's own token lives");
  });

  test('every POST without the CSRF token, or with a wrong one, answers 403 and changes nothing', async () => {
    const alice = await signIn('alice@example.com');
    const created = await createApp(alice);
    const clientId = shown(created.body, 'Client ID');
    const hash = (await clientRow(clientId))!.secret_hash;
    const tokenId = (
      await get()
        .store.db.selectFrom('access_tokens')
        .select('id')
        .where('token_hash', '=', hashSecret(shown(created.body, 'Your access token')))
        .executeTakeFirstOrThrow()
    ).id;
    const urls = [
      '/profile/applications',
      `/profile/applications/${clientId}/secret`,
      `/profile/applications/${clientId}/delete`,
      `/profile/tokens/${tokenId}/revoke`,
    ];
    for (const url of urls) {
      const attempts: Array<Record<string, string>> = [
        { name: 'X', website_url: 'https://x.example', callback_url: 'https://x.example/cb' },
        { csrf_token: 'x'.repeat(alice.csrf.length) },
      ];
      for (const fields of attempts) {
        const response = await inject({ method: 'POST', url, cookies: alice.cookies, fields });
        assert.equal(response.statusCode, 403, url);
        assertPageHeaders(response);
      }
    }
    assert.equal((await clientRow(clientId))!.secret_hash, hash);
    const page = await inject({ method: 'GET', url: '/profile', cookies: alice.cookies });
    assert.ok(page.body.includes(`/profile/tokens/${tokenId}/revoke`));
    assert.doesNotMatch(page.body, /x\.example/);
  });

  test('without a session every POST redirects to sign-in', async () => {
    const alice = await signIn('alice@example.com');
    for (const url of [
      '/profile/applications',
      '/profile/applications/00000000-0000-4000-8000-000000000000/secret',
      '/profile/applications/00000000-0000-4000-8000-000000000000/delete',
      '/profile/tokens/00000000-0000-4000-8000-000000000000/revoke',
    ]) {
      for (const cookies of [undefined, { vigil_session: 'forged' }]) {
        const response = await inject({
          method: 'POST',
          url,
          ...(cookies && { cookies }),
          fields: { csrf_token: alice.csrf },
        });
        assert.equal(response.statusCode, 303, url);
        assert.equal(response.headers.location, '/signin?next=%2Fprofile');
      }
    }
  });

  test("another account's application or token answers a 404 page and stays as it was", async () => {
    const alice = await signIn('alice@example.com');
    const bob = await signIn('bob@example.com');
    const created = await createApp(bob, { name: "Bob's app" });
    const clientId = shown(created.body, 'Client ID');
    const bobToken = shown(created.body, 'Your access token');
    const hash = (await clientRow(clientId))!.secret_hash;
    const tokenId = (
      await get()
        .store.db.selectFrom('access_tokens')
        .select('id')
        .where('token_hash', '=', hashSecret(bobToken))
        .executeTakeFirstOrThrow()
    ).id;

    for (const url of [
      `/profile/applications/${clientId}/secret`,
      `/profile/applications/${clientId}/delete`,
      `/profile/tokens/${tokenId}/revoke`,
      '/profile/applications/not-a-uuid/delete',
      '/profile/tokens/not-a-uuid/revoke',
    ]) {
      const response = await inject({
        method: 'POST',
        url,
        cookies: alice.cookies,
        fields: { csrf_token: alice.csrf },
      });
      assert.equal(response.statusCode, 404, url);
      assertPageHeaders(response);
      assert.match(response.body, /not found/i);
    }
    assert.equal((await clientRow(clientId))!.secret_hash, hash);
    assert.equal((await get().call({ method: 'GET', url: '/', as: bobToken })).statusCode, 200);
    const alicePage = await inject({ method: 'GET', url: '/profile', cookies: alice.cookies });
    assert.ok(!alicePage.body.includes(clientId));
    assert.ok(!alicePage.body.includes(tokenId));
    assert.doesNotMatch(alicePage.body, /Bob&#39;s app|Bob's app/);
  });
});
