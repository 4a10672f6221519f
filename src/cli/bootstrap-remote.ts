import { createHash, randomBytes } from 'node:crypto';

/** What `vigil bootstrap` prints, whichever way the account was made. */
export interface BootstrapLine {
  access_token: string;
  bucket_key: string;
  client_id: string;
  client_secret: string;
  account_id: string;
}

/** A refusal of the server, said for a person; `unauthorized` for a wrong password. */
export class RemoteBootstrapError extends Error {
  constructor(
    message: string,
    readonly unauthorized = false,
  ) {
    super(message);
  }
}

const SCOPES = 'api:read test:write bucket:write message:write account:email';

/** The cookies a browser would keep for the server, sent back on every request. */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(readonly base: URL) {}

  async request(path: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const response = await fetch(new URL(path, this.base), {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      redirect: 'manual',
      headers: {
        accept: 'text/html',
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(init.form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (at > 0) this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    return response;
  }

  /** A page's form token: the hidden `csrf_token` field the sign-in and sign-up forms carry. */
  async formToken(path: string): Promise<string | undefined> {
    const response = await this.request(path);
    if (response.status === 404) return undefined;
    const html = await response.text();
    const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
    if (!response.ok || !token) {
      throw new RemoteBootstrapError(
        `${path} on ${this.base.origin} answered ${response.status}, not a form`,
      );
    }
    return token;
  }
}

/** The message of a form page that refused: its error paragraph, else the status. */
async function pageError(response: Response): Promise<string> {
  const html = await response.text();
  const message = /<p[^>]*class="[^"]*error[^"]*"[^>]*>([^<]+)</.exec(html)?.[1];
  return message ? decodeEntities(message.trim()) : `the server answered ${response.status}`;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

async function api<T>(base: URL, token: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(new URL(path, base), {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await response.json().catch(() => ({}))) as { data?: T; error?: { message?: string } };
  if (!response.ok || parsed.data === undefined) {
    throw new RemoteBootstrapError(
      `${path} on ${base.origin} answered ${response.status}: ${parsed.error?.message ?? 'no data'}`,
    );
  }
  return parsed.data;
}

/** The dashboard's callback, which the server's own OAuth client accepts: `PUBLIC_URL/app/`. */
async function dashboardCallback(browser: Browser): Promise<string> {
  const response = await browser.request('/app/');
  const html = response.ok ? await response.text() : '';
  const publicUrl = /<meta name="vigil-public-url" content="([^"]+)"/.exec(html)?.[1];
  return new URL('/app/', publicUrl ? decodeEntities(publicUrl) : browser.base).toString();
}

/**
 * Signs up on a running server through its sign-up page (or signs in when the account exists), as a
 * browser would, CSRF tokens included; gets a token through the dashboard's OAuth flow (PKCE), and
 * with it registers a client application, whose personal token it hands back. The dashboard's token
 * is revoked before it returns.
 */
export async function bootstrapRemote(
  url: string,
  account: { email: string; name: string; password: string },
): Promise<BootstrapLine & { created: boolean }> {
  const base = new URL(url);
  const browser = new Browser(base);
  let created = false;

  const signupToken = await browser.formToken('/signup');
  if (signupToken) {
    const response = await browser.request('/signup', {
      form: { csrf_token: signupToken, ...account, next: '/app/' },
    });
    if (response.status === 303) created = true;
    else if (response.status !== 409)
      throw new RemoteBootstrapError(`sign-up failed: ${await pageError(response)}`);
  }
  if (!created) {
    const signinToken = await browser.formToken('/signin');
    const response = await browser.request('/signin', {
      form: { csrf_token: signinToken!, email: account.email, password: account.password, next: '/app/' },
    });
    if (response.status === 401) {
      throw new RemoteBootstrapError(
        signupToken
          ? `the password does not match the existing account ${account.email}`
          : `sign-up is closed on ${base.origin} and the email or password is not right`,
        true,
      );
    }
    if (response.status !== 303)
      throw new RemoteBootstrapError(`sign-in failed: ${await pageError(response)}`);
  }

  // The dashboard's authorization-code flow with PKCE; the server asks no consent of its own client.
  const verifier = randomBytes(48).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const redirectUri = await dashboardCallback(browser);
  const authorize = new URL('/signin/oauth/authorize', base);
  authorize.search = new URLSearchParams({
    client_id: 'vigil-dashboard',
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: SCOPES,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const granted = await browser.request(authorize.pathname + authorize.search);
  const location = granted.headers.get('location');
  const code = location ? new URL(location, base).searchParams.get('code') : null;
  if (!code) {
    throw new RemoteBootstrapError(
      `the server gave no authorization code (${granted.status}); is ${base.origin} the server's PUBLIC_URL?`,
    );
  }
  const exchange = await browser.request('/signin/oauth/access_token', {
    form: {
      grant_type: 'authorization_code',
      client_id: 'vigil-dashboard',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    },
  });
  const exchanged = (await exchange.json().catch(() => ({}))) as {
    access_token?: string;
    error_description?: string;
  };
  if (!exchanged.access_token) {
    throw new RemoteBootstrapError(
      `the token exchange failed: ${exchanged.error_description ?? String(exchange.status)}`,
    );
  }
  const session = exchanged.access_token;
  try {
    const application = await api<{ client_id: string; client_secret: string; access_token: string }>(
      base,
      session,
      '/applications',
      { name: 'vigil bootstrap', website_url: base.origin, callback_url: base.origin },
    );
    const me = await api<{ id: string }>(base, application.access_token, '/account');
    const buckets = await api<{ key: string; default: boolean }[]>(
      base,
      application.access_token,
      '/buckets',
    );
    const bucket = buckets.find((b) => b.default) ?? buckets[0];
    if (!bucket) throw new RemoteBootstrapError(`the account on ${base.origin} has no bucket`);
    return {
      created,
      access_token: application.access_token,
      bucket_key: bucket.key,
      client_id: application.client_id,
      client_secret: application.client_secret,
      account_id: me.id,
    };
  } finally {
    await browser.request('/signin/oauth/revoke', { form: { token: session, client_id: 'vigil-dashboard' } });
  }
}
