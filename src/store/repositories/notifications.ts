import type {
  AlertRoundRow,
  NotificationAttemptRow,
  NotificationRow,
  OutboxRow,
  TestRunRow,
} from '../database.js';
import type { Executor } from '../store.js';

export const notificationsRepo = {
  /** Inserts the notification unless the run already has one for this channel and target. */
  async insertNew(db: Executor, row: NotificationRow): Promise<boolean> {
    const inserted = await db
      .insertInto('notifications')
      .values(row)
      .onConflict((oc) => oc.columns(['run_id', 'channel', 'target']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  },

  /**
   * Records the decision of a round; false when another process decided it first (the primary key
   * on round_id is the guard, on every dialect).
   */
  async claimRound(db: Executor, row: AlertRoundRow): Promise<boolean> {
    const inserted = await db
      .insertInto('alert_rounds')
      .values(row)
      .onConflict((oc) => oc.column('round_id').doNothing())
      .returning('round_id')
      .executeTakeFirst();
    return inserted !== undefined;
  },

  async roundDecided(db: Executor, roundId: string): Promise<boolean> {
    const row = await db
      .selectFrom('alert_rounds')
      .select('round_id')
      .where('round_id', '=', roundId)
      .executeTakeFirst();
    return row !== undefined;
  },

  roundOf(db: Executor, roundId: string): Promise<AlertRoundRow | undefined> {
    return db.selectFrom('alert_rounds').selectAll().where('round_id', '=', roundId).executeTakeFirst();
  },

  byId(db: Executor, id: string): Promise<NotificationRow | undefined> {
    return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
  },

  forRun(db: Executor, runId: string): Promise<NotificationRow[]> {
    return db
      .selectFrom('notifications')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('created_at')
      .orderBy('channel')
      .orderBy('target')
      .execute();
  },

  async attemptsOf(db: Executor, ids: readonly string[]): Promise<NotificationAttemptRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('notification_attempts')
      .selectAll()
      .where('notification_id', 'in', ids)
      .orderBy('notification_id')
      .orderBy('attempt')
      .execute();
  },

  /** Records one attempt and its outcome on the notification (delivered, or still pending). */
  async recordAttempt(
    db: Executor,
    attempt: NotificationAttemptRow,
    outcome: { delivered: boolean; finishedAt: number },
  ): Promise<void> {
    await db.insertInto('notification_attempts').values(attempt).execute();
    await db
      .updateTable('notifications')
      .set({
        attempts: attempt.attempt,
        last_error: attempt.error,
        ...(outcome.delivered && { status: 'delivered', delivered_at: outcome.finishedAt }),
      })
      .where('id', '=', attempt.notification_id)
      .execute();
  },

  async markFailed(db: Executor, id: string, reason: string): Promise<void> {
    await db
      .updateTable('notifications')
      .set((eb) => ({ status: 'failed', last_error: eb.fn.coalesce('last_error', eb.val(reason)) }))
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  },

  /**
   * Results of the finished pass/fail runs of the same test, environment and region before `run`,
   * newest first (subtest runs left out).
   */
  async previousResults(
    db: Executor,
    run: Pick<TestRunRow, 'id' | 'test_id' | 'environment_id' | 'region' | 'finished_at'>,
    limit: number,
  ): Promise<('pass' | 'fail')[]> {
    const rows = await db
      .selectFrom('test_runs')
      .select('result')
      .where('test_id', '=', run.test_id)
      .where('environment_id', '=', run.environment_id)
      .where('region', '=', run.region)
      .where('result', 'in', ['pass', 'fail'])
      .where('source', '!=', 'subtest')
      .where('id', '!=', run.id)
      .where('finished_at', '<=', run.finished_at ?? Number.MAX_SAFE_INTEGER)
      .orderBy('finished_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => row.result as 'pass' | 'fail');
  },

  async insertOutbox(db: Executor, row: OutboxRow): Promise<void> {
    await db.insertInto('outbox').values(row).execute();
  },

  /** Kept mails of the account's teams, newest first. */
  outboxForAccount(
    db: Executor,
    accountId: string,
    page: { count: number; before?: number | undefined },
  ): Promise<OutboxRow[]> {
    let query = db
      .selectFrom('outbox')
      .innerJoin('team_members', (join) =>
        join
          .onRef('team_members.team_id', '=', 'outbox.team_id')
          .on('team_members.account_id', '=', accountId),
      )
      .selectAll('outbox');
    if (page.before !== undefined) query = query.where('outbox.created_at', '<', page.before);
    return query
      .orderBy('outbox.created_at', 'desc')
      .orderBy('outbox.id', 'desc')
      .limit(page.count)
      .execute();
  },
};
