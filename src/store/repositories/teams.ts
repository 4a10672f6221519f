import type { TeamInvitationRow, TeamRoleRow } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

export interface MemberRow {
  id: string;
  name: string;
  email: string;
  role: 'owner' | 'member';
  role_id: string | null;
  role_name: string | null;
  /** The role's permissions (JSON), null without a role. */
  permissions: string | null;
  created_at: number;
  last_login_at: number | null;
}

/** The teams the account is a member of, with its role in each, the team it joined first first. */
export const teamsOfMember = (db: Executor, accountId: string) =>
  db
    .selectFrom('team_members')
    .innerJoin('teams', 'teams.id', 'team_members.team_id')
    .select(['teams.id', 'teams.name', 'team_members.role'])
    .where('team_members.account_id', '=', accountId)
    .orderBy('team_members.created_at')
    .orderBy('teams.id');

/** The members of a team joined to their accounts, the earliest member first. */
const membersOf = (db: Executor, teamId: string) =>
  db
    .selectFrom('team_members')
    .innerJoin('accounts', 'accounts.id', 'team_members.account_id')
    .where('team_members.team_id', '=', teamId)
    .orderBy('team_members.created_at')
    .orderBy('accounts.id');

type BucketMembership = { role: 'owner' | 'member'; permissions: string | null };

/** Read before every request in a bucket (the role check), so compiled once. */
const membershipOfBucket = preparedQuery<{ bucketKey: string; accountId: string }, BucketMembership>(
  ['bucketKey', 'accountId'],
  (db, p) =>
    db
      .selectFrom('buckets')
      .innerJoin('team_members', 'team_members.team_id', 'buckets.team_id')
      .leftJoin('team_roles', 'team_roles.id', 'team_members.role_id')
      .select(['team_members.role', 'team_roles.permissions'])
      .where('buckets.key', '=', p.bucketKey)
      .where('team_members.account_id', '=', p.accountId),
  { keepPreparedOnPostgres: true },
);

export const teamsRepo = {
  /** The team with the account's role in it, or undefined when the account is no member. */
  teamOfMember(
    db: Executor,
    teamId: string,
    accountId: string,
  ): Promise<{ id: string; name: string; role: 'owner' | 'member' } | undefined> {
    return teamsOfMember(db, accountId).where('teams.id', '=', teamId).executeTakeFirst();
  },

  /** The members' accounts: id, name and e-mail address, the earliest member first. */
  memberAccounts(db: Executor, teamId: string): Promise<{ id: string; name: string; email: string }[]> {
    return membersOf(db, teamId).select(['accounts.id', 'accounts.name', 'accounts.email']).execute();
  },

  team(db: Executor, id: string): Promise<{ id: string; name: string }> {
    return db.selectFrom('teams').select(['id', 'name']).where('id', '=', id).executeTakeFirstOrThrow();
  },

  /** The members of a team with their role, oldest member first; `last_login_at` is the newest web sign-in kept. */
  members(db: Executor, teamId: string): Promise<MemberRow[]> {
    return membersOf(db, teamId)
      .leftJoin('team_roles', 'team_roles.id', 'team_members.role_id')
      .select((eb) => [
        'accounts.id',
        'accounts.name',
        'accounts.email',
        'team_members.role',
        'team_members.role_id',
        'team_roles.name as role_name',
        'team_roles.permissions',
        'accounts.created_at',
        eb
          .selectFrom('web_sessions')
          .select((s) => s.fn.max('web_sessions.created_at').as('at'))
          .whereRef('web_sessions.account_id', '=', 'accounts.id')
          .as('last_login_at'),
      ])
      .execute() as Promise<MemberRow[]>;
  },

  membership(
    db: Executor,
    teamId: string,
    accountId: string,
  ): Promise<{ role: 'owner' | 'member'; role_id: string | null; permissions: string | null } | undefined> {
    return db
      .selectFrom('team_members')
      .leftJoin('team_roles', 'team_roles.id', 'team_members.role_id')
      .select(['team_members.role', 'team_members.role_id', 'team_roles.permissions'])
      .where('team_members.team_id', '=', teamId)
      .where('team_members.account_id', '=', accountId)
      .executeTakeFirst();
  },

  /** The caller's membership in the team that owns the bucket, or undefined (no such bucket, or not a member). */
  async membershipByBucket(
    db: Executor,
    bucketKey: string,
    accountId: string,
  ): Promise<BucketMembership | undefined> {
    return (await membershipOfBucket(db, { bucketKey, accountId }))[0];
  },

  async addMember(
    db: Executor,
    row: { team_id: string; account_id: string; role_id: string | null; created_at: number },
  ): Promise<void> {
    await db
      .insertInto('team_members')
      .values({ ...row, role: 'member' })
      .onConflict((oc) => oc.columns(['team_id', 'account_id']).doUpdateSet({ role_id: row.role_id }))
      .execute();
  },

  async setMemberRole(db: Executor, teamId: string, accountId: string, roleId: string | null): Promise<void> {
    await db
      .updateTable('team_members')
      .set({ role_id: roleId })
      .where('team_id', '=', teamId)
      .where('account_id', '=', accountId)
      .execute();
  },

  async removeMember(db: Executor, teamId: string, accountId: string): Promise<void> {
    await db
      .deleteFrom('team_members')
      .where('team_id', '=', teamId)
      .where('account_id', '=', accountId)
      .execute();
  },

  roles(db: Executor, teamId: string): Promise<TeamRoleRow[]> {
    return db
      .selectFrom('team_roles')
      .selectAll()
      .where('team_id', '=', teamId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  role(db: Executor, teamId: string, id: string): Promise<TeamRoleRow | undefined> {
    return db
      .selectFrom('team_roles')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async insertRole(db: Executor, row: TeamRoleRow): Promise<void> {
    await db.insertInto('team_roles').values(row).execute();
  },

  async updateRole(db: Executor, row: TeamRoleRow): Promise<void> {
    await db
      .updateTable('team_roles')
      .set({ name: row.name, permissions: row.permissions })
      .where('id', '=', row.id)
      .execute();
  },

  async deleteRole(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('team_roles').where('id', '=', id).execute();
  },

  async roleHolders(db: Executor, roleId: string): Promise<number> {
    const row = await db
      .selectFrom('team_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role_id', '=', roleId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  invitations(db: Executor, teamId: string, now: number): Promise<TeamInvitationRow[]> {
    return db
      .selectFrom('team_invitations')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('expires_at', '>', now)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  invitationByTokenHash(db: Executor, tokenHash: string): Promise<TeamInvitationRow | undefined> {
    return db
      .selectFrom('team_invitations')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  },

  async insertInvitation(db: Executor, row: TeamInvitationRow): Promise<void> {
    await db.insertInto('team_invitations').values(row).execute();
  },

  async deleteInvitation(db: Executor, teamId: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('team_invitations')
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};
