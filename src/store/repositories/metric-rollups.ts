import { type Kysely, sql } from 'kysely';
import { latencyBucket, ROLLUP_GRAINS, type RollupCell } from '../../domain/metrics.js';
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

interface Cell {
  test_id: string;
  grain: number;
  slot: number;
  environment_id: string;
  region: string;
  bucket: number;
  runs: number;
  passes: number;
  response_time_sum: number;
}

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
   * The cells of one test at one grain whose slots start in [from, to), environments and regions
   * added up unless one is asked for.
   */
  async read(
    db: Executor,
    testId: string,
    grain: number,
    from: number,
    to: number,
    filter: { region?: string | undefined; environmentId?: string | undefined },
  ): Promise<RollupCell[]> {
    let query = db
      .selectFrom('test_metric_rollups')
      .select([
        'slot',
        'bucket',
        sql<number>`sum(runs)`.as('runs'),
        sql<number>`sum(passes)`.as('passes'),
        sql<number>`sum(response_time_sum)`.as('response_time_sum'),
      ])
      .where('test_id', '=', testId)
      .where('grain', '=', grain)
      .where('slot', '>=', Math.floor(from / grain))
      .where('slot', '<', Math.ceil(to / grain))
      .groupBy(['slot', 'bucket']);
    if (filter.region) query = query.where('region', '=', filter.region);
    if (filter.environmentId) query = query.where('environment_id', '=', filter.environmentId);
    // PostgreSQL answers sum() of integers as a bigint (text) and of doubles as a double.
    return (await query.execute()).map((row) => ({
      start: Number(row.slot) * grain,
      bucket: Number(row.bucket),
      runs: Number(row.runs),
      passes: Number(row.passes),
      response_time_sum: Number(row.response_time_sum),
    }));
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
