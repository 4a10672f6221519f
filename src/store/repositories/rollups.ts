import { sql } from 'kysely';
import type { Executor } from '../store.js';

/** The UTC day (whole days since the Unix epoch) of a time in Unix seconds. */
export const dayOf = (seconds: number): number => Math.floor(seconds / 86_400);

/** Daily pass/fail counts per test and environment, kept as runs finish (status pages read them). */
export const rollupsRepo = {
  /** Counts one finished pass or fail run in its test, environment and day. */
  async count(
    db: Executor,
    run: { test_id: string; environment_id: string; finished_at: number; result: 'pass' | 'fail' },
  ): Promise<void> {
    const passes = run.result === 'pass' ? 1 : 0;
    const fails = run.result === 'fail' ? 1 : 0;
    await db
      .insertInto('test_daily_rollups')
      .values({
        test_id: run.test_id,
        environment_id: run.environment_id,
        day: dayOf(run.finished_at),
        passes,
        fails,
      })
      .onConflict((oc) =>
        oc.columns(['test_id', 'environment_id', 'day']).doUpdateSet({
          passes: sql<number>`test_daily_rollups.passes + ${passes}`,
          fails: sql<number>`test_daily_rollups.fails + ${fails}`,
        }),
      )
      .execute();
  },

  /**
   * Pass and fail counts per test and day from `fromDay` on (environments added up, or only
   * `environmentId`'s), in one query.
   */
  async daily(
    db: Executor,
    testIds: readonly string[],
    fromDay: number,
    environmentId: string | null,
  ): Promise<{ test_id: string; day: number; passes: number; fails: number }[]> {
    if (testIds.length === 0) return [];
    let query = db
      .selectFrom('test_daily_rollups')
      .select(['test_id', 'day', sql<number>`sum(passes)`.as('passes'), sql<number>`sum(fails)`.as('fails')])
      .where('test_id', 'in', testIds)
      .where('day', '>=', fromDay)
      .groupBy(['test_id', 'day']);
    if (environmentId !== null) query = query.where('environment_id', '=', environmentId);
    // PostgreSQL answers sum() of integers as a bigint (text).
    return (await query.execute()).map((row) => ({
      test_id: row.test_id,
      day: Number(row.day),
      passes: Number(row.passes),
      fails: Number(row.fails),
    }));
  },
};
