import { type EnvironmentSettings, resolveSettings, type StoredSettings } from '../../domain/environments.js';
import type { SubtestStep } from '../../domain/steps.js';
import type { RunDefinition, SubtestPort } from '../../runner/engine.js';
import type { BucketRow, EnvironmentRow, TestRow, TestRunRow } from '../../store/database.js';
import { bucketsRepo } from '../../store/repositories/buckets.js';
import { environmentsRepo } from '../../store/repositories/environments.js';
import { stepsRepo } from '../../store/repositories/steps.js';
import { testsRepo } from '../../store/repositories/tests.js';
import type { Executor, Store } from '../../store/store.js';
import { storedSettings } from '../environments.js';

const MAX_ENVIRONMENT_DEPTH = 10;

/** Whether `environment` is one a run of `test` may use: the test's own or its bucket's. */
export function environmentFits(
  environment: EnvironmentRow | undefined,
  test: TestRow,
): environment is EnvironmentRow {
  return (
    environment !== undefined &&
    environment.bucket_key === test.bucket_key &&
    (environment.test_id === null || environment.test_id === test.id)
  );
}

/**
 * What the engine runs: a test with its steps, in an environment resolved over its parents, in a
 * bucket. One place builds it, for queued runs and for subtests alike.
 */
export class RunDefinitions {
  constructor(private readonly deps: { store: Store }) {}

  /** The settings a run uses: the environment's own over its parents' (DESIGN §3). */
  async resolveEnvironment(db: Executor, environment: EnvironmentRow): Promise<EnvironmentSettings> {
    const chain: StoredSettings[] = [storedSettings(environment)];
    let parentId = environment.parent_environment_id;
    const seen = new Set([environment.id]);
    while (parentId && chain.length <= MAX_ENVIRONMENT_DEPTH && !seen.has(parentId)) {
      seen.add(parentId);
      const parent = await environmentsRepo.byId(db, parentId);
      if (!parent || parent.bucket_key !== environment.bucket_key) break;
      chain.push(storedSettings(parent));
      parentId = parent.parent_environment_id;
    }
    return resolveSettings(chain);
  }

  /** The definition of a queued run, or why it cannot run any more. */
  async forRun(run: TestRunRow): Promise<RunDefinition | { error: string }> {
    const { db } = this.deps.store;
    const test = await testsRepo.byId(db, run.test_id);
    const bucket = await bucketsRepo.byKey(db, run.bucket_key);
    if (!test || !bucket) return { error: 'the test was deleted before the run started' };
    const environment = await environmentsRepo.byId(db, run.environment_id);
    if (!environment)
      return { error: `the environment ${run.environment_name} was deleted before the run started` };
    return {
      runId: run.id,
      ...(await this.build(db, test, environment, bucket)),
      region: run.region,
      agent: run.agent,
      variables: JSON.parse(run.trigger_variables) as Record<string, string>,
    };
  }

  /** A subtest of `parent`: resolved within the parent's team, run where the parent runs. */
  readonly forSubtest: SubtestPort['resolve'] = async (
    step: SubtestStep,
    parent: RunDefinition,
    variables: Record<string, string>,
  ) => {
    const { db } = this.deps.store;
    const parentBucket = await bucketsRepo.byKey(db, parent.bucket.key);
    const test = await testsRepo.byId(db, step.test_uuid);
    const bucket = test ? await bucketsRepo.byKey(db, test.bucket_key) : undefined;
    if (!test || !bucket || !parentBucket || bucket.team_id !== parentBucket.team_id) {
      return { error: `test_uuid: no test ${step.test_uuid} in this team` };
    }
    if (step.bucket_key && step.bucket_key !== bucket.key) {
      return { error: `bucket_key: test ${step.test_uuid} is not in bucket ${step.bucket_key}` };
    }
    const environmentId = step.environment_uuid || test.default_environment_id;
    const environment = await environmentsRepo.byId(db, environmentId);
    if (!environmentFits(environment, test)) {
      return { error: `environment_uuid: no environment ${environmentId} of test ${test.name}` };
    }
    return {
      ...(await this.build(db, test, environment, bucket)),
      region: parent.region,
      agent: parent.agent,
      variables,
    };
  };

  private async build(
    db: Executor,
    test: TestRow,
    environment: EnvironmentRow,
    bucket: BucketRow,
  ): Promise<Pick<RunDefinition, 'test' | 'environment' | 'bucket'>> {
    return {
      test: { id: test.id, name: test.name, steps: await stepsRepo.forTest(db, test.id) },
      environment: {
        id: environment.id,
        name: environment.name,
        settings: await this.resolveEnvironment(db, environment),
      },
      bucket: { key: bucket.key, name: bucket.name, verify_ssl: bucket.verify_ssl === 1 },
    };
  }
}
