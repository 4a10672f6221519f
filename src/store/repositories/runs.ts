import { PostgresAdapter, sql } from 'kysely';
import type { TestRunRow, TestRunStepTable } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';
import type { LastRunSummary } from './tests.js';

/** The columns of a run as `last_run` and the recent runs of a test list show it. */
const SUMMARY_COLUMNS = [
  'id as test_run_id',
  'result',
  'environment_id',
  'environment_name',
  'region',
  'source',
  'started_at',
  'finished_at',
] as const;

const lastFinishedOfTest = preparedQuery<{ testId: string }, LastRunSummary>(['testId'], (db, p) =>
  db
    .selectFrom('test_runs')
    .select(SUMMARY_COLUMNS)
    .where('test_id', '=', p.testId)
    .where('finished_at', 'is not', null)
    .where('result', 'in', ['pass', 'fail'])
    .orderBy('finished_at', 'desc')
    .limit(1),
);

/** The columns of a recent run, and which list it came from. */
const RECENT_COLUMNS = [...SUMMARY_COLUMNS, 'test_id', 'response_time_ms'] as const;

type RecentPart = Omit<RecentRun, 'rank_started' | 'rank_finished'> & { kind: 'started' | 'finished' };

/** One test's newest runs by start (in order), then its newest by finish. */
const recentOfTest = preparedQuery<{ testId: string; perTest: number }, RecentPart>(
  ['testId', 'perTest'],
  (db, p) =>
    db
      .selectFrom((eb) =>
        eb
          .selectFrom('test_runs')
          .select([...RECENT_COLUMNS, sql<'started' | 'finished'>`'started'`.as('kind')])
          .where('test_id', '=', p.testId)
          .where('finished_at', 'is not', null)
          .where('result', 'in', ['pass', 'fail'])
          .orderBy('started_at', 'desc')
          .orderBy('id', 'desc')
          .limit(p.perTest)
          .as('started'),
      )
      .selectAll()
      .unionAll((eb) =>
        eb
          .selectFrom((inner) =>
            inner
              .selectFrom('test_runs')
              .select([...RECENT_COLUMNS, sql<'started' | 'finished'>`'finished'`.as('kind')])
              .where('test_id', '=', p.testId)
              .where('finished_at', 'is not', null)
              .where('result', 'in', ['pass', 'fail'])
              .orderBy('finished_at', 'desc')
              .limit(1)
              .as('finished'),
          )
          .selectAll(),
      ),
);

/** The same for many tests in one PostgreSQL statement: a lateral join per list. */
async function recentLateral(
  db: Executor,
  testIds: readonly string[],
  perTest: number,
): Promise<RecentPart[]> {
  const columns = sql.raw(
    'r.id as test_run_id, r.test_id, r.result, r.environment_id, r.environment_name, r.region, r.source, r.started_at, r.finished_at, r.response_time_ms',
  );
  const ids = sql`unnest(${[...testIds]}::text[]) as t(id)`;
  const { rows } = await sql<RecentPart>`
    select s.* from ${ids} cross join lateral (
      select ${columns}, 'started' as kind from test_runs r
      where r.test_id = t.id and r.finished_at is not null and r.result in ('pass', 'fail')
      order by r.started_at desc, r.id desc limit ${perTest}
    ) s
    union all
    select f.* from ${ids} cross join lateral (
      select ${columns}, 'finished' as kind from test_runs r
      where r.test_id = t.id and r.finished_at is not null and r.result in ('pass', 'fail')
      order by r.finished_at desc limit 1
    ) f`.execute(db);
  return rows;
}

const runById = preparedQuery<{ id: string }, TestRunRow>(['id'], (db, p) =>
  db.selectFrom('test_runs').selectAll().where('id', '=', p.id),
);

export type RunFinish = Pick<
  TestRunRow,
  | 'result'
  | 'finished_at'
  | 'started_at'
  | 'attempts'
  | 'requests_executed'
  | 'assertions_defined'
  | 'assertions_passed'
  | 'assertions_failed'
  | 'scripts_defined'
  | 'scripts_passed'
  | 'scripts_failed'
  | 'variables_defined'
  | 'variables_passed'
  | 'variables_failed'
  | 'response_time_ms'
  | 'error'
  | 'summary'
>;

/** A finished run of a test list: what `last_run` and `recent_runs` of the test summaries show. */
export interface RecentRun extends LastRunSummary {
  test_id: string;
  response_time_ms: number | null;
  /** 1 for the newest start of its test, 2 for the one before … */
  rank_started: number;
  /** 1 for the newest finish of its test (its `last_run`). */
  rank_finished: number;
}

/** Runs past the full-detail limit whose details one retention pass removes (it runs after every run). */
const RETENTION_SWEEP = 500;

export const runsRepo = {
  /**
   * For each of the tests, its `perTest` newest finished (pass or fail) runs by start and its newest
   * by finish. Each test's runs are read from its end of an index (test_id with started_at, and with
   * finished_at), so the cost does not grow with the length of a test's history: on PostgreSQL in
   * one statement with lateral joins, on SQLite in one statement per test (no round trips there).
   */
  async recentForTests(db: Executor, testIds: readonly string[], perTest: number): Promise<RecentRun[]> {
    if (testIds.length === 0) return [];
    const parts =
      db.getExecutor().adapter instanceof PostgresAdapter
        ? await recentLateral(db, testIds, perTest)
        : (await Promise.all(testIds.map((testId) => recentOfTest(db, { testId, perTest })))).flat();
    const byId = new Map<string, RecentRun>();
    const rankStarted = new Map<string, number>();
    for (const part of parts) {
      const { kind, ...run } = part;
      const known = byId.get(run.test_run_id);
      const row: RecentRun = known ?? {
        ...run,
        started_at: Number(run.started_at),
        finished_at: run.finished_at === null ? null : Number(run.finished_at),
        response_time_ms: run.response_time_ms === null ? null : Number(run.response_time_ms),
        rank_started: Number.MAX_SAFE_INTEGER,
        rank_finished: Number.MAX_SAFE_INTEGER,
      };
      if (kind === 'finished') row.rank_finished = 1;
      else {
        const rank = (rankStarted.get(run.test_id) ?? 0) + 1;
        rankStarted.set(run.test_id, rank);
        row.rank_started = rank;
      }
      byId.set(run.test_run_id, row);
    }
    return [...byId.values()];
  },

  async lastFinished(db: Executor, testId: string): Promise<LastRunSummary | null> {
    return (await lastFinishedOfTest(db, { testId }))[0] ?? null;
  },

  async insert(db: Executor, rows: TestRunRow[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('test_runs').values(rows).execute();
  },

  /** The runs of a round, in the order they were created. */
  ofRound(db: Executor, roundId: string): Promise<TestRunRow[]> {
    return db
      .selectFrom('test_runs')
      .selectAll()
      .where('round_id', '=', roundId)
      .orderBy('queued_at')
      .orderBy('id')
      .execute();
  },

  async byId(db: Executor, id: string): Promise<TestRunRow | undefined> {
    return (await runById(db, { id }))[0];
  },

  async ofTest(db: Executor, testId: string, id: string): Promise<TestRunRow | undefined> {
    return db
      .selectFrom('test_runs')
      .selectAll()
      .where('id', '=', id)
      .where('test_id', '=', testId)
      .executeTakeFirst();
  },

  /** Newest first by queue time, within an optional `(since, before)` window of float seconds. */
  async list(
    db: Executor,
    testId: string,
    page: { count: number; since?: number | undefined; before?: number | undefined },
  ): Promise<TestRunRow[]> {
    let query = db.selectFrom('test_runs').selectAll().where('test_id', '=', testId);
    if (page.since !== undefined) query = query.where('queued_at', '>', page.since);
    if (page.before !== undefined) query = query.where('queued_at', '<', page.before);
    return query.orderBy('queued_at', 'desc').orderBy('id', 'desc').limit(page.count).execute();
  },

  /** queued → working, stamped with its worker; the run, or undefined when it was not queued. */
  async start(
    db: Executor,
    id: string,
    startedAt: number,
    agent: string | null,
    workerId: string,
  ): Promise<TestRunRow | undefined> {
    return db
      .updateTable('test_runs')
      .set((eb) => ({
        result: 'working',
        started_at: startedAt,
        agent,
        worker_id: workerId,
        executions: eb('executions', '+', 1),
      }))
      .where('id', '=', id)
      .where('result', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
  },

  /** working → queued again, for another worker; false when the run is not `fromWorker`'s any more. */
  async requeue(db: Executor, id: string, fromWorker: string): Promise<boolean> {
    const result = await db
      .updateTable('test_runs')
      .set({ result: 'queued', worker_id: null, summary: null })
      .where('id', '=', id)
      .where('result', '=', 'working')
      .where('worker_id', '=', fromWorker)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /**
   * working → queued again after a clean stop of its worker: the hand-over is counted apart from
   * `executions` and the interrupted attempts are kept; false when the run is not `fromWorker`'s.
   */
  async requeueOnStop(db: Executor, id: string, fromWorker: string, interrupted: string): Promise<boolean> {
    const result = await db
      .updateTable('test_runs')
      .set((eb) => ({
        result: 'queued',
        worker_id: null,
        summary: null,
        handovers: eb('handovers', '+', 1),
        interrupted_attempts: interrupted,
      }))
      .where('id', '=', id)
      .where('result', '=', 'working')
      .where('worker_id', '=', fromWorker)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** The steps a working run has finished so far, while this worker still holds it. */
  async recordProgress(db: Executor, id: string, workerId: string, summary: string): Promise<void> {
    await db
      .updateTable('test_runs')
      .set({ summary })
      .where('id', '=', id)
      .where('result', '=', 'working')
      .where('worker_id', '=', workerId)
      .execute();
  },

  /** Unfinished runs: working ones (with their worker) and queued ones older than `queuedBefore`. */
  async unfinished(
    db: Executor,
    queuedBefore: number,
  ): Promise<
    Pick<TestRunRow, 'id' | 'result' | 'worker_id' | 'region' | 'agent_id' | 'agent' | 'queued_at'>[]
  > {
    return db
      .selectFrom('test_runs')
      .select(['id', 'result', 'worker_id', 'region', 'agent_id', 'agent', 'queued_at'])
      .where((eb) =>
        eb.or([
          eb('result', '=', 'working'),
          eb.and([eb('result', '=', 'queued'), eb('queued_at', '<', queuedBefore)]),
        ]),
      )
      .limit(1000)
      .execute();
  },

  /** working → its outcome; false when the run was canceled meanwhile (the cancel stands). */
  async finish(db: Executor, id: string, finish: RunFinish, workerId?: string): Promise<boolean> {
    let query = db
      .updateTable('test_runs')
      .set(finish)
      .where('id', '=', id)
      .where('result', 'in', ['queued', 'working']);
    // A worker records only a run that is still its own (not handed over meanwhile).
    if (workerId !== undefined) query = query.where('worker_id', '=', workerId);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async cancel(db: Executor, id: string, finishedAt: number, reason: string): Promise<boolean> {
    const result = await db
      .updateTable('test_runs')
      .set({ result: 'canceled', finished_at: finishedAt, error: reason })
      .where('id', '=', id)
      .where('result', 'in', ['queued', 'working'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async insertSteps(db: Executor, rows: TestRunStepTable[]): Promise<void> {
    // Many steps with large bodies: insert in chunks to stay under parameter limits.
    for (let i = 0; i < rows.length; i += 100) {
      await db
        .insertInto('test_run_steps')
        .values(rows.slice(i, i + 100))
        .execute();
    }
  },

  /** Every step result kept for a run, in the order they ran (a retried attempt's first). */
  async stepDetails(db: Executor, runId: string): Promise<string[]> {
    const rows = await db
      .selectFrom('test_run_steps')
      .select('detail')
      .where('run_id', '=', runId)
      .orderBy('position', 'asc')
      .execute();
    return rows.map((r) => r.detail);
  },

  /** The last result of a step in a run (the retry's, when the run was retried). */
  async stepDetail(db: Executor, runId: string, stepId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('test_run_steps')
      .select('detail')
      .where('run_id', '=', runId)
      .where('step_id', '=', stepId)
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.detail;
  },

  /** Finished pass/fail runs of a test in a window, oldest first, for metrics. */
  async finishedBetween(
    db: Executor,
    testId: string,
    from: number,
    to: number,
    filter: { region?: string | undefined; environmentId?: string | undefined },
  ): Promise<Pick<TestRunRow, 'finished_at' | 'result' | 'response_time_ms'>[]> {
    let query = db
      .selectFrom('test_runs')
      .select(['finished_at', 'result', 'response_time_ms'])
      .where('test_id', '=', testId)
      .where('finished_at', '>=', from)
      .where('finished_at', '<', to)
      .where('result', 'in', ['pass', 'fail']);
    if (filter.region) query = query.where('region', '=', filter.region);
    if (filter.environmentId) query = query.where('environment_id', '=', filter.environmentId);
    return query.orderBy('finished_at').orderBy('id').execute();
  },

  /**
   * Retention: the newest `keepFull` passing and `keepFull` failing runs keep their step details;
   * older runs keep only their summary; beyond the newest `keepSummary` finished runs, runs go.
   */
  async applyRetention(db: Executor, testId: string, keepFull: number, keepSummary: number): Promise<void> {
    for (const result of ['pass', 'fail'] as const) {
      const cutoff = await db
        .selectFrom('test_runs')
        .select('finished_at')
        .where('test_id', '=', testId)
        .where('result', '=', result)
        .where('finished_at', 'is not', null)
        .orderBy('finished_at', 'desc')
        .offset(keepFull)
        .limit(1)
        .executeTakeFirst();
      if (cutoff?.finished_at == null) continue;
      await db
        .deleteFrom('test_run_steps')
        .where('run_id', 'in', (eb) =>
          eb
            .selectFrom('test_runs')
            .select('id')
            .where('test_id', '=', testId)
            .where('result', '=', result)
            .where('finished_at', '<=', cutoff.finished_at)
            // Older runs lost their details on earlier passes: only the newest few can still have them.
            .orderBy('finished_at', 'desc')
            .limit(RETENTION_SWEEP),
        )
        .execute();
    }
    const oldest = await db
      .selectFrom('test_runs')
      .select('finished_at')
      .where('test_id', '=', testId)
      .where('finished_at', 'is not', null)
      .orderBy('finished_at', 'desc')
      .offset(keepSummary)
      .limit(1)
      .executeTakeFirst();
    if (oldest?.finished_at != null) {
      await db
        .deleteFrom('test_runs')
        .where('test_id', '=', testId)
        .where('finished_at', '<=', oldest.finished_at)
        .where('result', 'in', ['pass', 'fail', 'canceled'])
        .execute();
    }
  },
};
