import type { IntegrationRow } from '../database.js';
import type { Executor } from '../store.js';

export const integrationsRepo = {
  async insert(db: Executor, row: IntegrationRow): Promise<void> {
    await db.insertInto('integrations').values(row).execute();
  },

  listForTeam(db: Executor, teamId: string): Promise<IntegrationRow[]> {
    return db
      .selectFrom('integrations')
      .selectAll()
      .where('team_id', '=', teamId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  ofTeam(db: Executor, teamId: string, id: string): Promise<IntegrationRow | undefined> {
    return db
      .selectFrom('integrations')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Those of `ids` that belong to the team; unknown and foreign ids are left out. */
  async someOfTeam(db: Executor, teamId: string, ids: readonly string[]): Promise<IntegrationRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('integrations')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('id', 'in', ids)
      .execute();
  },

  async update(
    db: Executor,
    teamId: string,
    id: string,
    changes: Pick<IntegrationRow, 'description' | 'notify_on' | 'notify_threshold' | 'template'>,
  ): Promise<void> {
    await db
      .updateTable('integrations')
      .set(changes)
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .execute();
  },

  async delete(db: Executor, teamId: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('integrations')
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};
