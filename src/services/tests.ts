import { type EnvironmentInput, normalizeSettings, type StoredSettings } from '../domain/environments.js';
import { conflict, invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, newSecret, nowFloat, nowSeconds } from '../domain/ids.js';
import type { ScheduleInterval } from '../domain/schedules.js';
import { defaultRequestStep, normalizeStep, type Step, type StepInput, stepIds } from '../domain/steps.js';
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
import {
  checkEnvironmentLimit,
  checkParent,
  environmentView,
  newEnvironmentRow,
  storedSettings,
} from './environments.js';
import type { Actor, Principal } from './principal.js';
import { type RevisionEntry, recordRevisions } from './revisions.js';

/** A test with everything its detail form shows. */
export interface TestAggregate {
  test: TestWithCreator;
  steps: Step[];
  environments: EnvironmentRow[];
  schedules: ScheduleRow[];
  /** The newest finished run; filled by reads that show it (the detail). */
  lastRun?: LastRunSummary | null;
}

/** The body of a test create: a plain `{name, description}` or a whole exported test (import). */
export interface TestCreateInput {
  name: string;
  description?: string | null | undefined;
  default_environment_id?: string | undefined;
  environments?: (EnvironmentInput & { id?: string | undefined })[] | undefined;
  shared_environments?: (EnvironmentInput & { id: string })[] | undefined;
  steps?: StepInput[] | undefined;
  schedules?:
    | { environment_id?: string | undefined; interval: ScheduleInterval; note?: string | undefined }[]
    | undefined;
}

export interface TestPatch {
  name?: string | undefined;
  description?: string | null | undefined;
  default_environment_id?: string | undefined;
  steps?: StepInput[] | undefined;
}

/** The portable form of a test (`GET …/export`), accepted back by POST …/tests. */
export interface TestExport {
  vigil_export_version: 1;
  id: string;
  name: string;
  description: string | null;
  default_environment_id: string;
  environments: (StoredSettings & { id: string; name: string; parent_environment_id: string | null })[];
  shared_environments: (StoredSettings & {
    id: string;
    name: string;
    parent_environment_id: string | null;
  })[];
  steps: Step[];
  schedules: { environment_id: string; interval: string; note: string }[];
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

function exportedEnvironment(row: EnvironmentRow) {
  return {
    id: row.id,
    name: row.name,
    parent_environment_id: row.parent_environment_id,
    ...storedSettings(row),
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
    return testsRepo.list(this.deps.store.db, bucketKey, count, page.offset ?? 0);
  }

  /**
   * A page of the tests list with what the dashboard shows of each: schedules, last run and recent
   * runs. A fixed number of queries whatever the page size (tests, total, schedules, runs).
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
      testsRepo.list(db, bucketKey, count, page.offset ?? 0),
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

  /** Creates one test, or several from an array, all in one transaction. */
  async create(
    actor: Actor,
    bucketKey: string,
    inputs: readonly TestCreateInput[],
    isArray: boolean,
  ): Promise<TestAggregate[]> {
    return this.deps.store.transaction(async (trx) => {
      const bucket = await this.deps.buckets.require(actor, bucketKey, trx);
      const environmentsAdded = inputs.reduce(
        (n, input) => n + Math.max(1, input.environments?.length ?? 0),
        0,
      );
      await checkEnvironmentLimit(trx, bucketKey, environmentsAdded);
      const created: TestAggregate[] = [];
      for (const [index, input] of inputs.entries()) {
        created.push(await this.createOne(trx, actor, bucket, input, isArray ? `/${index}` : ''));
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
  ): Promise<TestAggregate> {
    const testId = newId();
    const now = nowSeconds();

    // Environment ids of an import are remapped to new ones; shared parents are matched or recreated.
    const envIds = new Map<string, string>();
    const sharedRows: EnvironmentRow[] = [];
    for (const [i, shared] of (input.shared_environments ?? []).entries()) {
      const existing = isUuid(shared.id)
        ? await environmentsRepo.inBucket(trx, bucket.key, shared.id)
        : undefined;
      if (existing && existing.test_id === null) {
        envIds.set(shared.id, existing.id);
        continue;
      }
      if (existing)
        throw invalid(`${at}/shared_environments/${i}/id`, 'names a test environment of this bucket');
      const row = newEnvironmentRow(
        { name: shared.name, settings: normalizeSettings(shared) },
        bucket.key,
        null,
      );
      envIds.set(shared.id, row.id);
      sharedRows.push(row);
    }
    const envInputs = input.environments?.length ? input.environments : [{ name: 'Test Settings' }];
    const envRows = envInputs.map((env) => {
      const row = newEnvironmentRow({ name: env.name, settings: normalizeSettings(env) }, bucket.key, testId);
      if (env.id) envIds.set(env.id, row.id);
      return row;
    });
    const resolveEnv = async (ref: string | null | undefined, field: string): Promise<string | null> => {
      if (ref === null || ref === undefined) return null;
      const mapped = envIds.get(ref);
      if (mapped) return mapped;
      const shared = isUuid(ref) ? await environmentsRepo.inBucket(trx, bucket.key, ref) : undefined;
      if (shared && shared.test_id === null) return shared.id;
      throw invalid(
        field,
        `names environment ${ref}, which is neither in this import nor a shared environment of the bucket`,
      );
    };
    for (const [i, shared] of (input.shared_environments ?? []).entries()) {
      const row = sharedRows.find((r) => r.id === envIds.get(shared.id));
      if (row)
        row.parent_environment_id = await resolveEnv(
          shared.parent_environment_id,
          `${at}/shared_environments/${i}/parent_environment_id`,
        );
    }
    for (const [i, env] of envInputs.entries()) {
      const parent = 'parent_environment_id' in env ? env.parent_environment_id : undefined;
      envRows[i]!.parent_environment_id = await resolveEnv(
        parent,
        `${at}/environments/${i}/parent_environment_id`,
      );
    }
    const defaultEnvironmentId =
      input.default_environment_id !== undefined
        ? (await resolveEnv(input.default_environment_id, `${at}/default_environment_id`))!
        : envRows[0]!.id;

    const steps = input.steps
      ? input.steps.map((s) => normalizeStep(s, () => newId()))
      : [defaultRequestStep(newId())];
    const schedules: ScheduleRow[] = [];
    for (const [i, s] of (input.schedules ?? []).entries()) {
      schedules.push({
        id: newId(),
        test_id: testId,
        environment_id: (await resolveEnv(
          s.environment_id ?? defaultEnvironmentId,
          `${at}/schedules/${i}/environment_id`,
        ))!,
        interval: s.interval,
        note: s.note ?? '',
        created_at: now,
        next_run_at: null,
      });
    }

    await testsRepo.insert(trx, {
      id: testId,
      bucket_key: bucket.key,
      name: input.name,
      description: input.description ?? null,
      created_by: actor.accountId,
      created_at: now,
      updated_at: nowFloat(),
      default_environment_id: defaultEnvironmentId,
      trigger_id: newSecret('', 18),
    });
    await environmentsRepo.insert(trx, [...sharedRows, ...envRows]);
    for (const row of [...sharedRows, ...envRows])
      await checkParent(trx, bucket.key, row.id, row.parent_environment_id);
    await stepsRepo.replaceAll(trx, testId, steps);
    await schedulesRepo.insert(trx, schedules);

    const aggregate = await this.load(trx, (await testsRepo.get(trx, bucket.key, testId))!);
    const entries: RevisionEntry[] = [
      { itemType: 'radar_test', itemId: testId, testId, action: 'create', snapshot: testSnapshot(aggregate) },
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
  update(actor: Actor, bucketKey: string, testId: string, patch: TestPatch): Promise<TestAggregate> {
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
    const aggregate = await this.load(this.deps.store.db, test);
    // Shared environments the test's environments (or its default) inherit from travel with it.
    const shared = new Map<string, EnvironmentRow>();
    const pending = [
      test.default_environment_id,
      ...aggregate.environments.map((e) => e.parent_environment_id),
    ];
    while (pending.length > 0) {
      const id = pending.pop();
      if (!id || shared.has(id) || aggregate.environments.some((e) => e.id === id)) continue;
      const row = await environmentsRepo.inBucket(this.deps.store.db, bucketKey, id);
      if (row && row.test_id === null) {
        shared.set(id, row);
        pending.push(row.parent_environment_id);
      }
    }
    return {
      vigil_export_version: 1,
      id: test.id,
      name: test.name,
      description: test.description,
      default_environment_id: test.default_environment_id,
      environments: aggregate.environments.map(exportedEnvironment),
      shared_environments: [...shared.values()].map(exportedEnvironment),
      steps: aggregate.steps,
      schedules: aggregate.schedules.map((s) => ({
        environment_id: s.environment_id,
        interval: s.interval,
        note: s.note,
      })),
    };
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
