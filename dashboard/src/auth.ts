/**
 * Signing in: the dashboard is a public OAuth 2.0 client (`vigil-dashboard`) and gets its token
 * through the authorization-code flow with PKCE, like any other client. The server skips the
 * confirmation screen for its own dashboard; without a web session it shows the sign-in page first.
 */
export const CLIENT_ID = 'vigil-dashboard';
const SCOPES = 'api:read test:write bucket:write message:write account:email';
const TOKEN_KEY = 'vigil.token';
const PENDING_KEY = 'vigil.pending';

interface Pending {
  state: string;
  verifier: string;
  /** Where the person was going when the sign-in started. */
  returnTo: string;
}

export const redirectUri = (): string => `${location.origin}/app/`;

function randomString(bytes: number): string {
  const data = crypto.getRandomValues(new Uint8Array(bytes));
  return base64url(data);
}

function base64url(data: Uint8Array): string {
  let text = '';
  for (const byte of data) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function challengeOf(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

export function storedToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

/** Starts the authorization request; the browser leaves the page. */
export async function beginSignIn(): Promise<never> {
  const pending: Pending = {
    state: randomString(16),
    verifier: randomString(48),
    returnTo: location.pathname + location.search + location.hash,
  };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL('/signin/oauth/authorize', location.origin);
  url.searchParams.set('client_id', CLIENT_ID);
  url.searchParams.set('redirect_uri', redirectUri());
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', SCOPES);
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', await challengeOf(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  location.assign(url.toString());
  return new Promise<never>(() => undefined);
}

export class SignInError extends Error {}

/**
 * Finishes a sign-in when the page is the OAuth callback (`?code&state` or `?error`): exchanges the
 * code for a token and puts the original address back. Returns false when this is not a callback.
 */
export async function completeSignIn(): Promise<boolean> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (!code && !error) return false;
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const pending = raw ? (JSON.parse(raw) as Pending) : null;
  if (error) throw new SignInError(params.get('error_description') ?? error);
  if (!pending || pending.state !== params.get('state')) {
    throw new SignInError('The sign-in answer does not belong to this browser tab. Sign in again.');
  }
  const response = await fetch('/signin/oauth/access_token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: CLIENT_ID,
      code: code!,
      redirect_uri: redirectUri(),
      code_verifier: pending.verifier,
    }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    access_token?: string;
    error_description?: string;
  };
  if (!response.ok || !body.access_token) {
    throw new SignInError(body.error_description ?? `The token exchange failed (${response.status})`);
  }
  localStorage.setItem(TOKEN_KEY, body.access_token);
  history.replaceState(null, '', pending.returnTo.startsWith('/app') ? pending.returnTo : '/app/');
  return true;
}

/** Forgets a token the API refused (revoked elsewhere) so the next load signs in again. */
export function dropToken(): void {
  localStorage.removeItem(TOKEN_KEY);
}

/** Revokes the dashboard's token, then ends the web session on the sign-out page. */
export async function signOut(): Promise<void> {
  const token = storedToken();
  dropToken();
  if (token) {
    await fetch('/signin/oauth/revoke', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, token }),
    }).catch(() => undefined);
  }
  location.assign('/signout');
}
