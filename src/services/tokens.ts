import { hashSecret, newId, newSecret, nowSeconds } from '../domain/ids.js';
import { isScope, SCOPES, type Scope } from '../domain/scopes.js';
import { tokensRepo } from '../store/repositories/tokens.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';

/** Access tokens are shown once and kept only as SHA-256 hashes. */
export const ACCESS_TOKEN_PREFIX = 'vgl_at_';
export const CLIENT_SECRET_PREFIX = 'vgl_cs_';
/** How stale `last_used_at` may get before a request refreshes it (seconds); keeps reads write-free. */
const TOUCH_INTERVAL = 300;

export interface IssuedToken {
  id: string;
  token: string;
}

export class TokenService {
  constructor(private readonly deps: { store: Store }) {}

  /** The principal behind a bearer token, or undefined when the token is unknown or revoked. */
  async authenticate(token: string): Promise<Principal | undefined> {
    if (token.length < 16 || token.length > 512) return undefined;
    const row = await tokensRepo.findLiveByHash(this.deps.store.db, hashSecret(token));
    if (!row) return undefined;
    const now = nowSeconds();
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
      kind: 'personal' | 'oauth';
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
    });
    return { id, token };
  }

  /**
   * Registers a client application for an account and, as spec 5.2 says, authorizes the owner's own
   * account at once: the answer carries a personal access token with every scope.
   */
  async createApplication(
    db: Executor,
    options: { accountId: string; name: string; websiteUrl: string; callbackUrl: string },
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
      is_public: 0,
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
}
