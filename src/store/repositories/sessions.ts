import type { Executor } from '../store.js';

export interface NewWebSession {
  idHash: string;
  accountId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

/** Browser sessions of the web pages, by the SHA-256 of their id. */
export const sessionsRepo = {
  /** The live session with this id hash: its account and CSRF token, unless unknown or expired at `now`. */
  findLive(
    db: Executor,
    idHash: string,
    now: number,
  ): Promise<{ account_id: string; csrf_token: string } | undefined> {
    return db
      .selectFrom('web_sessions')
      .select(['account_id', 'csrf_token'])
      .where('id_hash', '=', idHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /** Deletes the sessions expired at `now`. */
  async deleteExpired(db: Executor, now: number): Promise<void> {
    await db.deleteFrom('web_sessions').where('expires_at', '<=', now).execute();
  },

  async insert(db: Executor, session: NewWebSession): Promise<void> {
    await db
      .insertInto('web_sessions')
      .values({
        id_hash: session.idHash,
        account_id: session.accountId,
        csrf_token: session.csrfToken,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
      })
      .execute();
  },

  async delete(db: Executor, idHash: string): Promise<void> {
    await db.deleteFrom('web_sessions').where('id_hash', '=', idHash).execute();
  },
};
