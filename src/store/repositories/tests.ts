import { type ExpressionBuilder, PostgresAdapter } from 'kysely';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import type { Database, EnvironmentRow, ScheduleRow, StepRow, TestRow, TestUpdate } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';
import { runsRepo } from './runs.js';

export interface TestWithCreator extends TestRow {
  creator_name: string;
  creator_email: string;
}

function testsWithCreator(db: Executor) {
  return db
    .selectFrom('tests')
    .leftJoin('accounts', 'accounts.id', 'tests.created_by')
    .selectAll('tests')
    .select(['accounts.name as creator_name', 'accounts.email as creator_email']);
}

function normalise<T extends { creator_name: string | null; creator_email: string | null }>(
  row: T,
): T & { creator_name: string; creator_email: string } {
  return { ...row, creator_name: row.creator_name ?? '', creator_email: row.creator_email ?? '' };
}

/** The test's bucket, when it belongs to a team the account is a member of (for `exists`). */
function bucketOfAccountTeam(eb: ExpressionBuilder<Database, 'tests'>, accountId: string) {
  return eb
    .selectFrom('buckets')
    .innerJoin('team_members', 'team_members.team_id', 'buckets.team_id')
    .select('buckets.key')
    .whereRef('buckets.key', '=', 'tests.bucket_key')
    .where('team_members.account_id', '=', accountId);
}

type PageParams = { bucketKey: string; count: number; offset: number };

/** A page of a bucket's tests in creation order, the id breaking ties so pages never overlap. */
const testsPage = (direction: 'asc' | 'desc') =>
  preparedQuery<PageParams, TestWithCreator>(['bucketKey', 'count', 'offset'], (db, p) =>
    testsWithCreator(db)
      .where('tests.bucket_key', '=', p.bucketKey)
      .orderBy('tests.created_at', direction)
      .orderBy('tests.id', direction)
      .limit(p.count)
      .offset(p.offset),
  );
const TESTS_PAGE = { oldest: testsPage('asc'), newest: testsPage('desc') } as const;

export interface TestDetailRows {
  test: TestWithCreator;
  steps: StepRow[];
  environments: EnvironmentRow[];
  schedules: ScheduleRow[];
  lastRun: LastRunSummary | null;
}

/** The newest finished (pass or fail) run of a test, as `last_run` shows it. */
export interface LastRunSummary {
  test_run_id: string;
  result: string;
  environment_id: string;
  environment_name: string;
  region: string;
  source: string;
  started_at: number;
  finished_at: number | null;
}

type DetailRow = TestWithCreator & {
  steps: unknown;
  environments: unknown;
  schedules: unknown;
  last_run: unknown;
};

/**
 * The test with its steps, environments and schedules in one round trip: each part as a JSON array
 * (json_group_array on SQLite, json_agg on PostgreSQL), ordered as the separate reads order them.
 */
const testDetailForAccount = preparedQuery<{ id: string; bucketKey: string; accountId: string }, DetailRow>(
  ['id', 'bucketKey', 'accountId'],
  (db, p) => {
    const jsonArrayFrom =
      db.getExecutor().adapter instanceof PostgresAdapter ? postgresJsonArrayFrom : sqliteJsonArrayFrom;
    return testsWithCreator(db)
      .select((eb) => [
        jsonArrayFrom(
          eb
            .selectFrom('steps')
            .select([
              'steps.id',
              'steps.test_id',
              'steps.parent_id',
              'steps.position',
              'steps.step_type',
              'steps.body',
            ])
            .whereRef('steps.test_id', '=', 'tests.id')
            .orderBy('steps.position'),
        ).as('steps'),
        jsonArrayFrom(
          eb
            .selectFrom('environments')
            .select([
              'environments.id',
              'environments.bucket_key',
              'environments.test_id',
              'environments.name',
              'environments.parent_environment_id',
              'environments.settings',
              'environments.created_at',
              'environments.updated_at',
            ])
            .whereRef('environments.test_id', '=', 'tests.id')
            .orderBy('environments.created_at')
            .orderBy('environments.id'),
        ).as('environments'),
        jsonArrayFrom(
          eb
            .selectFrom('schedules')
            .select([
              'schedules.id',
              'schedules.test_id',
              'schedules.environment_id',
              'schedules.interval',
              'schedules.note',
              'schedules.created_at',
              'schedules.next_run_at',
            ])
            .whereRef('schedules.test_id', '=', 'tests.id')
            .orderBy('schedules.created_at')
            .orderBy('schedules.id'),
        ).as('schedules'),
        jsonArrayFrom(
          eb
            .selectFrom('test_runs')
            .select([
              'test_runs.id as test_run_id',
              'test_runs.result',
              'test_runs.environment_id',
              'test_runs.environment_name',
              'test_runs.region',
              'test_runs.source',
              'test_runs.started_at',
              'test_runs.finished_at',
            ])
            .whereRef('test_runs.test_id', '=', 'tests.id')
            .where('test_runs.finished_at', 'is not', null)
            .where('test_runs.result', 'in', ['pass', 'fail'])
            .orderBy('test_runs.finished_at', 'desc')
            .limit(1),
        ).as('last_run'),
      ])
      .where('tests.id', '=', p.id)
      .where('tests.bucket_key', '=', p.bucketKey)
      .where((eb) => eb.exists(bucketOfAccountTeam(eb, p.accountId)));
  },
);

/** The test with its creator, when it lies in a bucket of the account's team: one indexed read. */
const testForAccount = preparedQuery<{ id: string; bucketKey: string; accountId: string }, TestWithCreator>(
  ['id', 'bucketKey', 'accountId'],
  (db, p) =>
    testsWithCreator(db)
      .where('tests.id', '=', p.id)
      .where('tests.bucket_key', '=', p.bucketKey)
      .where((eb) => eb.exists(bucketOfAccountTeam(eb, p.accountId))),
);

const detailSteps = preparedQuery<{ testId: string }, StepRow>(['testId'], (db, p) =>
  db
    .selectFrom('steps')
    .select(['id', 'test_id', 'parent_id', 'position', 'step_type', 'body'])
    .where('test_id', '=', p.testId)
    .orderBy('position'),
);

const detailEnvironments = preparedQuery<{ testId: string }, EnvironmentRow>(['testId'], (db, p) =>
  db
    .selectFrom('environments')
    .select([
      'id',
      'bucket_key',
      'test_id',
      'name',
      'parent_environment_id',
      'settings',
      'created_at',
      'updated_at',
    ])
    .where('test_id', '=', p.testId)
    .orderBy('created_at')
    .orderBy('id'),
);

const detailSchedules = preparedQuery<{ testId: string }, ScheduleRow>(['testId'], (db, p) =>
  db
    .selectFrom('schedules')
    .select(['id', 'test_id', 'environment_id', 'interval', 'note', 'created_at', 'next_run_at'])
    .where('test_id', '=', p.testId)
    .orderBy('created_at')
    .orderBy('id'),
);

/** SQLite hands JSON aggregates back as text, PostgreSQL as parsed values. */
const jsonRows = <T>(value: unknown): T[] => (typeof value === 'string' ? JSON.parse(value) : value) as T[];

export const testsRepo = {
  /**
   * The detail of a test in a bucket of the account's team; undefined when there is none. Each
   * dialect gets the shape that costs it least (bench/query-shapes.ts measures both): on SQLite,
   * in the same process, plain indexed reads are cheaper than building JSON inside SQLite; on
   * PostgreSQL every statement is a round trip, so one statement with JSON aggregates wins.
   */
  detailForAccount(
    db: Executor,
    bucketKey: string,
    id: string,
    accountId: string,
  ): Promise<TestDetailRows | undefined> {
    return db.getExecutor().adapter instanceof PostgresAdapter
      ? testsRepo.detailForAccountJson(db, bucketKey, id, accountId)
      : testsRepo.detailForAccountPlain(db, bucketKey, id, accountId);
  },

  /** The detail in one statement, its parts as JSON arrays. */
  async detailForAccountJson(
    db: Executor,
    bucketKey: string,
    id: string,
    accountId: string,
  ): Promise<TestDetailRows | undefined> {
    const row = (await testDetailForAccount(db, { id, bucketKey, accountId }))[0];
    if (!row) return undefined;
    const { steps, environments, schedules, last_run, ...test } = row;
    return {
      test: normalise(test),
      steps: jsonRows<StepRow>(steps),
      environments: jsonRows<EnvironmentRow>(environments),
      schedules: jsonRows<ScheduleRow>(schedules),
      lastRun: jsonRows<LastRunSummary>(last_run)[0] ?? null,
    };
  },

  /**
   * The same detail as `detailForAccount` from plain indexed reads: the test (with the membership
   * check), then its steps, environments, schedules and last finished run, one statement each.
   */
  async detailForAccountPlain(
    db: Executor,
    bucketKey: string,
    id: string,
    accountId: string,
  ): Promise<TestDetailRows | undefined> {
    const test = (await testForAccount(db, { id, bucketKey, accountId }))[0];
    if (!test) return undefined;
    const [steps, environments, schedules, lastRun] = await Promise.all([
      detailSteps(db, { testId: id }),
      detailEnvironments(db, { testId: id }),
      detailSchedules(db, { testId: id }),
      runsRepo.lastFinished(db, id),
    ]);
    return { test: normalise(test), steps, environments, schedules, lastRun };
  },

  async list(
    db: Executor,
    bucketKey: string,
    page: { count: number; offset: number; first: 'oldest' | 'newest' },
  ): Promise<TestWithCreator[]> {
    const rows = await TESTS_PAGE[page.first](db, { bucketKey, count: page.count, offset: page.offset });
    return rows.map(normalise);
  },

  async countInBucket(db: Executor, bucketKey: string): Promise<number> {
    const row = await db
      .selectFrom('tests')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('bucket_key', '=', bucketKey)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  },

  async get(db: Executor, bucketKey: string, id: string): Promise<TestWithCreator | undefined> {
    const row = await testsWithCreator(db)
      .where('tests.id', '=', id)
      .where('tests.bucket_key', '=', bucketKey)
      .executeTakeFirst();
    return row && normalise(row);
  },

  byTriggerId(db: Executor, triggerId: string): Promise<TestRow | undefined> {
    return db.selectFrom('tests').selectAll().where('trigger_id', '=', triggerId).executeTakeFirst();
  },

  byId(db: Executor, id: string): Promise<TestRow | undefined> {
    return db.selectFrom('tests').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** Every test of a bucket, oldest first (the bucket trigger runs them all). */
  allInBucket(db: Executor, bucketKey: string): Promise<TestRow[]> {
    return db
      .selectFrom('tests')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async insert(db: Executor, test: TestRow): Promise<void> {
    await db.insertInto('tests').values(test).execute();
  },

  async update(db: Executor, id: string, patch: TestUpdate): Promise<void> {
    if (Object.keys(patch).length === 0) return;
    await db.updateTable('tests').set(patch).where('id', '=', id).execute();
  },

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('tests').where('id', '=', id).execute();
  },
};
