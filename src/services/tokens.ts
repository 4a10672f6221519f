import { AppError, notFound } from '../domain/errors.js';
import { hashSecret, isUuid, newId, newSecret, nowSeconds } from '../domain/ids.js';
import { isScope, SCOPES, type Scope } from '../domain/scopes.js';
import { type TokenKind, type TokenSummary, tokensRepo } from '../store/repositories/tokens.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';

/** Access tokens are shown once and kept only as SHA-256 hashes. */
export const ACCESS_TOKEN_PREFIX = 'vgl_at_';
export const CLIENT_SECRET_PREFIX = 'vgl_cs_';
/** How stale `last_used_at` may get before a request refreshes it (seconds); keeps reads write-free. */
const TOUCH_INTERVAL = 300;
/** The longest lifetime a token made on the token page may be given (seconds): ten years. */
export const MAX_TOKEN_LIFETIME = 10 * 365 * 24 * 3600;

export interface IssuedToken {
  id: string;
  token: string;
}

/** A live token as its account sees it (DESIGN §2: never the token or its hash). */
export type TokenView = Omit<TokenSummary, 'scopes'> & { scopes: Scope[] };

export class TokenService {
  constructor(private readonly deps: { store: Store }) {}

  /** The principal behind a bearer token, or undefined when the token is unknown or revoked. */
  async authenticate(token: string): Promise<Principal | undefined> {
    if (token.length < 16 || token.length > 512) return undefined;
    const now = nowSeconds();
    const row = await tokensRepo.findLiveByHash(this.deps.store.db, hashSecret(token), now);
    if (!row) return undefined;
    if (row.last_used_at === null || now - row.last_used_at > TOUCH_INTERVAL) {
      tokensRepo.touch(this.deps.store.db, row.id, now).catch(() => {});
    }
    return {
      accountId: row.account_id,
      tokenId: row.id,
      name: row.name,
      email: row.email,
      scopes: new Set(row.scopes.split(' ').filter(isScope)),
    };
  }

  /** Mints a token for an account; the plain value is returned once and never stored. */
  async issue(
    db: Executor,
    options: {
      accountId: string;
      clientId: string | null;
      scopes: readonly Scope[];
      kind: TokenKind;
      name?: string | null;
      expiresAt?: number | null;
    },
  ): Promise<IssuedToken> {
    const token = newSecret(ACCESS_TOKEN_PREFIX);
    const id = newId();
    await tokensRepo.insertToken(db, {
      id,
      token_hash: hashSecret(token),
      account_id: options.accountId,
      client_id: options.clientId,
      scopes: options.scopes.join(' '),
      kind: options.kind,
      created_at: nowSeconds(),
      name: options.name ?? null,
      expires_at: options.expiresAt ?? null,
    });
    return { id, token };
  }

  /**
   * A personal token the account holder names, limited to some scopes and, when `expiresIn` is
   * given, to that many seconds. Shown once. A token with fewer than every scope is not personal
   * enough to manage credentials (isPersonal), so it can never mint a wider one.
   */
  async createForAccount(
    principal: Principal,
    options: { name: string; scopes: readonly string[]; expiresIn?: number | null },
  ): Promise<TokenView & { token: string }> {
    const name = options.name.trim();
    if (!name) throw new AppError('validation_failed', '/name must not be blank', '/name');
    const scopes = [...new Set(options.scopes)];
    if (scopes.length === 0)
      throw new AppError('validation_failed', '/scopes must name at least one scope', '/scopes');
    const unknown = scopes.findIndex((scope) => !isScope(scope));
    if (unknown >= 0)
      throw new AppError(
        'validation_failed',
        `/scopes/${unknown} is not a scope: ${scopes[unknown]}`,
        `/scopes/${unknown}`,
      );
    const missing = scopes.find((scope) => !principal.scopes.has(scope as Scope));
    if (missing) throw new AppError('forbidden', `this token does not hold ${missing}, so it cannot give it`);
    const now = nowSeconds();
    const expiresAt = options.expiresIn ? now + options.expiresIn : null;
    const ordered = SCOPES.filter((scope) => scopes.includes(scope));
    const issued = await this.issue(this.deps.store.db, {
      accountId: principal.accountId,
      clientId: null,
      scopes: ordered,
      kind: 'personal',
      name,
      expiresAt,
    });
    return {
      id: issued.id,
      token: issued.token,
      kind: 'personal',
      name,
      client_id: null,
      client_name: null,
      scopes: ordered,
      created_at: now,
      last_used_at: null,
      expires_at: expiresAt,
    };
  }

  /**
   * Registers a client application for an account and, as spec 5.2 says, authorizes the owner's own
   * account at once: the answer carries a personal access token with every scope.
   */
  async createApplication(
    db: Executor,
    options: {
      accountId: string;
      name: string;
      websiteUrl: string;
      callbackUrl: string;
      /** A client that cannot keep its secret (browser, mobile); it will have to use PKCE. */
      isPublic?: boolean;
    },
  ): Promise<{ clientId: string; clientSecret: string; accessToken: string }> {
    const clientId = newId();
    const clientSecret = newSecret(CLIENT_SECRET_PREFIX);
    await tokensRepo.insertClient(db, {
      client_id: clientId,
      account_id: options.accountId,
      name: options.name,
      website_url: options.websiteUrl,
      callback_url: options.callbackUrl,
      secret_hash: hashSecret(clientSecret),
      is_public: options.isPublic ? 1 : 0,
      created_at: nowSeconds(),
    });
    const { token } = await this.issue(db, {
      accountId: options.accountId,
      clientId,
      scopes: SCOPES,
      kind: 'personal',
    });
    return { clientId, clientSecret, accessToken: token };
  }

  /**
   * Personal tokens belong to the account holder; OAuth tokens were granted to an application. A
   * dashboard token counts as personal when it holds every scope, as a personal token does: it is
   * then the person acting in the service's own UI. One asked for with fewer scopes stays within
   * them, so it cannot mint a token with more (a new application's owner token has every scope);
   * so does a personal token made with fewer scopes on the token page.
   */
  async isPersonal(principal: Principal): Promise<boolean> {
    const token = await tokensRepo.kindOf(this.deps.store.db, principal.tokenId);
    const everyScope = SCOPES.every((scope) => principal.scopes.has(scope));
    if (token?.kind === 'personal') return token.name === null || everyScope;
    return token?.kind === 'dashboard' && everyScope;
  }

  /** A new secret for the account's application, shown once; the old one stops matching. */
  async rotateClientSecret(db: Executor, accountId: string, clientId: string): Promise<string> {
    const clientSecret = newSecret(CLIENT_SECRET_PREFIX);
    const updated =
      isUuid(clientId) &&
      (await tokensRepo.updateClientSecret(db, accountId, clientId, hashSecret(clientSecret)));
    if (!updated) throw notFound(`Application ${clientId}`);
    return clientSecret;
  }

  /** The account's live tokens, newest first. */
  async listForAccount(principal: Principal): Promise<TokenView[]> {
    const rows = await tokensRepo.listLive(this.deps.store.db, principal.accountId, nowSeconds());
    return rows.map((row) => ({ ...row, scopes: row.scopes.split(' ').filter(isScope) }));
  }

  /** Revokes one of the account's live tokens; it fails from the next request on. */
  async revoke(principal: Principal, tokenId: string): Promise<void> {
    const revoked =
      isUuid(tokenId) &&
      (await tokensRepo.revoke(this.deps.store.db, principal.accountId, tokenId, nowSeconds()));
    if (!revoked) throw notFound(`Token ${tokenId}`);
  }
}
