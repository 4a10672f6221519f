import { type EnvironmentInput, normalizeSettings, type StoredSettings } from '../domain/environments.js';
import { invalid } from '../domain/errors.js';
import { isUuid, newId } from '../domain/ids.js';
import { canonicalInterval } from '../domain/schedules.js';
import { defaultRequestStep, normalizeStep, type Step, type StepInput } from '../domain/steps.js';
import type { EnvironmentRow, ScheduleRow } from '../store/database.js';
import type { BucketWithTeam } from '../store/repositories/buckets.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import type { Executor, Trx } from '../store/store.js';
import { newEnvironmentRow, storedSettings } from './environments.js';
import type { TestAggregate } from './tests.js';

/**
 * Tests leaving and entering a bucket whole: the portable export of a test, and the rows a test
 * create with environments, steps and schedules (an import) becomes.
 */

/** The body of a test create: a plain `{name, description}` or a whole exported test (import). */
export interface TestCreateInput {
  name: string;
  description?: string | null | undefined;
  default_environment_id?: string | null | undefined;
  environments?: (EnvironmentInput & { id?: string | undefined })[] | null | undefined;
  shared_environments?: (EnvironmentInput & { id: string })[] | null | undefined;
  steps?: StepInput[] | null | undefined;
  schedules?:
    { environment_id?: string | undefined; interval: string; note?: string | undefined }[] | null | undefined;
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

/** The rows of a new test besides its own: environments, steps and schedules. */
export interface NewTestParts {
  /** Shared environments of the import that the bucket does not have yet. */
  sharedRows: EnvironmentRow[];
  /** The test's own environments (one "Test Settings" when none is given). */
  envRows: EnvironmentRow[];
  defaultEnvironmentId: string;
  steps: Step[];
  schedules: ScheduleRow[];
}

/**
 * The parts of test `testId` created from `input`. Environment ids of an import are remapped to
 * new ones; shared parents are matched in the bucket or recreated. `at` prefixes error fields.
 */
export async function newTestParts(
  trx: Trx,
  bucket: BucketWithTeam,
  testId: string,
  input: TestCreateInput,
  at: string,
  now: number,
): Promise<NewTestParts> {
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
      interval: canonicalInterval(s.interval),
      note: s.note ?? '',
      created_at: now,
      next_run_at: null,
    });
  }
  return { sharedRows, envRows, defaultEnvironmentId, steps, schedules };
}

/** The export of a test; shared environments its environments (or its default) inherit from travel with it. */
export async function exportTest(
  db: Executor,
  bucketKey: string,
  aggregate: TestAggregate,
): Promise<TestExport> {
  const { test } = aggregate;
  const shared = new Map<string, EnvironmentRow>();
  const pending = [
    test.default_environment_id,
    ...aggregate.environments.map((e) => e.parent_environment_id),
  ];
  while (pending.length > 0) {
    const id = pending.pop();
    if (!id || shared.has(id) || aggregate.environments.some((e) => e.id === id)) continue;
    const row = await environmentsRepo.inBucket(db, bucketKey, id);
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

function exportedEnvironment(row: EnvironmentRow) {
  return {
    id: row.id,
    name: row.name,
    parent_environment_id: row.parent_environment_id,
    ...storedSettings(row),
  };
}
