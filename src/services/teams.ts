import { notFound } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';

export interface TeamMembership {
  id: string;
  name: string;
  role: 'owner' | 'member';
}

/** Teams as the caller sees them: a team the caller is not a member of does not exist (404). */
export class TeamService {
  constructor(private readonly deps: { store: Store }) {}

  async requireMember(
    principal: Principal,
    teamId: string,
    db: Executor = this.deps.store.db,
  ): Promise<TeamMembership> {
    const team = isUuid(teamId)
      ? await db
          .selectFrom('team_members')
          .innerJoin('teams', 'teams.id', 'team_members.team_id')
          .select(['teams.id', 'teams.name', 'team_members.role'])
          .where('team_members.account_id', '=', principal.accountId)
          .where('teams.id', '=', teamId)
          .executeTakeFirst()
      : undefined;
    if (!team) throw notFound(`Team ${teamId}`);
    return team;
  }

  /** Members' names and e-mail addresses (for `notify_all`). */
  async members(
    teamId: string,
    db: Executor = this.deps.store.db,
  ): Promise<{ id: string; name: string; email: string }[]> {
    return db
      .selectFrom('team_members')
      .innerJoin('accounts', 'accounts.id', 'team_members.account_id')
      .select(['accounts.id', 'accounts.name', 'accounts.email'])
      .where('team_members.team_id', '=', teamId)
      .orderBy('team_members.created_at')
      .execute();
  }
}
