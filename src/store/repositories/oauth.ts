import type { Selectable } from 'kysely';
import type { ClientApplicationTable } from '../database.js';
import type { Executor } from '../store.js';

/**
 * `client_applications.builtin` of an account's hidden dashboard row (docs/oauth.md, "The
 * dashboard's own client"): the row its dashboard codes and tokens point to.
 */
export const DASHBOARD_BUILTIN = 'dashboard';

/** A client application as the OAuth flow needs it, secret hash included. */
export type OAuthClientRow = Omit<Selectable<ClientApplicationTable>, 'created_at' | 'builtin'>;

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

export interface NewCode {
  codeHash: string;
  clientId: string;
  accountId: string;
  redirectUri: string;
  /** Space-separated scope names. */
  scopes: string;
  codeChallenge: string | null;
  createdAt: number;
  expiresAt: number;
}

/** The fields of an account's dashboard row, made on its first use. */
export interface NewDashboardClient {
  clientId: string;
  accountId: string;
  name: string;
  websiteUrl: string;
  callbackUrl: string;
  secretHash: string;
  createdAt: number;
}

const CODE_COLUMNS = [
  'client_id',
  'account_id',
  'redirect_uri',
  'scopes',
  'code_challenge',
  'expires_at',
  'used_at',
  'token_id',
] as const;

const findDashboardClientId = (db: Executor, accountId: string) =>
  db
    .selectFrom('client_applications')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('builtin', '=', DASHBOARD_BUILTIN)
    .executeTakeFirst();

/** Queries of the OAuth flow: clients by id, authorization codes, and tokens by hash. */
export const oauthRepo = {
  /** A registered application by its id; built-in rows are never found this way. */
  async findClient(db: Executor, clientId: string): Promise<OAuthClientRow | undefined> {
    return db
      .selectFrom('client_applications')
      .select(['client_id', 'account_id', 'name', 'website_url', 'callback_url', 'secret_hash', 'is_public'])
      .where('client_id', '=', clientId)
      .where('builtin', 'is', null)
      .executeTakeFirst();
  },

  /**
   * The client id of the account's dashboard row, inserting `row` when there is none yet. Two first
   * uses at once meet the unique (account_id, builtin) index; the loser inserts nothing and reads
   * the winner's row.
   */
  async ensureDashboardClient(db: Executor, row: NewDashboardClient): Promise<string> {
    const existing = await findDashboardClientId(db, row.accountId);
    if (existing) return existing.client_id;
    await db
      .insertInto('client_applications')
      .values({
        client_id: row.clientId,
        account_id: row.accountId,
        name: row.name,
        website_url: row.websiteUrl,
        callback_url: row.callbackUrl,
        secret_hash: row.secretHash,
        is_public: 1,
        created_at: row.createdAt,
        builtin: DASHBOARD_BUILTIN,
      })
      .onConflict((conflict) => conflict.columns(['account_id', 'builtin']).doNothing())
      .execute();
    const created = await findDashboardClientId(db, row.accountId);
    if (!created) throw new Error(`the dashboard client of account ${row.accountId} could not be created`);
    return created.client_id;
  },

  /** Whether this client row is the account's dashboard row. */
  async isDashboardClient(db: Executor, clientId: string, accountId: string): Promise<boolean> {
    const row = await db
      .selectFrom('client_applications')
      .select('client_id')
      .where('client_id', '=', clientId)
      .where('account_id', '=', accountId)
      .where('builtin', '=', DASHBOARD_BUILTIN)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Deletes the codes that expired before this time (Unix seconds). */
  async deleteCodesExpiredBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('oauth_codes').where('expires_at', '<', before).execute();
  },

  async insertCode(db: Executor, code: NewCode): Promise<void> {
    await db
      .insertInto('oauth_codes')
      .values({
        code_hash: code.codeHash,
        client_id: code.clientId,
        account_id: code.accountId,
        redirect_uri: code.redirectUri,
        scopes: code.scopes,
        code_challenge: code.codeChallenge,
        created_at: code.createdAt,
        expires_at: code.expiresAt,
        used_at: null,
        token_id: null,
      })
      .execute();
  },

  async findCode(db: Executor, codeHash: string): Promise<CodeRow | undefined> {
    return db
      .selectFrom('oauth_codes')
      .select(CODE_COLUMNS)
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

  /** Notes the token a code was exchanged for, so that presenting the code again can revoke it. */
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
