import { type DataRow, DataRowsError, dataRowsOf, parseDataRows } from '../../domain/data-rows.js';
import type { EnvironmentSettings } from '../../domain/environments.js';
import { AppError, invalid, notFound, RateLimited } from '../../domain/errors.js';
import { isUuid, newId, nowFloat } from '../../domain/ids.js';
import type { RunSource } from '../../domain/results.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { AgentRow, TestRow, TestRunRow } from '../../store/database.js';
import { agentsRepo } from '../../store/repositories/agents.js';
import { bucketsRepo } from '../../store/repositories/buckets.js';
import { environmentsRepo } from '../../store/repositories/environments.js';
import { runsRepo } from '../../store/repositories/runs.js';
import { testsRepo } from '../../store/repositories/tests.js';
import type { Executor, Store } from '../../store/store.js';
import { maintenanceOfTest } from '../maintenance.js';
import type { Principal } from '../principal.js';
import { SlidingWindowLimiter } from '../rate-limit.js';
import type { TestService } from '../tests.js';
import { environmentFits, type RunDefinitions } from './definitions.js';
import { isSafeId, newRunRow, queueRegionOf, RUN_JOB_RETRY } from './rows.js';

/** Trigger parameters that steer the run instead of becoming variables (DESIGN §4). */
export const RESERVED_PARAMETERS = [
  'vigil_environment',
  'vigil_region',
  'vigil_agent',
  'vigil_notification_url',
] as const;

/**
 * The trigger parameters with the original service's reserved names (`runscope_environment`, …)
 * read as their `vigil_` equivalents; a `vigil_` one given too wins.
 */
export function withReservedAliases(parameters: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(parameters)) {
    const alias = /^runscope_(environment|region|agent|notification_url)$/.exec(name);
    if (alias) out[`vigil_${alias[1]}`] ??= value;
    else out[name] = value;
  }
  return out;
}

export const TRIGGER_LIMIT = { triggers: 10, windowMs: 10_000 } as const;
export const MAX_BATCH = 50;
/** Rows a data-driven batch (`POST …/tests/<id>/batch`) may hold. */
export const BATCH_ROW_LIMIT = 1_000;

/** A run as the trigger answers it (DESIGN §4). */
export interface StartedRun {
  row: TestRunRow;
  testName: string;
  variables: Record<string, string>;
}

interface RunRequest {
  test: TestRow;
  environmentId?: string | undefined;
  region?: string | undefined;
  /** Only the environment's remote agent of this name or id (`vigil_agent`). */
  agent?: string | undefined;
  variables: Record<string, string>;
  source: RunSource;
  notificationUrl?: string | undefined;
  /** The schedule that starts the run, and the start it planned. */
  scheduleId?: string | undefined;
  plannedAt?: number | undefined;
}

export interface RunLauncherOptions {
  store: Store;
  queue: JobQueue;
  tests: TestService;
  definitions: RunDefinitions;
  /** The region of runs whose environment names none (REGION). */
  region: string;
}

/**
 * Starting runs (trigger URLs, the API, schedules): one `test_runs` row and one `run-test` job per
 * region or agent the environment picks, created in one transaction.
 */
export class RunLauncher {
  private readonly limiter = new SlidingWindowLimiter(TRIGGER_LIMIT.triggers, TRIGGER_LIMIT.windowMs);

  constructor(private readonly deps: RunLauncherOptions) {}

  /** The trigger URL of a test: one run per region of the chosen environment. */
  async triggerTest(triggerId: string, parameters: Record<string, string>): Promise<StartedRun[]> {
    const test = await this.triggerTarget(triggerId);
    this.checkRate(`test:${triggerId}`);
    return this.start([this.fromParameters(test, parameters)]);
  }

  /** The batch URL: one set of runs per variable set. */
  async triggerBatch(triggerId: string, sets: Record<string, string>[]): Promise<StartedRun[]> {
    const test = await this.triggerTarget(triggerId);
    this.checkRate(`test:${triggerId}`);
    if (sets.length > MAX_BATCH) {
      throw new AppError(
        'limit_reached',
        `A batch holds at most ${MAX_BATCH} variable sets; got ${sets.length}`,
      );
    }
    return this.start(sets.map((set) => this.fromParameters(test, set)));
  }

  /** The bucket trigger: every test of the bucket with its default environment. */
  async triggerBucket(triggerId: string, parameters: Record<string, string>): Promise<StartedRun[]> {
    const bucket = isSafeId(triggerId)
      ? await bucketsRepo.byTriggerId(this.deps.store.db, triggerId)
      : undefined;
    if (!bucket) throw notFound(`Trigger ${triggerId}`);
    this.checkRate(`bucket:${triggerId}`);
    const tests = await testsRepo.allInBucket(this.deps.store.db, bucket.key);
    const { vigil_environment: _ignored, ...rest } = withReservedAliases(parameters);
    return this.start(tests.map((test) => this.fromParameters(test, rest)));
  }

  /** A manual run from the API (`POST …/tests/<id>/runs`). */
  async runManually(
    principal: Principal,
    bucketKey: string,
    testId: string,
    body: {
      environment_id?: string | undefined;
      region?: string | undefined;
      variables?: Record<string, string> | undefined;
    },
  ): Promise<StartedRun[]> {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    return this.start([
      {
        test,
        environmentId: body.environment_id,
        region: body.region,
        variables: body.variables ?? {},
        source: 'manual',
      },
    ]);
  }

  /**
   * A data-driven batch from the API (`POST …/tests/<id>/batch`): one manual run per row of a CSV
   * text or a JSON array, the row's columns as initial variables over the environment's.
   */
  async runBatch(
    principal: Principal,
    bucketKey: string,
    testId: string,
    file: { csv: string } | { json: unknown },
    options: { environment_id?: string | undefined; region?: string | undefined },
  ): Promise<StartedRun[]> {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    let rows: DataRow[];
    try {
      rows =
        'csv' in file
          ? parseDataRows(file.csv, 'csv', { maxRows: Infinity })
          : dataRowsOf(file.json, { maxRows: Infinity });
    } catch (error) {
      if (error instanceof DataRowsError) throw invalid('body', error.message);
      throw error;
    }
    if (rows.length > BATCH_ROW_LIMIT) {
      throw new AppError(
        'limit_reached',
        `A batch holds at most ${BATCH_ROW_LIMIT} rows; the file has ${rows.length}`,
      );
    }
    return this.start(
      rows.map((variables) => ({
        test,
        environmentId: options.environment_id,
        region: options.region,
        variables: { ...variables },
        source: 'manual' as const,
      })),
    );
  }

  /**
   * Queues the runs of a schedule's planned start inside the scheduler's transaction (the caller
   * wakes the workers after it commits).
   */
  async queueScheduled(
    trx: Executor,
    schedule: { id: string; test_id: string; environment_id: string },
    plannedAt: number,
  ): Promise<StartedRun[]> {
    const test = await testsRepo.byId(trx, schedule.test_id);
    if (!test) return [];
    return this.queueRuns(trx, {
      test,
      environmentId: schedule.environment_id,
      variables: {},
      source: 'scheduled',
      scheduleId: schedule.id,
      plannedAt,
    });
  }

  /** Tells this process's workers (and, on PostgreSQL, every process's) that runs are queued. */
  wakeWorkers(): void {
    this.deps.queue.notify();
  }

  private async triggerTarget(triggerId: string): Promise<TestRow> {
    const test = isSafeId(triggerId) ? await testsRepo.byTriggerId(this.deps.store.db, triggerId) : undefined;
    if (!test) throw notFound(`Trigger ${triggerId}`);
    return test;
  }

  private checkRate(key: string): void {
    const wait = this.limiter.take(key);
    if (wait > 0) {
      throw new RateLimited(
        `This trigger URL was called more than ${TRIGGER_LIMIT.triggers} times in ${TRIGGER_LIMIT.windowMs / 1000} s; try again in ${Math.ceil(wait / 1000)} s`,
        wait / 1000,
      );
    }
  }

  private fromParameters(test: TestRow, parameters: Record<string, string>): RunRequest {
    const { vigil_environment, vigil_region, vigil_agent, vigil_notification_url, ...variables } =
      withReservedAliases(parameters);
    if (vigil_notification_url !== undefined && !/^https?:\/\/\S+$/i.test(vigil_notification_url)) {
      throw invalid('vigil_notification_url', 'must be an http:// or https:// URL');
    }
    return {
      test,
      environmentId: vigil_environment,
      region: vigil_region,
      agent: vigil_agent,
      variables,
      source: 'trigger_url',
      notificationUrl: vigil_notification_url,
    };
  }

  /** Creates the runs and their jobs in one transaction, then wakes the workers. */
  private async start(requests: readonly RunRequest[]): Promise<StartedRun[]> {
    await this.deps.store.assertRoom();
    const started = await this.deps.store.transaction(async (trx) => {
      const all: StartedRun[] = [];
      for (const request of requests) all.push(...(await this.queueRuns(trx, request)));
      return all;
    });
    this.deps.queue.notify();
    return started;
  }

  private async queueRuns(trx: Executor, request: RunRequest): Promise<StartedRun[]> {
    const { test } = request;
    const environmentId = request.environmentId || test.default_environment_id;
    if (!isUuid(environmentId)) throw invalid('vigil_environment', 'must be an environment id (UUID)');
    const environment = await environmentsRepo.byId(trx, environmentId);
    if (!environmentFits(environment, test)) {
      throw invalid('vigil_environment', `names no environment of test ${test.id} or of its bucket`);
    }
    const settings = await this.deps.definitions.resolveEnvironment(trx, environment);
    const targets = await this.targetsOf(trx, request, environment.name, settings);
    const now = nowFloat();
    // A maintenance window pauses the test's schedules, or mutes the notifications of its runs.
    const maintenance = await maintenanceOfTest(trx, test, request.plannedAt ?? now);
    if (maintenance === 'pause' && request.source === 'scheduled') return [];
    // The runs of one start share a round: an alert quorum decides their notifications together.
    const roundId = targets.length > 1 ? newId() : null;
    const rows = targets.map(({ region, agent, agent_id }) =>
      newRunRow({
        test_id: test.id,
        bucket_key: test.bucket_key,
        environment_id: environment.id,
        environment_name: environment.name,
        region,
        agent,
        agent_id,
        source: request.source,
        result: 'queued',
        parent_run_id: null,
        queued_at: now,
        started_at: null,
        attempts: 0,
        executions: 0,
        variables: request.variables,
        notification_url: request.notificationUrl ?? null,
        planned_at: request.plannedAt ?? null,
        schedule_id: request.scheduleId ?? null,
        round_id: roundId,
        in_maintenance: maintenance === null ? 0 : 1,
      }),
    );
    await runsRepo.insert(trx, rows);
    for (const row of rows)
      await this.deps.queue.enqueue(
        trx,
        'run-test',
        { runId: row.id },
        { region: queueRegionOf(row), retry: RUN_JOB_RETRY },
      );
    return rows.map((row) => ({ row, testName: test.name, variables: request.variables }));
  }

  /** Where the runs of a request go: one per region, and one per remote agent. */
  private async targetsOf(
    trx: Executor,
    request: RunRequest,
    environmentName: string,
    settings: EnvironmentSettings,
  ): Promise<{ region: string; agent: string | null; agent_id: string | null }[]> {
    let agents = await this.agentsOf(trx, request.test.bucket_key, environmentName, settings);
    let regions =
      settings.regions.length > 0 ? settings.regions : agents.length > 0 ? [] : [this.deps.region];
    if (request.region !== undefined && request.region !== '') {
      if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(request.region)) {
        throw invalid('vigil_region', 'must be a region code (lowercase letters, digits and dashes)');
      }
      // vigil_region picks the agents of that region label, else a server run in that region.
      const wanted = request.region;
      agents = agents.filter((agent) => agent.region === wanted);
      regions = agents.length > 0 && !settings.regions.includes(wanted) ? [] : [wanted];
    }
    if (request.agent !== undefined && request.agent !== '') {
      const wanted = request.agent;
      agents = agents.filter((agent) => agent.name === wanted || agent.id === wanted);
      if (agents.length === 0) {
        throw invalid('vigil_agent', `names no remote agent of environment "${environmentName}"`);
      }
      regions = [];
    }
    return [
      ...regions.map((region) => ({ region, agent: null, agent_id: null })),
      ...agents.map((agent) => ({ region: agent.region, agent: agent.name, agent_id: agent.id })),
    ];
  }

  /**
   * The remote agents an environment picks that can run it: agents of the bucket's team that are
   * not deleted (others are skipped). An environment left with nothing to run on is refused.
   */
  private async agentsOf(
    db: Executor,
    bucketKey: string,
    environmentName: string,
    settings: EnvironmentSettings,
  ): Promise<AgentRow[]> {
    if (settings.remote_agents.length === 0) return [];
    const bucket = await bucketsRepo.byKey(db, bucketKey);
    const ids = settings.remote_agents.map((a) => a.uuid).filter(isUuid);
    const agents = bucket ? await agentsRepo.someOfTeam(db, bucket.team_id, ids) : [];
    if (agents.length === 0 && settings.regions.length === 0) {
      throw invalid(
        'remote_agents',
        `of environment "${environmentName}" names no registered agent of this team (deleted or unknown), and the environment has no regions`,
      );
    }
    // In the order the environment lists them.
    return ids.flatMap((id) => agents.filter((agent) => agent.id === id));
  }
}
