import { conflict, invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, newSecret, nowFloat, nowSeconds } from '../domain/ids.js';
import { normalizeStep, type Step, type StepInput, stepIds } from '../domain/steps.js';
import { dropNulls } from '../domain/schema.js';
import type { EnvironmentRow, RevisionRow, ScheduleRow } from '../store/database.js';
import { lockRow } from '../store/locks.js';
import type { BucketWithTeam } from '../store/repositories/buckets.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { revisionsRepo } from '../store/repositories/revisions.js';
import { schedulesRepo } from '../store/repositories/schedules.js';
import { assembleSteps, stepsRepo } from '../store/repositories/steps.js';
import { type LastRunSummary, type TestWithCreator, testsRepo } from '../store/repositories/tests.js';
import { type RecentRun, runsRepo } from '../store/repositories/runs.js';
import type { Executor, Store, Trx } from '../store/store.js';
import { BUCKET_KEY_PATTERN, type BucketService } from './buckets.js';
import { checkEnvironmentLimit, checkParent, environmentView } from './environments.js';
import type { Actor, Principal } from './principal.js';
import { exportTest, newTestParts, type TestCreateInput, type TestExport } from './test-transfer.js';
import { type RevisionEntry, recordRevisions } from './revisions.js';

/** The shape the API presents. */
export type { TestWithCreator } from '../store/repositories/tests.js';

/** A test with everything its detail form shows. */
export interface TestAggregate {
  test: TestWithCreator;
  steps: Step[];
  environments: EnvironmentRow[];
  schedules: ScheduleRow[];
  /** The newest finished run; filled by reads that show it (the detail). */
  lastRun?: LastRunSummary | null;
}

export interface TestPatch {
  name?: string | undefined;
  description?: string | null | undefined;
  default_environment_id?: string | null | undefined;
  steps?: StepInput[] | null | undefined;
}

const NULL_MEANS_ABSENT = [
  'default_environment_id',
  'environments',
  'shared_environments',
  'steps',
  'schedules',
] as const;

/**
 * What a test write really gives: null, and an empty `default_environment_id`, mean "not given", as
 * clients of the original service send them (`"steps": null`, `"default_environment_id": ""`).
 */
function given<T extends Partial<Record<(typeof NULL_MEANS_ABSENT)[number], unknown>>>(input: T) {
  const out = dropNulls(input, NULL_MEANS_ABSENT.filter((key) => key in input) as (keyof T)[]);
  if ((out as { default_environment_id?: unknown }).default_environment_id === '') {
    delete (out as { default_environment_id?: unknown }).default_environment_id;
  }
  return out as {
    [K in keyof T]: K extends (typeof NULL_MEANS_ABSENT)[number] ? Exclude<T[K], null> : T[K];
  };
}

export const DEFAULT_TESTS_PAGE = 50;
export const MAX_TESTS_PAGE = 1000;
/** The test summaries of the dashboard page by 100 by default, and show up to 20 recent runs each. */
export const DEFAULT_SUMMARIES_PAGE = 100;
export const RECENT_RUNS = 20;

/** One row of the dashboard's tests list (`GET …/test-summaries`). */
export interface TestSummary {
  test: TestWithCreator;
  schedules: ScheduleRow[];
  lastRun: LastRunSummary | null;
  /** Up to RECENT_RUNS newest finished runs, oldest first. */
  recentRuns: RecentRun[];
}

/** The order the store reads a test's environments and schedules in: oldest first, then by id. */
const byCreation = (a: { created_at: number; id: string }, b: { created_at: number; id: string }): number =>
  a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** What a test revision keeps: the test's own fields, its steps and its schedules. */
export function testSnapshot(aggregate: TestAggregate) {
  const { test } = aggregate;
  return {
    id: test.id,
    name: test.name,
    description: test.description,
    default_environment_id: test.default_environment_id,
    steps: aggregate.steps,
    schedules: aggregate.schedules.map((s) => ({
      id: s.id,
      environment_id: s.environment_id,
      interval: s.interval,
      note: s.note,
    })),
  };
}

/** Picks the id for each step of an incoming list: a kept id of the test's own, or a fresh one. */
export function stepIdAllocator(keep: ReadonlySet<string>): (input: { id?: string }) => string {
  const used = new Set<string>();
  return (input) => {
    const id = input.id && keep.has(input.id) && !used.has(input.id) ? input.id : newId();
    used.add(id);
    return id;
  };
}

export class TestService {
  constructor(private readonly deps: { store: Store; buckets: BucketService }) {}

  async list(
    principal: Principal,
    bucketKey: string,
    page: { count?: number; offset?: number },
  ): Promise<TestWithCreator[]> {
    await this.deps.buckets.require(principal, bucketKey);
    const count = Math.min(page.count ?? DEFAULT_TESTS_PAGE, MAX_TESTS_PAGE);
    // Newest first, as the original service listed them (its clients page with count/offset).
    return testsRepo.list(this.deps.store.db, bucketKey, {
      count,
      offset: page.offset ?? 0,
      first: 'newest',
    });
  }

  /**
   * A page of the tests list with what the dashboard shows of each: schedules, last run and recent
   * runs. Runs are read from the newest end of each test's history, so a long history costs no more
   * than a short one (runsRepo.recentForTests).
   */
  async summaries(
    principal: Principal,
    bucketKey: string,
    page: { count?: number; offset?: number },
  ): Promise<{ summaries: TestSummary[]; total: number }> {
    const { db } = this.deps.store;
    await this.deps.buckets.require(principal, bucketKey);
    const count = Math.min(page.count ?? DEFAULT_SUMMARIES_PAGE, MAX_TESTS_PAGE);
    const [tests, total] = await Promise.all([
      testsRepo.list(db, bucketKey, { count, offset: page.offset ?? 0, first: 'oldest' }),
      testsRepo.countInBucket(db, bucketKey),
    ]);
    const ids = tests.map((t) => t.id);
    const [schedules, runs] = await Promise.all([
      schedulesRepo.forTests(db, ids),
      runsRepo.recentForTests(db, ids, RECENT_RUNS),
    ]);
    const byTest = new Map<string, TestSummary>(
      tests.map((test) => [test.id, { test, schedules: [], lastRun: null, recentRuns: [] }]),
    );
    for (const schedule of schedules) byTest.get(schedule.test_id)?.schedules.push(schedule);
    for (const run of runs) {
      const summary = byTest.get(run.test_id);
      if (!summary) continue;
      if (run.rank_finished === 1) summary.lastRun = run;
      if (run.rank_started <= RECENT_RUNS) summary.recentRuns.push(run);
    }
    for (const summary of byTest.values()) summary.recentRuns.sort((a, b) => b.rank_started - a.rank_started);
    return { summaries: [...byTest.values()], total };
  }

  /** The test when it lies in a bucket of the caller's team; 404 otherwise. */
  async requireTest(
    principal: Principal,
    bucketKey: string,
    testId: string,
    db: Executor = this.deps.store.db,
  ): Promise<{ bucket: BucketWithTeam; test: TestWithCreator }> {
    const bucket = await this.deps.buckets.require(principal, bucketKey, db);
    const test = isUuid(testId) ? await testsRepo.get(db, bucketKey, testId) : undefined;
    if (!test) throw notFound(`Test ${testId}`);
    return { bucket, test };
  }

  async load(db: Executor, test: TestWithCreator): Promise<TestAggregate> {
    const [steps, environments, schedules, lastRun] = await Promise.all([
      stepsRepo.forTest(db, test.id),
      environmentsRepo.forTest(db, test.id),
      schedulesRepo.forTest(db, test.id),
      runsRepo.lastFinished(db, test.id),
    ]);
    return { test, steps, environments, schedules, lastRun };
  }

  /**
   * The tables `list` and `get` read (the bucket and its team for the membership check, the tests
   * with their creators, and each test's parts and last run): what may change their answers.
   */
  static readonly READ_TABLES = [
    'buckets',
    'teams',
    'team_members',
    'tests',
    'accounts',
    'steps',
    'environments',
    'schedules',
    'test_runs',
  ] as const;

  /** The detail of a test: membership, the test and its parts in one query. */
  async get(principal: Principal, bucketKey: string, testId: string): Promise<TestAggregate> {
    const { db } = this.deps.store;
    // Ids of the wrong form name nothing; they never reach the store (PostgreSQL refuses NUL in text).
    const detail =
      BUCKET_KEY_PATTERN.test(bucketKey) && isUuid(testId)
        ? await testsRepo.detailForAccount(db, bucketKey, testId, principal.accountId)
        : undefined;
    if (!detail) {
      await this.deps.buckets.require(principal, bucketKey);
      throw notFound(`Test ${testId}`);
    }
    return {
      test: detail.test,
      steps: assembleSteps(detail.steps),
      environments: detail.environments,
      schedules: detail.schedules,
      lastRun: detail.lastRun,
    };
  }

  /**
   * Runs one change to a test in a transaction: the test row is locked, `change` edits it, and a
   * revision with the new snapshot is written. Answers the test as it is afterwards.
   */
  async edit(
    actor: Actor,
    bucketKey: string,
    testId: string,
    change: (ctx: { trx: Trx; bucket: BucketWithTeam; aggregate: TestAggregate }) => Promise<void>,
  ): Promise<TestAggregate> {
    return this.deps.store.transaction(async (trx) => {
      const { bucket, test } = await this.requireTest(actor, bucketKey, testId, trx);
      await lockRow(trx, 'tests', test.id);
      const before = await this.load(trx, test);
      await change({ trx, bucket, aggregate: before });
      await testsRepo.update(trx, test.id, { updated_at: nowFloat() });
      const after = await this.load(trx, (await testsRepo.get(trx, bucketKey, test.id))!);
      await recordRevisions(trx, actor, bucket, [
        {
          itemType: 'radar_test',
          itemId: test.id,
          testId: test.id,
          action: 'update',
          snapshot: testSnapshot(after),
        },
      ]);
      return after;
    });
  }

  /**
   * Creates one test, or several from an array, all in one transaction. `restoredFrom` names the
   * deleted test a single created one brings back; its creation revision records it.
   */
  async create(
    actor: Actor,
    bucketKey: string,
    inputs: readonly TestCreateInput[],
    options: { isArray: boolean; restoredFrom?: string | undefined },
  ): Promise<TestAggregate[]> {
    const { isArray, restoredFrom } = options;
    if (restoredFrom !== undefined && inputs.length !== 1)
      throw invalid('?restored_from', 'brings back one test; the body is an array of several');
    return this.deps.store.transaction(async (trx) => {
      const bucket = await this.deps.buckets.require(actor, bucketKey, trx);
      const environmentsAdded = inputs.reduce(
        (n, input) => n + Math.max(1, input.environments?.length ?? 0),
        0,
      );
      await checkEnvironmentLimit(trx, bucketKey, environmentsAdded);
      const created: TestAggregate[] = [];
      for (const [index, input] of inputs.entries()) {
        created.push(
          await this.createOne(trx, actor, bucket, given(input), isArray ? `/${index}` : '', restoredFrom),
        );
      }
      return created;
    });
  }

  private async createOne(
    trx: Trx,
    actor: Actor,
    bucket: BucketWithTeam,
    input: TestCreateInput,
    at: string,
    restoredFrom?: string,
  ): Promise<TestAggregate> {
    const testId = newId();
    const now = nowSeconds();
    const { sharedRows, envRows, defaultEnvironmentId, steps, schedules } = await newTestParts(
      trx,
      bucket,
      testId,
      input,
      at,
      now,
    );

    const test = {
      id: testId,
      bucket_key: bucket.key,
      name: input.name,
      description: input.description ?? null,
      created_by: actor.accountId,
      created_at: now,
      updated_at: nowFloat(),
      default_environment_id: defaultEnvironmentId,
      trigger_id: newSecret('', 18),
    };
    await testsRepo.insert(trx, test);
    await environmentsRepo.insert(trx, [...sharedRows, ...envRows]);
    for (const row of [...sharedRows, ...envRows])
      await checkParent(trx, bucket.key, row.id, row.parent_environment_id);
    const stepRows = await stepsRepo.insert(trx, testId, steps);
    await schedulesRepo.insert(trx, schedules);

    // The answer is built from what was written, in the order the reads give it back: nothing
    // else can have changed the new test inside this transaction.
    const aggregate: TestAggregate = {
      test: { ...test, creator_name: actor.name, creator_email: actor.email },
      steps: assembleSteps(stepRows),
      environments: [...envRows].sort(byCreation),
      schedules: [...schedules].sort(byCreation),
      lastRun: null,
    };
    const entries: RevisionEntry[] = [
      {
        itemType: 'radar_test',
        itemId: testId,
        testId,
        action: 'create',
        snapshot: {
          ...testSnapshot(aggregate),
          ...(restoredFrom !== undefined && { restored_from: restoredFrom }),
        },
      },
      ...sharedRows.map((row) => ({
        itemType: 'environment' as const,
        itemId: row.id,
        testId: null,
        action: 'create' as const,
        snapshot: environmentView(row),
      })),
      ...envRows.map((row) => ({
        itemType: 'environment' as const,
        itemId: row.id,
        testId,
        action: 'create' as const,
        snapshot: environmentView(row),
      })),
    ];
    await recordRevisions(trx, actor, bucket, entries);
    return aggregate;
  }

  /** PUT: changes only the properties given. `steps` replaces the step list; ids of the test's own steps are kept. */
  update(actor: Actor, bucketKey: string, testId: string, body: TestPatch): Promise<TestAggregate> {
    const patch = given(body);
    return this.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      const { test } = aggregate;
      if (patch.default_environment_id !== undefined) {
        const ref = patch.default_environment_id;
        const env = isUuid(ref) ? await environmentsRepo.inBucket(trx, bucketKey, ref) : undefined;
        if (!env || (env.test_id !== null && env.test_id !== test.id)) {
          throw invalid(
            '/default_environment_id',
            `names environment ${ref}, which is neither this test's nor shared in the bucket`,
          );
        }
      }
      await testsRepo.update(trx, test.id, {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.description !== undefined && { description: patch.description }),
        ...(patch.default_environment_id !== undefined && {
          default_environment_id: patch.default_environment_id,
        }),
      });
      if (patch.steps !== undefined) {
        const allocate = stepIdAllocator(new Set(stepIds(aggregate.steps)));
        await stepsRepo.replaceAll(
          trx,
          test.id,
          patch.steps.map((s) => normalizeStep(s, allocate)),
        );
      }
    });
  }

  /**
   * Deletes the test with its steps, schedules, test environments and results (204). Refused (409)
   * while an environment elsewhere inherits from one of the test's environments.
   */
  async delete(actor: Actor, bucketKey: string, testId: string): Promise<void> {
    await this.deps.store.transaction(async (trx) => {
      const { bucket, test } = await this.requireTest(actor, bucketKey, testId, trx);
      await lockRow(trx, 'tests', test.id);
      const inheriting = await environmentsRepo.inheritingFromTest(trx, test.id);
      if (inheriting.length > 0) {
        throw conflict(
          `Environments ${inheriting.map((e) => `"${e.name}"`).join(', ')} of other tests or the bucket inherit from ` +
            "this test's environments; change their parent_environment_id first",
        );
      }
      const aggregate = await this.load(trx, test);
      await testsRepo.delete(trx, test.id);
      await recordRevisions(trx, actor, bucket, [
        {
          itemType: 'radar_test',
          itemId: test.id,
          testId: test.id,
          action: 'delete',
          snapshot: testSnapshot(aggregate),
        },
      ]);
    });
  }

  async export(principal: Principal, bucketKey: string, testId: string): Promise<TestExport> {
    const { test } = await this.requireTest(principal, bucketKey, testId);
    return exportTest(this.deps.store.db, bucketKey, await this.load(this.deps.store.db, test));
  }

  /** Revisions of the test and of its environments (spec 4.2). */
  async revisions(
    principal: Principal,
    bucketKey: string,
    testId: string,
  ): Promise<{ test: RevisionRow[]; environments: Map<string, RevisionRow[]> }> {
    await this.requireTest(principal, bucketKey, testId);
    const rows = await revisionsRepo.forTest(this.deps.store.db, testId);
    const test: RevisionRow[] = [];
    const environments = new Map<string, RevisionRow[]>();
    for (const row of rows) {
      if (row.item_type === 'radar_test') test.push(row);
      else environments.set(row.item_id, [...(environments.get(row.item_id) ?? []), row]);
    }
    return { test, environments };
  }
}
