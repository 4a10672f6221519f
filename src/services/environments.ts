import {
  type EnvironmentInput,
  type EnvironmentPatch,
  type EnvironmentSettings,
  MAX_TEST_ENVIRONMENTS_PER_BUCKET,
  normalizeSettings,
  SETTING_KEYS,
  type StoredSettings,
  withDefaults,
} from '../domain/environments.js';
import { AppError, conflict, invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, nowFloat } from '../domain/ids.js';
import { templateProblem } from '../domain/notification-templates.js';
import type { EnvironmentRow } from '../store/database.js';
import { lockRow } from '../store/locks.js';
import { bucketsRepo } from '../store/repositories/buckets.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { integrationsRepo } from '../store/repositories/integrations.js';
import type { Executor, Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import type { Actor, Principal } from './principal.js';
import { recordRevisions } from './revisions.js';
import type { TestService } from './tests.js';

/** An environment as the API shows it (spec 2.3): its own settings over the defaults. */
export interface EnvironmentView extends EnvironmentSettings {
  id: string;
  name: string;
  test_id: string | null;
  parent_environment_id: string | null;
}

export function environmentView(row: EnvironmentRow): EnvironmentView {
  return {
    id: row.id,
    name: row.name,
    test_id: row.test_id,
    parent_environment_id: row.parent_environment_id,
    ...withDefaults(JSON.parse(row.settings) as StoredSettings),
  };
}

export function storedSettings(row: EnvironmentRow): StoredSettings {
  return JSON.parse(row.settings) as StoredSettings;
}

/** Limit of parent links followed; deeper chains are refused as if they were cycles. */
const MAX_PARENT_DEPTH = 10;

/** Checks that `parentId` names an environment of the bucket and that linking to it makes no cycle. */
export async function checkParent(
  db: Executor,
  bucketKey: string,
  envId: string,
  parentId: string | null | undefined,
  field = '/parent_environment_id',
): Promise<void> {
  if (parentId === null || parentId === undefined) return;
  if (parentId === envId) throw invalid(field, 'cannot name the environment itself');
  const links = await environmentsRepo.parentLinks(db, bucketKey);
  if (!links.has(parentId))
    throw invalid(field, `names environment ${parentId}, which is not in this bucket`);
  let current: string | null | undefined = parentId;
  for (let depth = 0; current; depth++) {
    if (current === envId || depth >= MAX_PARENT_DEPTH) {
      throw invalid(field, `would make a parent chain that loops or is deeper than ${MAX_PARENT_DEPTH}`);
    }
    current = links.get(current);
  }
}

/** Checks the bucket's limit of test-specific environments before adding `adding` more. */
export async function checkEnvironmentLimit(db: Executor, bucketKey: string, adding: number): Promise<void> {
  await lockRow(db, 'buckets', bucketKey);
  const count = await bucketsRepo.countTestEnvironments(db, bucketKey);
  if (count + adding > MAX_TEST_ENVIRONMENTS_PER_BUCKET) {
    throw new AppError(
      'limit_reached',
      `Bucket ${bucketKey} has ${count} test-specific environments; the limit is ${MAX_TEST_ENVIRONMENTS_PER_BUCKET}`,
    );
  }
}

export function newEnvironmentRow(
  input: {
    id?: string;
    name: string;
    parent_environment_id?: string | null | undefined;
    settings: StoredSettings;
  },
  bucketKey: string,
  testId: string | null,
): EnvironmentRow {
  const now = nowFloat();
  return {
    id: input.id ?? newId(),
    bucket_key: bucketKey,
    test_id: testId,
    name: input.name,
    parent_environment_id: input.parent_environment_id ?? null,
    settings: JSON.stringify(input.settings),
    created_at: now,
    updated_at: now,
  };
}

function settingsOf(input: EnvironmentPatch): Partial<EnvironmentInput> {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

/**
 * Each integration an environment names by id takes its type (and, when the client gave none, its
 * description) from the team's integration of that id: clients of the original service send the id
 * alone. Ids of no integration of the team are kept as given (runs skip them).
 */
/** The e-mail template, if any, renders (docs/alerting.md); else 400 naming its field. */
function checkMailTemplate(settings: StoredSettings): StoredSettings {
  const template = settings.emails?.template;
  const problem = template ? templateProblem(template, 'text', '/emails') : null;
  if (problem) throw invalid(problem.field, problem.why);
  return settings;
}

async function resolveIntegrations(
  db: Executor,
  teamId: string,
  settings: StoredSettings,
): Promise<StoredSettings> {
  if (!settings.integrations || settings.integrations.length === 0) return settings;
  const known = new Map(
    (
      await integrationsRepo.someOfTeam(
        db,
        teamId,
        settings.integrations.map((i) => i.id),
      )
    ).map((row) => [row.id, row]),
  );
  return {
    ...settings,
    integrations: settings.integrations.map((item) => {
      const row = known.get(item.id);
      if (!row) return item;
      return {
        id: item.id,
        integration_type: row.integration_type,
        description: item.description || row.description,
      };
    }),
  };
}

export class EnvironmentService {
  constructor(private readonly deps: { store: Store; buckets: BucketService; tests: TestService }) {}

  /** The environments of a test (scope `testId`) or the shared environments of the bucket (null). */
  async list(principal: Principal, bucketKey: string, testId: string | null): Promise<EnvironmentRow[]> {
    const { store, buckets, tests } = this.deps;
    if (testId === null) {
      await buckets.require(principal, bucketKey);
      return environmentsRepo.shared(store.db, bucketKey);
    }
    await tests.requireTest(principal, bucketKey, testId);
    return environmentsRepo.forTest(store.db, testId);
  }

  async get(
    principal: Principal,
    bucketKey: string,
    testId: string | null,
    envId: string,
  ): Promise<EnvironmentRow> {
    const { store, buckets, tests } = this.deps;
    if (testId === null) await buckets.require(principal, bucketKey);
    else await tests.requireTest(principal, bucketKey, testId);
    return this.find(store.db, bucketKey, testId, envId);
  }

  /** The environment of the test (`testId`), or any of the bucket, test environments included (null). */
  private async find(
    db: Executor,
    bucketKey: string,
    testId: string | null,
    envId: string,
  ): Promise<EnvironmentRow> {
    const row = isUuid(envId) ? await environmentsRepo.inBucket(db, bucketKey, envId) : undefined;
    if (!row || (testId !== null && row.test_id !== testId)) throw notFound(`Environment ${envId}`);
    return row;
  }

  async create(
    actor: Actor,
    bucketKey: string,
    testId: string | null,
    input: EnvironmentInput,
  ): Promise<EnvironmentRow> {
    const { store, buckets, tests } = this.deps;
    return store.transaction(async (trx) => {
      const bucket = await buckets.require(actor, bucketKey, trx);
      if (testId !== null) {
        await tests.requireTest(actor, bucketKey, testId, trx);
        await checkEnvironmentLimit(trx, bucketKey, 1);
      }
      const row = newEnvironmentRow(
        {
          name: input.name,
          parent_environment_id: input.parent_environment_id,
          settings: await resolveIntegrations(
            trx,
            bucket.team_id,
            checkMailTemplate(normalizeSettings(input)),
          ),
        },
        bucketKey,
        testId,
      );
      await checkParent(trx, bucketKey, row.id, row.parent_environment_id);
      await environmentsRepo.insert(trx, [row]);
      await recordRevisions(trx, actor, bucket, [
        { itemType: 'environment', itemId: row.id, testId, action: 'create', snapshot: environmentView(row) },
      ]);
      return row;
    });
  }

  /** Changes only the properties given; a setting given as part of the body replaces the stored one. */
  async update(
    actor: Actor,
    bucketKey: string,
    testId: string | null,
    envId: string,
    patch: EnvironmentPatch,
  ): Promise<EnvironmentRow> {
    const { store, buckets } = this.deps;
    return store.transaction(async (trx) => {
      const bucket = await buckets.require(actor, bucketKey, trx);
      if (testId !== null) await this.deps.tests.requireTest(actor, bucketKey, testId, trx);
      const row = await this.find(trx, bucketKey, testId, envId);
      if (patch.parent_environment_id !== undefined) {
        await checkParent(trx, bucketKey, row.id, patch.parent_environment_id);
      }
      const updated: EnvironmentRow = {
        ...row,
        name: patch.name ?? row.name,
        parent_environment_id:
          patch.parent_environment_id === undefined ? row.parent_environment_id : patch.parent_environment_id,
        settings: JSON.stringify({
          ...storedSettings(row),
          ...(await resolveIntegrations(
            trx,
            bucket.team_id,
            checkMailTemplate(normalizeSettings(settingsOf(patch))),
          )),
        }),
        updated_at: nowFloat(),
      };
      await environmentsRepo.update(trx, updated);
      await recordRevisions(trx, actor, bucket, [
        {
          itemType: 'environment',
          itemId: row.id,
          testId: row.test_id,
          action: 'update',
          snapshot: environmentView(updated),
        },
      ]);
      return updated;
    });
  }

  /** Deletes an environment and its schedules; refused (409) while a test uses it as default or another inherits from it. */
  async delete(actor: Actor, bucketKey: string, testId: string | null, envId: string): Promise<void> {
    const { store, buckets } = this.deps;
    await store.transaction(async (trx) => {
      const bucket = await buckets.require(actor, bucketKey, trx);
      if (testId !== null) await this.deps.tests.requireTest(actor, bucketKey, testId, trx);
      const row = await this.find(trx, bucketKey, testId, envId);
      const defaults = await environmentsRepo.defaultOf(trx, row.id);
      if (defaults.length > 0) {
        throw conflict(
          `Environment ${row.id} is the default environment of test ${defaults.map((t) => `"${t.name}"`).join(', ')}; ` +
            'set another default_environment_id first',
        );
      }
      const children = await environmentsRepo.children(trx, bucketKey, row.id);
      if (children.length > 0) {
        throw conflict(
          `Environment ${row.id} is the parent of ${children.map((c) => `"${c.name}"`).join(', ')}; change their parent_environment_id first`,
        );
      }
      await environmentsRepo.delete(trx, row.id);
      await recordRevisions(trx, actor, bucket, [
        {
          itemType: 'environment',
          itemId: row.id,
          testId: row.test_id,
          action: 'delete',
          snapshot: environmentView(row),
        },
      ]);
    });
  }
}
