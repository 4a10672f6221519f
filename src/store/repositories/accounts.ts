import type { AccountRow } from '../database.js';
import type { Executor } from '../store.js';
import { teamsOfMember } from './teams.js';

export interface TeamSummary {
  id: string;
  name: string;
  role: 'owner' | 'member';
}

export const accountsRepo = {
  findByEmail(db: Executor, email: string): Promise<AccountRow | undefined> {
    return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
  },

  findById(db: Executor, id: string): Promise<AccountRow | undefined> {
    return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  },

  async insert(db: Executor, account: AccountRow): Promise<void> {
    await db.insertInto('accounts').values(account).execute();
  },

  async insertTeam(db: Executor, team: { id: string; name: string; created_at: number }): Promise<void> {
    await db.insertInto('teams').values(team).execute();
  },

  async addMember(
    db: Executor,
    teamId: string,
    accountId: string,
    role: 'owner' | 'member',
    now: number,
  ): Promise<void> {
    await db
      .insertInto('team_members')
      .values({ team_id: teamId, account_id: accountId, role, created_at: now })
      .execute();
  },

  async updateName(db: Executor, id: string, name: string): Promise<void> {
    await db.updateTable('accounts').set({ name }).where('id', '=', id).execute();
  },

  async updatePasswordHash(db: Executor, id: string, passwordHash: string): Promise<void> {
    await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', id).execute();
  },

  /** Ends every web session of the account (its browsers must sign in again). */
  async deleteWebSessions(db: Executor, accountId: string): Promise<void> {
    await db.deleteFrom('web_sessions').where('account_id', '=', accountId).execute();
  },

  teamsOf(db: Executor, accountId: string): Promise<TeamSummary[]> {
    return teamsOfMember(db, accountId).execute();
  },
};
