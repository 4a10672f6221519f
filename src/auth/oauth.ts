import { createHash } from 'node:crypto';
import { hashSecret, sameSecret } from '../domain/ids.js';
import { isScope, type Scope } from '../domain/scopes.js';
import type { OAuthClientRow } from '../store/repositories/oauth.js';

export const AUTHORIZATION_CODE_PREFIX = 'vgl_ac_';
/** An authorization request without `scope` grants this (DESIGN §2). */
export const DEFAULT_SCOPES: readonly Scope[] = ['api:read'];
const MAX_STATE_LENGTH = 1024;

/**
 * The web dashboard's own client (docs/oauth.md, "The dashboard's own client"): a public client with
 * this fixed id whose only callback is `PUBLIC_URL/app/`. Its codes and tokens point to a hidden
 * application row of the account (the store's DASHBOARD_BUILTIN row).
 */
export const DASHBOARD_CLIENT_ID = 'vigil-dashboard';
export const DASHBOARD_NAME = 'Vigil dashboard';
export const dashboardCallback = (publicUrl: string): string => `${publicUrl}/app/`;

/** RFC 6749 error codes this server answers with (§4.1.2.1 and §5.2). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied';

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }

  /** The HTTP status of the error at the token and revocation endpoints. */
  get status(): number {
    return this.code === 'invalid_client' ? 401 : 400;
  }

  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

/** A client application as the flow needs it, secret hash included. */
export type OAuthClient = OAuthClientRow;

/**
 * One value of a form or query field: undefined when absent or empty, null when repeated or not a
 * string (RFC 6749 §3.1: parameters must not be included more than once).
 */
export function single(fields: Record<string, unknown>, name: string): string | undefined | null {
  const value = fields[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return null;
  return value;
}

/** The scopes of a space-separated `scope` parameter; null when one is unknown. Empty grants api:read. */
export function parseScopes(raw: string | undefined): Scope[] | null {
  const names = (raw ?? '').split(' ').filter((name) => name !== '');
  if (names.length === 0) return [...DEFAULT_SCOPES];
  const scopes: Scope[] = [];
  for (const name of names) {
    if (!isScope(name)) return null;
    if (!scopes.includes(name)) scopes.push(name);
  }
  return scopes;
}

/** `state` is opaque, but bounded. */
export const isValidState = (state: string): boolean =>
  state.length <= MAX_STATE_LENGTH && !/[\u0000-\u001f]/.test(state);

/** An S256 challenge is the base64url SHA-256 of the verifier: 43 characters (RFC 7636 §4.2). */
export const isValidChallenge = (challenge: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(challenge);

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
export const isValidVerifier = (verifier: string): boolean => /^[A-Za-z0-9._~-]{43,128}$/.test(verifier);

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** PKCE S256: the verifier hashes to the challenge sent with the authorization request. */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!isValidVerifier(verifier)) return false;
  return sameSecret(s256(verifier), challenge);
}

/** Whether the secret hashes to the stored hash, compared in constant time. */
export function secretMatches(secret: string, hash: string): boolean {
  return sameSecret(hashSecret(secret), hash);
}

/** The callback URL with these query parameters added (existing ones kept). */
export function callbackWith(callback: string, params: Record<string, string | undefined>): string {
  const url = new URL(callback);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string | undefined;
  /** Whether they came in an `Authorization: Basic` header (errors then carry `WWW-Authenticate`). */
  basic: boolean;
}

/**
 * The client's credentials from HTTP Basic (RFC 6749 §2.3.1: form-encoded id and secret) or the form.
 * Both at once, repeated fields or a malformed header are invalid_request; none at all is invalid_client.
 */
export function clientCredentials(
  authorization: string | undefined,
  form: Record<string, unknown>,
): ClientCredentials {
  const formId = single(form, 'client_id');
  const formSecret = single(form, 'client_secret');
  if (formId === null || formSecret === null) {
    throw new OAuthError('invalid_request', 'client_id and client_secret may be sent once each');
  }
  if (authorization !== undefined && /^Basic\s/i.test(authorization)) {
    if (formSecret !== undefined) {
      throw new OAuthError('invalid_request', 'Send the client credentials either with Basic or in the form');
    }
    const decoded = Buffer.from(authorization.replace(/^Basic\s+/i, '').trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0)
      throw new OAuthError('invalid_request', 'The Basic credentials must be client_id:client_secret');
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_request', 'The Basic credentials are not form-encoded');
    }
    if (formId !== undefined && formId !== clientId) {
      throw new OAuthError('invalid_request', 'client_id in the form differs from the Basic credentials');
    }
    return { clientId, clientSecret: clientSecret === '' ? undefined : clientSecret, basic: true };
  }
  if (formId === undefined) throw new OAuthError('invalid_client', 'Client authentication is missing');
  return { clientId: formId, clientSecret: formSecret, basic: false };
}
