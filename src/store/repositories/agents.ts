import type { AgentRow, AgentTable } from '../database.js';
import type { Executor } from '../store.js';

/** Agents that are not deleted. */
const live = (db: Executor) => db.selectFrom('agents').selectAll().where('deleted_at', 'is', null);

export const agentsRepo = {
  async insert(db: Executor, row: AgentTable): Promise<void> {
    await db.insertInto('agents').values(row).execute();
  },

  /** The team's agents, oldest first. */
  async listForTeam(db: Executor, teamId: string): Promise<AgentRow[]> {
    return live(db).where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
  },

  async ofTeam(db: Executor, teamId: string, id: string): Promise<AgentRow | undefined> {
    return live(db).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  },

  /** These agents of the team, where not deleted (the agents an environment picks). */
  async someOfTeam(db: Executor, teamId: string, ids: readonly string[]): Promise<AgentRow[]> {
    if (ids.length === 0) return [];
    return live(db)
      .where('team_id', '=', teamId)
      .where('id', 'in', [...ids])
      .execute();
  },

  async byTokenHash(db: Executor, tokenHash: string): Promise<AgentRow | undefined> {
    return live(db).where('token_hash', '=', tokenHash).executeTakeFirst();
  },

  /** Marks the agent deleted; false when there was none. */
  async markDeleted(db: Executor, teamId: string, id: string, at: number): Promise<boolean> {
    const result = await db
      .updateTable('agents')
      .set({ deleted_at: at })
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async seen(
    db: Executor,
    id: string,
    seen: { last_seen_at: number; version: string | null; hostname: string | null },
  ): Promise<void> {
    await db.updateTable('agents').set(seen).where('id', '=', id).execute();
  },
};
