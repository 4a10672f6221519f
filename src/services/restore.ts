import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_SETTINGS, SETTING_KEYS, type StoredSettings } from '../domain/environments.js';
import { AppError, conflict, notFound } from '../domain/errors.js';
import { isUuid, newId, nowFloat, nowSeconds } from '../domain/ids.js';
import { normalizeStep, type Step, type StepInput, stepIds } from '../domain/steps.js';
import type { EnvironmentRow, RevisionRow } from '../store/database.js';
import { lockRow } from '../store/locks.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { revisionsRepo } from '../store/repositories/revisions.js';
import { schedulesRepo } from '../store/repositories/schedules.js';
import { stepsRepo } from '../store/repositories/steps.js';
import { testsRepo } from '../store/repositories/tests.js';
import type { Executor, Store } from '../store/store.js';
import { checkEnvironmentLimit, checkParent, environmentView, storedSettings } from './environments.js';
import type { Actor } from './principal.js';
import { recordRevisions } from './revisions.js';
import { stepIdAllocator, type TestAggregate, type TestService } from './tests.js';

/** A part of a snapshot that could not be restored, and why (docs/api-decisions.md). */
export interface Skipped {
  field: string;
  message: string;
}

/** What a test revision keeps (testSnapshot). */
interface TestSnapshot {
  name: string;
  description: string | null;
  default_environment_id: string;
  steps: Step[];
  schedules: { id: string; environment_id: string; interval: string; note: string }[];
}

type EnvironmentSnapshot = ReturnType<typeof environmentView>;

/**
 * Restoring a revision (`POST …/tests/<t>/revisions/<uuid>/restore`): a test revision sets the test's
 * fields, steps and schedules back; an environment revision sets that environment back (recreating
 * it when it was deleted). Each restore is one transaction and writes a new revision.
 */
export class RestoreService {
  constructor(private readonly deps: { store: Store; tests: TestService }) {}

  async restore(
    actor: Actor,
    bucketKey: string,
    testId: string,
    revisionId: string,
  ): Promise<{ aggregate: TestAggregate; skipped: Skipped[] }> {
    const { store, tests } = this.deps;
    const { test } = await tests.requireTest(actor, bucketKey, testId);
    const revision = isUuid(revisionId) ? await revisionsRepo.get(store.db, revisionId) : undefined;
    if (!revision || revision.bucket_key !== bucketKey) throw notFound(`Revision ${revisionId}`);
    const skipped: Skipped[] = [];
    if (revision.item_type === 'radar_test') {
      if (revision.item_id !== test.id) throw notFound(`Revision ${revisionId}`);
      if (revision.action === 'delete') {
        throw conflict(
          `Revision ${revisionId} records the deletion of the test; restore an earlier revision instead`,
        );
      }
      const snapshot = JSON.parse(revision.snapshot) as TestSnapshot;
      const aggregate = await tests.edit(actor, bucketKey, testId, ({ trx, aggregate }) =>
        restoreTest(trx, aggregate, snapshot, skipped),
      );
      return { aggregate, skipped };
    }
    await store.transaction(async (trx) => {
      const { bucket } = await tests.requireTest(actor, bucketKey, testId, trx);
      await lockRow(trx, 'tests', test.id);
      if (!(await belongsToTest(trx, revision, test.id))) throw notFound(`Revision ${revisionId}`);
      await restoreEnvironment(trx, actor, bucket, revision, skipped);
    });
    return { aggregate: await tests.get(actor, bucketKey, testId), skipped };
  }
}

/** A test environment's revision belongs to its test; a shared one's to the tests that use it. */
async function belongsToTest(db: Executor, revision: RevisionRow, testId: string): Promise<boolean> {
  if (revision.test_id !== null) return revision.test_id === testId;
  const test = await testsRepo.byId(db, testId);
  if (!test) return false;
  const used = new Set<string>([test.default_environment_id]);
  for (const schedule of await schedulesRepo.forTest(db, testId)) used.add(schedule.environment_id);
  const links = await environmentsRepo.parentLinks(db, revision.bucket_key);
  for (const env of await environmentsRepo.forTest(db, testId)) {
    let parent = env.parent_environment_id;
    for (let depth = 0; parent && depth < 10; depth++) {
      used.add(parent);
      parent = links.get(parent) ?? null;
    }
  }
  return used.has(revision.item_id);
}

async function restoreTest(
  trx: Executor,
  aggregate: TestAggregate,
  snapshot: TestSnapshot,
  skipped: Skipped[],
): Promise<void> {
  const { test } = aggregate;
  const usable = new Map<string, boolean>();
  const isUsable = async (envId: string): Promise<boolean> => {
    let ok = usable.get(envId);
    if (ok === undefined) {
      const env = isUuid(envId) ? await environmentsRepo.inBucket(trx, test.bucket_key, envId) : undefined;
      ok = !!env && (env.test_id === null || env.test_id === test.id);
      usable.set(envId, ok);
    }
    return ok;
  };

  let defaultEnvironmentId = test.default_environment_id;
  if (snapshot.default_environment_id !== defaultEnvironmentId) {
    if (await isUsable(snapshot.default_environment_id))
      defaultEnvironmentId = snapshot.default_environment_id;
    else
      skipped.push({
        field: '/default_environment_id',
        message: `/default_environment_id: environment ${snapshot.default_environment_id} no longer exists; the current default stays`,
      });
  }
  await testsRepo.update(trx, test.id, {
    name: snapshot.name,
    description: snapshot.description,
    default_environment_id: defaultEnvironmentId,
  });

  // The snapshot's step ids are kept; its steps pass through the same normalisation as a PUT.
  let steps: Step[];
  try {
    const allocate = stepIdAllocator(new Set(stepIds(snapshot.steps)));
    steps = snapshot.steps.map((step) => normalizeStep(step as StepInput, allocate));
  } catch (error) {
    if (error instanceof AppError)
      throw conflict(`The revision's steps cannot be restored: ${error.message}`);
    throw error;
  }
  await stepsRepo.replaceAll(trx, test.id, steps);

  const current = new Map(aggregate.schedules.map((s) => [s.id, s]));
  const kept = new Set<string>();
  for (const [i, schedule] of snapshot.schedules.entries()) {
    if (!(await isUsable(schedule.environment_id))) {
      skipped.push({
        field: `/schedules/${i}`,
        message: `/schedules/${i}: environment ${schedule.environment_id} of the ${schedule.interval} schedule no longer exists; the schedule is left out`,
      });
      continue;
    }
    const existing = current.get(schedule.id);
    if (existing) {
      kept.add(existing.id);
      await schedulesRepo.update(trx, {
        ...existing,
        environment_id: schedule.environment_id,
        interval: schedule.interval,
        note: schedule.note,
        next_run_at: schedule.interval === existing.interval ? existing.next_run_at : null,
      });
    } else {
      await schedulesRepo.insert(trx, [
        {
          id: newId(),
          test_id: test.id,
          environment_id: schedule.environment_id,
          interval: schedule.interval,
          note: schedule.note,
          created_at: nowSeconds(),
          next_run_at: null,
        },
      ]);
    }
  }
  for (const schedule of aggregate.schedules)
    if (!kept.has(schedule.id)) await schedulesRepo.delete(trx, schedule.id);
}

/**
 * Revisions keep an environment as shown, defaults included, so which settings it set itself is
 * lost: a setting is stored when it differs from the default or the environment sets it today.
 */
function restoredSettings(
  snapshot: EnvironmentSnapshot,
  existing: EnvironmentRow | undefined,
): StoredSettings {
  const own = existing ? storedSettings(existing) : {};
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = snapshot[key];
    if (value === undefined) continue;
    if (key in own || !isDeepStrictEqual(value, DEFAULT_SETTINGS[key])) out[key] = value;
  }
  return out as StoredSettings;
}

async function restoreEnvironment(
  trx: Executor,
  actor: Actor,
  bucket: { key: string; team_id: string },
  revision: RevisionRow,
  skipped: Skipped[],
): Promise<void> {
  const snapshot = JSON.parse(revision.snapshot) as EnvironmentSnapshot;
  const id = revision.item_id;
  const existing = await environmentsRepo.inBucket(trx, bucket.key, id);
  if (existing && existing.test_id !== revision.test_id) throw notFound(`Revision ${revision.id}`);
  let parent = snapshot.parent_environment_id ?? null;
  if (parent !== null) {
    try {
      await checkParent(trx, bucket.key, id, parent);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      skipped.push({
        field: '/parent_environment_id',
        message: `/parent_environment_id: environment ${parent} no longer exists or would make a loop; the environment inherits from none`,
      });
      parent = null;
    }
  }
  const now = nowFloat();
  const row: EnvironmentRow = {
    id,
    bucket_key: bucket.key,
    test_id: revision.test_id,
    name: snapshot.name,
    parent_environment_id: parent,
    settings: JSON.stringify(restoredSettings(snapshot, existing)),
    created_at: existing?.created_at ?? now,
    updated_at: now,
  };
  if (existing) await environmentsRepo.update(trx, row);
  else {
    if (revision.test_id !== null) await checkEnvironmentLimit(trx, bucket.key, 1);
    await environmentsRepo.insert(trx, [row]);
  }
  await recordRevisions(trx, actor, bucket, [
    {
      itemType: 'environment',
      itemId: id,
      testId: revision.test_id,
      action: existing ? 'update' : 'create',
      snapshot: environmentView(row),
    },
  ]);
}
