import { createHash, timingSafeEqual } from 'node:crypto';
import { hashSecret, isUuid, newId, newSecret } from '../domain/ids.js';
import { isScope, type Scope } from '../domain/scopes.js';
import type { Executor } from '../store/store.js';

/** Authorization codes are valid this long (spec 5, step 2). */
export const CODE_TTL_SECONDS = 60;
export const AUTHORIZATION_CODE_PREFIX = 'vgl_ac_';
/** Codes are kept this long after they expire, so a replayed code can still revoke its token. */
const CODE_RETENTION_SECONDS = 24 * 3600;
/** An authorization request without `scope` grants this (DESIGN §2). */
export const DEFAULT_SCOPES: readonly Scope[] = ['api:read'];
const MAX_STATE_LENGTH = 1024;

/**
 * The web dashboard's own client (docs/oauth.md, "The dashboard's own client"): a public client with
 * this fixed id whose only callback is `PUBLIC_URL/app/`. Its codes and tokens point to a hidden
 * application row of the account, marked with `builtin = DASHBOARD_BUILTIN`.
 */
export const DASHBOARD_CLIENT_ID = 'vigil-dashboard';
export const DASHBOARD_BUILTIN = 'dashboard';
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
export interface OAuthClient {
  client_id: string;
  account_id: string;
  name: string;
  website_url: string;
  callback_url: string;
  secret_hash: string;
  is_public: number;
}

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
  return constantTimeEqual(s256(verifier), challenge);
}

function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether the secret hashes to the stored hash, compared in constant time. */
export function secretMatches(secret: string, hash: string): boolean {
  return constantTimeEqual(hashSecret(secret), hash);
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

export interface CodeRow {
  client_id: string;
  account_id: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  expires_at: number;
  used_at: number | null;
  token_id: string | null;
}

/** Queries of the flow: clients by id, authorization codes, and tokens by hash. */
export const oauthStore = {
  /** A registered application; built-in rows are reachable only through their fixed client id. */
  async findClient(db: Executor, clientId: string): Promise<OAuthClient | undefined> {
    if (!isUuid(clientId)) return undefined;
    return db
      .selectFrom('client_applications')
      .select(['client_id', 'account_id', 'name', 'website_url', 'callback_url', 'secret_hash', 'is_public'])
      .where('client_id', '=', clientId)
      .where('builtin', 'is', null)
      .executeTakeFirst();
  },

  /**
   * The client id of the account's dashboard row, created on first use with a random secret nobody
   * is told. Two first uses at once meet the unique (account_id, builtin) index; the loser inserts
   * nothing and reads the winner's row.
   */
  async dashboardClientId(
    db: Executor,
    options: { accountId: string; publicUrl: string; now: number },
  ): Promise<string> {
    const find = () =>
      db
        .selectFrom('client_applications')
        .select('client_id')
        .where('account_id', '=', options.accountId)
        .where('builtin', '=', DASHBOARD_BUILTIN)
        .executeTakeFirst();
    const existing = await find();
    if (existing) return existing.client_id;
    await db
      .insertInto('client_applications')
      .values({
        client_id: newId(),
        account_id: options.accountId,
        name: DASHBOARD_NAME,
        website_url: options.publicUrl,
        callback_url: dashboardCallback(options.publicUrl),
        secret_hash: hashSecret(newSecret()),
        is_public: 1,
        created_at: options.now,
        builtin: DASHBOARD_BUILTIN,
      })
      .onConflict((conflict) => conflict.columns(['account_id', 'builtin']).doNothing())
      .execute();
    const created = await find();
    if (!created)
      throw new Error(`the dashboard client of account ${options.accountId} could not be created`);
    return created.client_id;
  },

  /** Whether this client row is an account's dashboard row. */
  async isDashboardRow(db: Executor, clientId: string, accountId: string): Promise<boolean> {
    const row = await db
      .selectFrom('client_applications')
      .select('client_id')
      .where('client_id', '=', clientId)
      .where('account_id', '=', accountId)
      .where('builtin', '=', DASHBOARD_BUILTIN)
      .executeTakeFirst();
    return row !== undefined;
  },

  async insertCode(
    db: Executor,
    code: {
      codeHash: string;
      clientId: string;
      accountId: string;
      redirectUri: string;
      scopes: readonly Scope[];
      codeChallenge: string | null;
      now: number;
    },
  ): Promise<void> {
    await db
      .deleteFrom('oauth_codes')
      .where('expires_at', '<', code.now - CODE_RETENTION_SECONDS)
      .execute();
    await db
      .insertInto('oauth_codes')
      .values({
        code_hash: code.codeHash,
        client_id: code.clientId,
        account_id: code.accountId,
        redirect_uri: code.redirectUri,
        scopes: code.scopes.join(' '),
        code_challenge: code.codeChallenge,
        created_at: code.now,
        expires_at: code.now + CODE_TTL_SECONDS,
        used_at: null,
        token_id: null,
      })
      .execute();
  },

  async findCode(db: Executor, codeHash: string): Promise<CodeRow | undefined> {
    return db
      .selectFrom('oauth_codes')
      .select([
        'client_id',
        'account_id',
        'redirect_uri',
        'scopes',
        'code_challenge',
        'expires_at',
        'used_at',
        'token_id',
      ])
      .where('code_hash', '=', codeHash)
      .executeTakeFirst();
  },

  /** Marks the code used; false when another request used it first. */
  async consumeCode(db: Executor, codeHash: string, now: number): Promise<boolean> {
    const result = await db
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async recordToken(db: Executor, codeHash: string, tokenId: string): Promise<void> {
    await db
      .updateTable('oauth_codes')
      .set({ token_id: tokenId })
      .where('code_hash', '=', codeHash)
      .execute();
  },

  async revokeTokenById(db: Executor, tokenId: string, now: number): Promise<void> {
    await db
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('id', '=', tokenId)
      .where('revoked_at', 'is', null)
      .execute();
  },

  /** Revokes the live token with this hash when it was issued to this client; false otherwise. */
  async revokeClientToken(db: Executor, tokenHash: string, clientId: string, now: number): Promise<boolean> {
    const result = await db
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('token_hash', '=', tokenHash)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Revokes the live token with this hash when it was issued to a dashboard row; false otherwise. */
  async revokeDashboardToken(db: Executor, tokenHash: string, now: number): Promise<boolean> {
    const result = await db
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('token_hash', '=', tokenHash)
      .where('client_id', 'in', (eb) =>
        eb.selectFrom('client_applications').select('client_id').where('builtin', '=', DASHBOARD_BUILTIN),
      )
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
