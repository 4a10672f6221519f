import {
  AUTHORIZATION_CODE_PREFIX,
  callbackWith,
  type ClientCredentials,
  DASHBOARD_CLIENT_ID,
  DASHBOARD_NAME,
  dashboardCallback,
  isValidChallenge,
  isValidState,
  type OAuthClient,
  OAuthError,
  parseScopes,
  secretMatches,
  single,
  verifyPkce,
} from '../auth/oauth.js';
import { hashSecret, isUuid, newId, newSecret } from '../domain/ids.js';
import { isScope, type Scope } from '../domain/scopes.js';
import { oauthRepo } from '../store/repositories/oauth.js';
import type { Store } from '../store/store.js';
import type { TokenService } from './tokens.js';

/** Authorization codes are valid this long (spec 5, step 2). */
export const CODE_TTL_SECONDS = 60;
/** Codes are kept this long after they expire, so a replayed code can still revoke its token. */
const CODE_RETENTION_SECONDS = 24 * 3600;

/** The fields of a query string or a form body, as parsed. */
export type Fields = Record<string, unknown>;

/** An authorization request that passed every check: what a code would be issued for. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string | null;
}

/**
 * What to do with an authorization request: show an error to the user (an unknown client or a
 * callback it did not register: never redirected), send an error back to the client's callback,
 * or go on with the checked request.
 */
export type AuthorizationCheck =
  | { outcome: 'show'; title: string; message: string }
  | { outcome: 'redirect'; location: string }
  | { outcome: 'valid'; request: AuthorizationRequest };

/** The answer of the token endpoint (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  scope: string;
}

/**
 * The web application flow of spec 5 (docs/oauth.md): checking authorization requests, issuing
 * authorization codes (single use, 60 seconds, optionally PKCE S256), authenticating clients,
 * exchanging codes for tokens and revoking tokens (RFC 7009). Failures are OAuthErrors.
 */
export class OAuthService {
  /**
   * The dashboard's own client: public (PKCE), no consent screen, its one callback `PUBLIC_URL/app/`.
   * Its codes and tokens go to the signed-in account's hidden dashboard row (docs/oauth.md).
   */
  readonly #dashboard: OAuthClient;
  readonly #clock: () => number;

  constructor(
    private readonly deps: {
      store: Store;
      tokens: TokenService;
      publicUrl: string;
      /** The clock in milliseconds (Date.now by default); tests move it to expire codes. */
      now?: () => number;
    },
  ) {
    this.#clock = deps.now ?? Date.now;
    this.#dashboard = {
      client_id: DASHBOARD_CLIENT_ID,
      account_id: '',
      name: DASHBOARD_NAME,
      website_url: deps.publicUrl,
      callback_url: dashboardCallback(deps.publicUrl),
      secret_hash: '',
      is_public: 1,
    };
  }

  /** Whether the client is the dashboard's own, which asks no consent. */
  isDashboard(client: OAuthClient): boolean {
    return client === this.#dashboard;
  }

  /**
   * Checks an authorization request: its client and callback, then (when `responseType` is asked
   * for, as on the first screen) response_type, then state, scope and PKCE.
   */
  async checkAuthorization(fields: Fields, options: { responseType: boolean }): Promise<AuthorizationCheck> {
    const clientId = single(fields, 'client_id');
    const redirectUri = single(fields, 'redirect_uri');
    const client = typeof clientId === 'string' ? await this.#findClient(clientId) : undefined;
    if (!client) {
      return {
        outcome: 'show',
        title: 'Unknown application',
        message: 'The application that sent you here is not registered with Vigil (client_id is unknown).',
      };
    }
    if (redirectUri !== client.callback_url) {
      return {
        outcome: 'show',
        title: 'Wrong callback URL',
        message: `The redirect_uri sent by ${client.name} is not the callback URL it registered, so Vigil will not send you there.`,
      };
    }
    const checked = checkParameters(fields, client, options);
    if (checked instanceof OAuthError) {
      return { outcome: 'redirect', location: errorLocation(redirectUri, checked, validState(fields)) };
    }
    return { outcome: 'valid', request: { client, redirectUri, ...checked } };
  }

  /**
   * The signed-in account's answer on the consent screen (`authorize` or `deny`): the callback URL
   * with a new code, or with the error.
   */
  async decide(request: AuthorizationRequest, accountId: string, decision: unknown): Promise<string> {
    if (decision === 'authorize') return this.issueCode(request, accountId);
    const error =
      decision === 'deny'
        ? new OAuthError('access_denied', 'The user declined')
        : new OAuthError('invalid_request', 'decision must be authorize or deny');
    return errorLocation(request.redirectUri, error, request.state);
  }

  /** Creates a code for the account and answers the callback URL that carries it. */
  async issueCode(request: AuthorizationRequest, accountId: string): Promise<string> {
    const code = newSecret(AUTHORIZATION_CODE_PREFIX);
    const now = this.#nowSeconds();
    await this.deps.store.transaction(async (trx) => {
      const clientId = this.isDashboard(request.client)
        ? await oauthRepo.ensureDashboardClient(trx, {
            clientId: newId(),
            accountId,
            name: DASHBOARD_NAME,
            websiteUrl: this.deps.publicUrl,
            callbackUrl: dashboardCallback(this.deps.publicUrl),
            // A secret nobody is told: the dashboard is a public client.
            secretHash: hashSecret(newSecret()),
            createdAt: Math.floor(now),
          })
        : request.client.client_id;
      await oauthRepo.deleteCodesExpiredBefore(trx, now - CODE_RETENTION_SECONDS);
      await oauthRepo.insertCode(trx, {
        codeHash: hashSecret(code),
        clientId,
        accountId,
        redirectUri: request.redirectUri,
        scopes: request.scopes.join(' '),
        codeChallenge: request.codeChallenge,
        createdAt: now,
        expiresAt: now + CODE_TTL_SECONDS,
      });
    });
    return callbackWith(request.redirectUri, { code, state: request.state });
  }

  /** The client behind the credentials; invalid_client when unknown or the secret does not match. */
  async authenticateClient(credentials: ClientCredentials): Promise<OAuthClient> {
    if (credentials.clientId === DASHBOARD_CLIENT_ID) {
      if (credentials.clientSecret !== undefined) {
        throw new OAuthError('invalid_client', 'The dashboard client is public and has no client secret');
      }
      return this.#dashboard;
    }
    const client = await this.#findClient(credentials.clientId);
    if (!client) throw new OAuthError('invalid_client', 'Unknown client or wrong client secret');
    if (credentials.clientSecret !== undefined) {
      if (!secretMatches(credentials.clientSecret, client.secret_hash)) {
        throw new OAuthError('invalid_client', 'Unknown client or wrong client secret');
      }
    } else if (client.is_public !== 1) {
      throw new OAuthError('invalid_client', 'This client must authenticate with its client_secret');
    }
    return client;
  }

  /**
   * The token endpoint: exchanges a code for a token, once. A code presented again revokes the token
   * it was exchanged for (RFC 6749 §4.1.2).
   */
  async exchangeCode(client: OAuthClient, form: Fields): Promise<TokenResponse> {
    const grant = codeGrant(form);
    const codeHash = hashSecret(grant.code);
    const db = this.deps.store.db;
    const row = await oauthRepo.findCode(db, codeHash);
    if (!row) throw new OAuthError('invalid_grant', 'The code is unknown');
    if (row.used_at !== null) {
      await this.#revokeMinted(codeHash);
      throw new OAuthError('invalid_grant', 'The code was already used; its token has been revoked');
    }
    const now = this.#nowSeconds();
    const issuedToClient = this.isDashboard(client)
      ? await oauthRepo.isDashboardClient(db, row.client_id, row.account_id)
      : row.client_id === client.client_id;
    if (!issuedToClient) throw new OAuthError('invalid_grant', 'The code was issued to another client');
    if (row.expires_at <= now) throw new OAuthError('invalid_grant', 'The code has expired');
    if (row.redirect_uri !== grant.redirectUri) {
      throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request');
    }
    if (row.code_challenge !== null) {
      if (grant.verifier === undefined || !verifyPkce(grant.verifier, row.code_challenge)) {
        throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
      }
    } else if (grant.verifier !== undefined) {
      throw new OAuthError('invalid_grant', 'code_verifier was sent but the request had no code_challenge');
    }

    const scopes = row.scopes.split(' ').filter(isScope);
    const issued = await this.deps.store.transaction(async (trx) => {
      if (!(await oauthRepo.consumeCode(trx, codeHash, now))) return undefined;
      const token = await this.deps.tokens.issue(trx, {
        accountId: row.account_id,
        clientId: row.client_id,
        scopes,
        kind: this.isDashboard(client) ? 'dashboard' : 'oauth',
      });
      await oauthRepo.recordToken(trx, codeHash, token.id);
      return token;
    });
    if (!issued) {
      await this.#revokeMinted(codeHash);
      throw new OAuthError('invalid_grant', 'The code was already used; its token has been revoked');
    }
    return { access_token: issued.token, token_type: 'bearer', scope: scopes.join(' ') };
  }

  /** RFC 7009: revokes the token when it was issued to this client; any other token is left alone. */
  async revoke(client: OAuthClient, form: Fields): Promise<void> {
    const token = single(form, 'token');
    if (typeof token !== 'string') throw new OAuthError('invalid_request', 'token is required (once)');
    const tokenHash = hashSecret(token);
    const now = Math.floor(this.#nowSeconds());
    const db = this.deps.store.db;
    if (this.isDashboard(client)) await oauthRepo.revokeDashboardToken(db, tokenHash, now);
    else await oauthRepo.revokeClientToken(db, tokenHash, client.client_id, now);
  }

  #nowSeconds(): number {
    return this.#clock() / 1000;
  }

  /** A registered client, or the dashboard's own by its fixed id. Client ids are UUIDs. */
  async #findClient(clientId: string): Promise<OAuthClient | undefined> {
    if (clientId === DASHBOARD_CLIENT_ID) return this.#dashboard;
    if (!isUuid(clientId)) return undefined;
    return oauthRepo.findClient(this.deps.store.db, clientId);
  }

  /** Revokes the token a code was exchanged for (the code was presented twice: RFC 6749 §4.1.2). */
  async #revokeMinted(codeHash: string): Promise<void> {
    const db = this.deps.store.db;
    const row = await oauthRepo.findCode(db, codeHash);
    if (row?.token_id) await oauthRepo.revokeTokenById(db, row.token_id, Math.floor(this.#nowSeconds()));
  }
}

/** response_type (when asked for), state, scope and PKCE of an authorization request. */
function checkParameters(
  fields: Fields,
  client: OAuthClient,
  options: { responseType: boolean },
): Omit<AuthorizationRequest, 'client' | 'redirectUri'> | OAuthError {
  if (options.responseType) {
    const responseType = single(fields, 'response_type');
    if (responseType === null) return new OAuthError('invalid_request', 'response_type must be sent once');
    if (responseType !== 'code') {
      return new OAuthError('unsupported_response_type', 'response_type must be code');
    }
  }
  const state = single(fields, 'state');
  if (state === null || (state !== undefined && !isValidState(state))) {
    return new OAuthError('invalid_request', 'state must be sent once, at most 1024 characters');
  }
  const scope = single(fields, 'scope');
  if (scope === null) return new OAuthError('invalid_request', 'scope must be sent once');
  const scopes = parseScopes(scope);
  if (!scopes) return new OAuthError('invalid_scope', 'scope names an unknown scope');
  const challenge = single(fields, 'code_challenge');
  const method = single(fields, 'code_challenge_method');
  if (challenge === null || method === null) {
    return new OAuthError('invalid_request', 'code_challenge and its method must be sent once');
  }
  if (challenge !== undefined || method !== undefined) {
    if (method !== 'S256') return new OAuthError('invalid_request', 'code_challenge_method must be S256');
    if (challenge === undefined || !isValidChallenge(challenge)) {
      return new OAuthError('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
    }
  }
  if (client.is_public === 1 && challenge === undefined) {
    return new OAuthError('invalid_request', 'This application must send a PKCE code_challenge (S256)');
  }
  return { scopes, state, codeChallenge: challenge ?? null };
}

/** The fields of an authorization_code grant (RFC 6749 §4.1.3). */
function codeGrant(form: Fields): { code: string; redirectUri: string; verifier: string | undefined } {
  const grantType = single(form, 'grant_type');
  if (grantType === undefined || grantType === null) {
    throw new OAuthError('invalid_request', 'grant_type is required (once)');
  }
  if (grantType !== 'authorization_code') {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code');
  }
  const code = single(form, 'code');
  const redirectUri = single(form, 'redirect_uri');
  const verifier = single(form, 'code_verifier');
  if (typeof code !== 'string') throw new OAuthError('invalid_request', 'code is required (once)');
  if (typeof redirectUri !== 'string')
    throw new OAuthError('invalid_request', 'redirect_uri is required (once)');
  if (verifier === null) throw new OAuthError('invalid_request', 'code_verifier may be sent once');
  return { code, redirectUri, verifier };
}

/** The `state` to echo on an error redirect: only a valid one. */
function validState(fields: Fields): string | undefined {
  const state = single(fields, 'state');
  return typeof state === 'string' && isValidState(state) ? state : undefined;
}

function errorLocation(callback: string, error: OAuthError, state: string | undefined): string {
  return callbackWith(callback, { error: error.code, error_description: error.description, state });
}
