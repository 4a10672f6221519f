import type { Insertable, Selectable } from 'kysely';
import type { AccessTokenTable, ClientApplicationTable } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

export interface TokenWithAccount {
  id: string;
  account_id: string;
  scopes: string;
  last_used_at: number | null;
  name: string;
  email: string;
}

/** A client application as its owner sees it: everything but the secret's hash (never a built-in row). */
export type ClientApplication = Omit<Selectable<ClientApplicationTable>, 'secret_hash' | 'builtin'>;

/** What a token was issued as: the holder's own, granted to an application, or the web dashboard's. */
export type TokenKind = AccessTokenTable['kind'];

/** A live token as its account lists it: never the token or its hash. */
export interface TokenSummary {
  id: string;
  kind: TokenKind;
  name: string | null;
  client_id: string | null;
  client_name: string | null;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
}

const CLIENT_COLUMNS = [
  'client_id',
  'account_id',
  'name',
  'website_url',
  'callback_url',
  'is_public',
  'created_at',
] as const;

const liveTokenByHash = preparedQuery<{ tokenHash: string; now: number }, TokenWithAccount>(
  ['tokenHash', 'now'],
  (db, p) =>
    db
      .selectFrom('access_tokens')
      .innerJoin('accounts', 'accounts.id', 'access_tokens.account_id')
      .select([
        'access_tokens.id',
        'access_tokens.account_id',
        'access_tokens.scopes',
        'access_tokens.last_used_at',
        'accounts.name',
        'accounts.email',
      ])
      .where('access_tokens.token_hash', '=', p.tokenHash)
      .where('access_tokens.revoked_at', 'is', null)
      .where((eb) =>
        eb.or([eb('access_tokens.expires_at', 'is', null), eb('access_tokens.expires_at', '>', p.now)]),
      ),
  // Read on every request by its unique hash: one plan serves every value.
  { keepPreparedOnPostgres: true },
);

export const tokensRepo = {
  async insertToken(
    db: Executor,
    token: {
      id: string;
      token_hash: string;
      account_id: string;
      client_id: string | null;
      scopes: string;
      kind: TokenKind;
      created_at: number;
      name?: string | null;
      expires_at?: number | null;
    },
  ): Promise<void> {
    await db
      .insertInto('access_tokens')
      .values({ name: null, expires_at: null, ...token, last_used_at: null, revoked_at: null })
      .execute();
  },

  /** The live (unrevoked, unexpired at `now`) token with this hash, with its account's name and e-mail. */
  async findLiveByHash(db: Executor, tokenHash: string, now: number): Promise<TokenWithAccount | undefined> {
    return (await liveTokenByHash(db, { tokenHash, now }))[0];
  },

  async touch(db: Executor, id: string, now: number): Promise<void> {
    await db.updateTable('access_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  },

  async insertClient(db: Executor, client: Insertable<ClientApplicationTable>): Promise<void> {
    await db.insertInto('client_applications').values(client).execute();
  },
  async findClient(
    db: Executor,
    accountId: string,
    clientId: string,
  ): Promise<ClientApplication | undefined> {
    return db
      .selectFrom('client_applications')
      .select(CLIENT_COLUMNS)
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .where('builtin', 'is', null)
      .executeTakeFirst();
  },

  /** The account's own applications; built-in rows (the dashboard's client) are not among them. */
  async listClients(db: Executor, accountId: string): Promise<ClientApplication[]> {
    return db
      .selectFrom('client_applications')
      .select(CLIENT_COLUMNS)
      .where('account_id', '=', accountId)
      .where('builtin', 'is', null)
      .orderBy('created_at')
      .orderBy('client_id')
      .execute();
  },

  /** Replaces the secret's hash; false when the account has no such application. */
  async updateClientSecret(
    db: Executor,
    accountId: string,
    clientId: string,
    secretHash: string,
  ): Promise<boolean> {
    const result = await db
      .updateTable('client_applications')
      .set({ secret_hash: secretHash })
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .where('builtin', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Deletes the application; its tokens go with it (access_tokens.client_id cascades). */
  async deleteClient(db: Executor, accountId: string, clientId: string): Promise<boolean> {
    const result = await db
      .deleteFrom('client_applications')
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .where('builtin', 'is', null)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** What the token was issued as, and its name when it was made on the token page. */
  async kindOf(db: Executor, tokenId: string): Promise<{ kind: TokenKind; name: string | null } | undefined> {
    return db
      .selectFrom('access_tokens')
      .select(['kind', 'name'])
      .where('id', '=', tokenId)
      .executeTakeFirst();
  },

  /** The account's unrevoked, unexpired tokens with the name of the application each was issued to, newest first. */
  async listLive(db: Executor, accountId: string, now: number): Promise<TokenSummary[]> {
    return db
      .selectFrom('access_tokens')
      .leftJoin('client_applications', 'client_applications.client_id', 'access_tokens.client_id')
      .select([
        'access_tokens.id',
        'access_tokens.kind',
        'access_tokens.name',
        'access_tokens.client_id',
        'client_applications.name as client_name',
        'access_tokens.scopes',
        'access_tokens.created_at',
        'access_tokens.last_used_at',
        'access_tokens.expires_at',
      ])
      .where('access_tokens.account_id', '=', accountId)
      .where('access_tokens.revoked_at', 'is', null)
      .where((eb) =>
        eb.or([eb('access_tokens.expires_at', 'is', null), eb('access_tokens.expires_at', '>', now)]),
      )
      .orderBy('access_tokens.created_at', 'desc')
      .orderBy('access_tokens.id')
      .execute();
  },

  /** Marks a live token of the account revoked; false when there is none with this id. */
  async revoke(db: Executor, accountId: string, tokenId: string, now: number): Promise<boolean> {
    const result = await db
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', tokenId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
