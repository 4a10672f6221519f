import type { Insertable } from 'kysely';
import type { ClientApplicationTable } from '../database.js';
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

const liveTokenByHash = preparedQuery<{ tokenHash: string }, TokenWithAccount>(['tokenHash'], (db, p) =>
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
    .where('access_tokens.revoked_at', 'is', null),
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
      kind: 'personal' | 'oauth';
      created_at: number;
    },
  ): Promise<void> {
    await db
      .insertInto('access_tokens')
      .values({ ...token, last_used_at: null, revoked_at: null })
      .execute();
  },

  /** The live (unrevoked) token with this hash, with its account's name and e-mail. */
  async findLiveByHash(db: Executor, tokenHash: string): Promise<TokenWithAccount | undefined> {
    return (await liveTokenByHash(db, { tokenHash }))[0];
  },

  async touch(db: Executor, id: string, now: number): Promise<void> {
    await db.updateTable('access_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  },

  async insertClient(db: Executor, client: Insertable<ClientApplicationTable>): Promise<void> {
    await db.insertInto('client_applications').values(client).execute();
  },
};
