import { type Kysely, sql } from 'kysely';
import { latencyBucket, ROLLUP_GRAINS, type RollupRead } from '../../domain/metrics.js';
import type { TestMetricRollupTable } from '../database.js';
import type { Executor } from '../store.js';

/** What one finished run adds to the rollups. */
export interface RolledRun {
  test_id: string;
  environment_id: string;
  region: string;
  finished_at: number;
  result: 'pass' | 'fail';
  response_time_ms: number | null;
}

/** One stored rollup row. */
type Cell = TestMetricRollupTable;

const KEY = ['test_id', 'grain', 'slot', 'environment_id', 'region', 'bucket'] as const;

/** Adds cells to the stored ones (one statement; cells must have distinct keys). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- also used by the migration, on Kysely<any>
async function add(db: Executor | Kysely<any>, cells: readonly Cell[]): Promise<void> {
  if (cells.length === 0) return;
  await (db as Executor)
    .insertInto('test_metric_rollups')
    .values([...cells])
    .onConflict((oc) =>
      oc.columns([...KEY]).doUpdateSet({
        runs: sql<number>`test_metric_rollups.runs + excluded.runs`,
        passes: sql<number>`test_metric_rollups.passes + excluded.passes`,
        response_time_sum: sql<number>`test_metric_rollups.response_time_sum + excluded.response_time_sum`,
      }),
    )
    .execute();
}

function cellsOf(run: RolledRun): Cell[] {
  const bucket = latencyBucket(run.response_time_ms);
  return ROLLUP_GRAINS.map((grain) => ({
    test_id: run.test_id,
    grain,
    slot: Math.floor(run.finished_at / grain),
    environment_id: run.environment_id,
    region: run.region,
    bucket,
    runs: 1,
    passes: run.result === 'pass' ? 1 : 0,
    response_time_sum: run.response_time_ms ?? 0,
  }));
}

/** Per-hour and per-day response-time histograms and pass counts of each test's finished runs. */
export const metricRollupsRepo = {
  /** Counts one finished pass or fail run, in the transaction that stores it. */
  count(db: Executor, run: RolledRun): Promise<void> {
    return add(db, cellsOf(run));
  },

  /**
   * What metrics read of one test at one grain for two periods, [from, split) and [split, to)
   * (multiples of the grain): the totals of each slot, and each period's response-time histogram;
   * environments and regions added up unless one is asked for. Two aggregates, a few hundred rows.
   */
  async read(
    db: Executor,
    testId: string,
    grain: number,
    period: { from: number; split: number; to: number },
    filter: { region?: string | undefined; environmentId?: string | undefined },
  ): Promise<RollupRead> {
    // A literal, so that the select and the group by name the same expression on PostgreSQL.
    const isCurrent = sql<number>`case when slot >= ${sql.lit(Math.floor(period.split / grain))} then 1 else 0 end`;
    let base = db
      .selectFrom('test_metric_rollups')
      .where('test_id', '=', testId)
      .where('grain', '=', grain)
      .where('slot', '>=', Math.floor(period.from / grain))
      .where('slot', '<', Math.ceil(period.to / grain));
    if (filter.region) base = base.where('region', '=', filter.region);
    if (filter.environmentId) base = base.where('environment_id', '=', filter.environmentId);
    // Two statements at once: PostgreSQL runs them on two connections of the pool.
    const [slots, buckets] = await Promise.all([
      base
        .select([
          'slot',
          sql<number>`sum(runs)`.as('runs'),
          sql<number>`sum(passes)`.as('passes'),
          sql<number>`sum(case when bucket >= 0 then runs else 0 end)`.as('timed'),
          sql<number>`sum(response_time_sum)`.as('response_time_sum'),
        ])
        .groupBy('slot')
        .execute(),
      base
        .where('bucket', '>=', 0)
        .select([isCurrent.as('current'), 'bucket', sql<number>`sum(runs)`.as('runs')])
        .groupBy([isCurrent, 'bucket'])
        .execute(),
    ]);
    const current = new Map<number, number>();
    const previous = new Map<number, number>();
    // PostgreSQL answers sum() of integers as a bigint (text).
    for (const row of buckets)
      (Number(row.current) === 1 ? current : previous).set(Number(row.bucket), Number(row.runs));
    return {
      slots: slots.map((row) => ({
        start: Number(row.slot) * grain,
        runs: Number(row.runs),
        passes: Number(row.passes),
        timed: Number(row.timed),
        response_time_sum: Number(row.response_time_sum),
      })),
      current,
      previous,
    };
  },
};

/** Rows read per page when rollups are rebuilt from stored runs. */
const REBUILD_PAGE = 10_000;

/**
 * Builds the rollups of every stored finished pass/fail run (or of one test's), for a store whose
 * rollups are empty: the migration that adds them, and stores filled without the recorder.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- runs inside a migration, on Kysely<any>
export async function rebuildMetricRollups(db: Kysely<any>, testId?: string): Promise<void> {
  let after = '';
  for (;;) {
    let query = db
      .selectFrom('test_runs')
      .select(['id', 'test_id', 'environment_id', 'region', 'finished_at', 'result', 'response_time_ms'])
      .where('id', '>', after)
      .where('finished_at', 'is not', null)
      .where('result', 'in', ['pass', 'fail'])
      .orderBy('id')
      .limit(REBUILD_PAGE);
    if (testId !== undefined) query = query.where('test_id', '=', testId);
    const runs = (await query.execute()) as (RolledRun & { id: string })[];
    if (runs.length === 0) return;
    const cells = new Map<string, Cell>();
    for (const run of runs) {
      for (const cell of cellsOf({ ...run, finished_at: Number(run.finished_at) })) {
        const key = KEY.map((k) => cell[k]).join('\u0000');
        const seen = cells.get(key);
        if (!seen) cells.set(key, cell);
        else {
          seen.runs += cell.runs;
          seen.passes += cell.passes;
          seen.response_time_sum += cell.response_time_sum;
        }
      }
    }
    const all = [...cells.values()];
    // Well under SQLite's bound-parameter limit at nine columns a row.
    for (let i = 0; i < all.length; i += 1_000) await add(db, all.slice(i, i + 1_000));
    after = runs[runs.length - 1]!.id;
  }
}
