import { type EnvironmentSettings, resolveSettings, type StoredSettings } from '../domain/environments.js';
import { AppError, invalid, notFound, RateLimited } from '../domain/errors.js';
import { isUuid, newId, nowFloat } from '../domain/ids.js';
import { computeMetrics, type Metrics, TIMEFRAME_SPANS, type Timeframe } from '../domain/metrics.js';
import {
  countersFrom,
  type RunOutcome,
  type RunSource,
  type StepResult,
  ZERO_COUNTERS,
} from '../domain/results.js';
import type { SubtestStep } from '../domain/steps.js';
import type { JobQueue } from '../jobs/queue.js';
import type { RunEvents } from '../runner/context.js';
import type { Engine, RunDefinition, SubtestPort } from '../runner/engine.js';
import type { AgentRow, BucketRow, EnvironmentRow, TestRow, TestRunRow } from '../store/database.js';
import { agentsRepo } from '../store/repositories/agents.js';
import { bucketsRepo } from '../store/repositories/buckets.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { runsRepo } from '../store/repositories/runs.js';
import { stepsRepo } from '../store/repositories/steps.js';
import { testsRepo } from '../store/repositories/tests.js';
import type { Executor, Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import { storedSettings } from './environments.js';
import type { Principal } from './principal.js';
import { SlidingWindowLimiter } from './rate-limit.js';
import type { TestService } from './tests.js';
import { agentRegion } from './workers.js';

/** Trigger parameters that steer the run instead of becoming variables (DESIGN §4). */
export const RESERVED_PARAMETERS = ['vigil_environment', 'vigil_region', 'vigil_notification_url'] as const;

export const TRIGGER_LIMIT = { triggers: 10, windowMs: 10_000 } as const;
export const MAX_BATCH = 50;
export const RESULTS_PAGE = { default: 10, max: 50 } as const;
const MAX_ENVIRONMENT_DEPTH = 10;
/** Result retention of one test runs at most this often per process. */
const RETENTION_PAUSE_MS = 5_000;
/**
 * A run's job is delivered again when the worker that took it vanished before starting the run
 * (the job expires or its lease lapses); once the run has started, the reaper hands it over instead.
 */
const RUN_JOB_RETRY = { limit: 2, delaySeconds: 1, backoff: false } as const;
/** A run is handed to a worker at most this often: once, and once more when that worker dies. */
const MAX_EXECUTIONS = 2;

export interface RunSettings {
  region: string;
  runTimeoutSeconds: number;
  resultsKeepFull: number;
  resultsKeepSummary: number;
}

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
  variables: Record<string, string>;
  source: RunSource;
  notificationUrl?: string | undefined;
  /** The schedule that starts the run, and the start it planned. */
  scheduleId?: string | undefined;
  plannedAt?: number | undefined;
}

/**
 * Starting runs (trigger URLs, the API, schedules), executing them from the queue, and reading
 * their results. Runs are rows in `test_runs`; each queued run has one `run-test` job.
 */
export class RunService {
  private readonly limiter = new SlidingWindowLimiter(TRIGGER_LIMIT.triggers, TRIGGER_LIMIT.windowMs);
  /** When result retention last ran per test in this process (ms). */
  private readonly retained = new Map<string, number>();
  /** Runs executing in this process, to cancel them at once. */
  private readonly executing = new Map<string, AbortController>();

  constructor(
    private readonly deps: {
      store: Store;
      queue: JobQueue;
      buckets: BucketService;
      tests: TestService;
      engine: Engine;
      settings: RunSettings;
      /**
       * Called inside the transaction that ends a run (pass, fail or canceled; not subtest runs):
       * notifications are queued here, so they exist exactly when the outcome does.
       */
      onFinished?: (trx: Executor, runId: string) => Promise<void>;
    },
  ) {}

  // -------------------------------------------------------------------------------------------
  // Starting runs

  /** The trigger URL of a test: one run per region of the chosen environment. */
  async triggerTest(triggerId: string, parameters: Record<string, string>): Promise<StartedRun[]> {
    const test = await this.triggerTarget(triggerId);
    this.checkRate(`test:${triggerId}`);
    return this.startFromParameters(test, parameters);
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
    const requests = sets.map((set) => this.fromParameters(test, set));
    return this.start(requests);
  }

  /** The bucket trigger: every test of the bucket with its default environment. */
  async triggerBucket(triggerId: string, parameters: Record<string, string>): Promise<StartedRun[]> {
    const bucket = isSafeId(triggerId)
      ? await bucketsRepo.byTriggerId(this.deps.store.db, triggerId)
      : undefined;
    if (!bucket) throw notFound(`Trigger ${triggerId}`);
    this.checkRate(`bucket:${triggerId}`);
    const tests = await testsRepo.allInBucket(this.deps.store.db, bucket.key);
    const { vigil_environment: _ignored, ...rest } = parameters;
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

  private startFromParameters(test: TestRow, parameters: Record<string, string>): Promise<StartedRun[]> {
    return this.start([this.fromParameters(test, parameters)]);
  }

  private fromParameters(test: TestRow, parameters: Record<string, string>): RunRequest {
    const { vigil_environment, vigil_region, vigil_notification_url, ...variables } = parameters;
    if (vigil_notification_url !== undefined && !/^https?:\/\/\S+$/i.test(vigil_notification_url)) {
      throw invalid('vigil_notification_url', 'must be an http:// or https:// URL');
    }
    return {
      test,
      environmentId: vigil_environment,
      region: vigil_region,
      variables,
      source: 'trigger_url',
      notificationUrl: vigil_notification_url,
    };
  }

  /** Creates the runs and their jobs in one transaction, then wakes the workers. */
  private async start(requests: readonly RunRequest[]): Promise<StartedRun[]> {
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
    if (
      !environment ||
      environment.bucket_key !== test.bucket_key ||
      (environment.test_id !== null && environment.test_id !== test.id)
    ) {
      throw invalid('vigil_environment', `names no environment of test ${test.id} or of its bucket`);
    }
    const settings = await this.resolveEnvironment(trx, environment);
    let agents = await this.agentsOf(trx, test.bucket_key, environment.name, settings);
    let regions =
      settings.regions.length > 0 ? settings.regions : agents.length > 0 ? [] : [this.deps.settings.region];
    if (request.region !== undefined && request.region !== '') {
      if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(request.region)) {
        throw invalid('vigil_region', 'must be a region code (lowercase letters, digits and dashes)');
      }
      // vigil_region picks the agents of that region label, else a server run in that region.
      const wanted = request.region;
      agents = agents.filter((agent) => agent.region === wanted);
      regions = agents.length > 0 && !settings.regions.includes(wanted) ? [] : [wanted];
    }
    const now = nowFloat();
    const targets = [
      ...regions.map((region) => ({ region, agent: null, agent_id: null })),
      ...agents.map((agent) => ({ region: agent.region, agent: agent.name, agent_id: agent.id })),
    ];
    const rows: TestRunRow[] = targets.map(({ region, agent, agent_id }) => ({
      id: newId(),
      test_id: test.id,
      bucket_key: test.bucket_key,
      environment_id: environment.id,
      environment_name: environment.name,
      region,
      agent,
      source: request.source,
      result: 'queued',
      parent_run_id: null,
      queued_at: now,
      started_at: null,
      finished_at: null,
      attempts: 0,
      ...ZERO_COUNTERS,
      response_time_ms: null,
      error: null,
      trigger_variables: JSON.stringify(request.variables),
      notification_url: request.notificationUrl ?? null,
      summary: null,
      worker_id: null,
      executions: 0,
      planned_at: request.plannedAt ?? null,
      schedule_id: request.scheduleId ?? null,
      agent_id,
    }));
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

  // -------------------------------------------------------------------------------------------
  // Executing runs (the `run-test` job)

  /**
   * Hands a queued run to a worker or agent: queued → working, stamped with `workerId`. Answers
   * what to run, or null when the run is not queued any more (canceled, or taken by another).
   */
  async claimRun(
    runId: string,
    workerId: string,
    agent: string | null = null,
  ): Promise<{ run: TestRunRow; definition: RunDefinition } | null> {
    const run = await runsRepo.start(this.deps.store.db, runId, nowFloat(), agent, workerId);
    if (!run) return null;
    const definition = await this.definitionOf(run);
    if ('error' in definition) {
      await this.finishWithError(run, definition.error);
      return null;
    }
    return { run, definition: { ...definition, agent } };
  }

  /** Stores the outcome a worker or agent reports; false when the run is not its own any more. */
  async recordOutcome(run: TestRunRow, workerId: string, outcome: RunOutcome): Promise<boolean> {
    return this.record(run, outcome, workerId);
  }

  /**
   * Puts a working run back in the queue for another worker (its worker is stopping or gone), or,
   * once it was handed over before, ends it canceled with `reason`. Answers what happened.
   */
  async handOver(
    runId: string,
    fromWorker: string,
    reason: string,
  ): Promise<'requeued' | 'canceled' | 'none'> {
    const outcome = await this.deps.store.transaction(async (trx) => {
      const run = await runsRepo.byId(trx, runId);
      if (!run || run.result !== 'working' || run.worker_id !== fromWorker) return 'none' as const;
      if (run.executions < MAX_EXECUTIONS) {
        if (!(await runsRepo.requeue(trx, run.id, fromWorker))) return 'none' as const;
        await this.deps.queue.enqueue(
          trx,
          'run-test',
          { runId: run.id, execution: run.executions + 1 },
          { region: queueRegionOf(run), retry: RUN_JOB_RETRY },
        );
        return 'requeued' as const;
      }
      if (
        !(await runsRepo.cancel(trx, run.id, nowFloat(), `${reason}; it had been handed over once already`))
      )
        return 'none' as const;
      await this.deps.onFinished?.(trx, run.id);
      return 'canceled' as const;
    });
    if (outcome === 'requeued') this.deps.queue.notify();
    return outcome;
  }

  /** Executes a queued run on this process's worker; `signal` aborts it (worker shutdown). */
  async execute(runId: string, signal: AbortSignal, workerId: string): Promise<void> {
    const { db } = this.deps.store;
    const claimed = await this.claimRun(runId, workerId);
    if (!claimed) return;
    const { run, definition } = claimed;

    const controller = new AbortController();
    this.executing.set(run.id, controller);
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const watcher = setInterval(() => {
      void runsRepo.byId(db, run.id).then(
        (current) => {
          if (current?.result === 'canceled') controller.abort();
        },
        () => undefined,
      );
    }, 2_000);
    watcher.unref();
    const progress = new RunProgress((summary) => runsRepo.recordProgress(db, run.id, workerId, summary));
    try {
      const outcome = await this.deps.engine.run(definition, {
        signal: controller.signal,
        events: progress.events,
      });
      await progress.settled();
      if (signal.aborted && outcome.result === 'canceled') {
        // The worker is stopping: another worker takes the run over.
        await this.handOver(run.id, workerId, 'the worker running it stopped');
        return;
      }
      await this.record(run, outcome, workerId, definition.environment.settings);
    } catch (error) {
      // The outcome could not be stored (the store went away, say): another worker runs it again.
      const message = error instanceof Error ? error.message : String(error);
      await this.handOver(run.id, workerId, `the worker could not finish the run (${message})`).catch(
        () => undefined,
      );
    } finally {
      await progress.settled();
      clearInterval(watcher);
      signal.removeEventListener('abort', onAbort);
      this.executing.delete(run.id);
    }
  }

  /** Ends a run that is still queued as canceled with the reason; false when it had moved on. */
  async cancelQueued(runId: string, reason: string): Promise<boolean> {
    return this.deps.store.transaction(async (trx) => {
      const run = await runsRepo.byId(trx, runId);
      if (!run || run.result !== 'queued') return false;
      if (!(await runsRepo.cancel(trx, runId, nowFloat(), reason))) return false;
      await this.deps.onFinished?.(trx, runId);
      return true;
    });
  }

  /** A run whose job was given up (its workers kept dying): it ends canceled with the reason. */
  async abandon(runId: string, reason: string): Promise<void> {
    await this.deps.store.transaction(async (trx) => {
      if (await runsRepo.cancel(trx, runId, nowFloat(), reason)) await this.deps.onFinished?.(trx, runId);
    });
  }

  private async definitionOf(run: TestRunRow): Promise<RunDefinition | { error: string }> {
    const { db } = this.deps.store;
    const test = await testsRepo.byId(db, run.test_id);
    const bucket = await bucketsRepo.byKey(db, run.bucket_key);
    if (!test || !bucket) return { error: 'the test was deleted before the run started' };
    const environment = await environmentsRepo.byId(db, run.environment_id);
    if (!environment)
      return { error: `the environment ${run.environment_name} was deleted before the run started` };
    return {
      runId: run.id,
      test: { id: test.id, name: test.name, steps: await stepsRepo.forTest(db, test.id) },
      environment: {
        id: environment.id,
        name: environment.name,
        settings: await this.resolveEnvironment(db, environment),
      },
      bucket: { key: bucket.key, name: bucket.name, verify_ssl: bucket.verify_ssl === 1 },
      region: run.region,
      agent: run.agent,
      variables: JSON.parse(run.trigger_variables) as Record<string, string>,
    };
  }

  private async finishWithError(run: TestRunRow, error: string): Promise<void> {
    const now = nowFloat();
    await this.deps.store.transaction(async (trx) => {
      const finished = await runsRepo.finish(trx, run.id, {
        ...ZERO_COUNTERS,
        result: 'fail',
        started_at: run.started_at ?? now,
        finished_at: now,
        attempts: 1,
        response_time_ms: null,
        error,
        summary: JSON.stringify({
          requests: [],
          initial_variables: {},
          variables: {},
          environment_script: null,
        }),
      });
      if (finished) await this.deps.onFinished?.(trx, run.id);
    });
  }

  /** Stores the outcome, its steps in full, and applies retention; one transaction. */
  private async record(
    run: TestRunRow,
    outcome: RunOutcome,
    workerId: string,
    settings?: EnvironmentSettings,
  ): Promise<boolean> {
    const stored = await this.deps.store.transaction(async (trx) => {
      const finished = await runsRepo.finish(trx, run.id, finishFields(outcome), workerId);
      if (!finished) return false;
      await runsRepo.insertSteps(trx, stepRows(run.id, outcome));
      if (settings === undefined || mayNotify(run, settings)) await this.deps.onFinished?.(trx, run.id);
      return true;
    });
    if (!stored) return false;
    await this.applyRetention(run.test_id);
    return true;
  }

  /**
   * Result retention of a test, after its runs finish: at most once per RETENTION_PAUSE_MS per test
   * in this process, so that a busy test does not pay for it on every run.
   */
  private async applyRetention(testId: string): Promise<void> {
    const now = Date.now();
    const last = this.retained.get(testId);
    if (last !== undefined && now - last < RETENTION_PAUSE_MS) return;
    this.retained.set(testId, now);
    if (this.retained.size > 10_000) {
      for (const [id, at] of this.retained) if (now - at >= RETENTION_PAUSE_MS) this.retained.delete(id);
    }
    await runsRepo
      .applyRetention(
        this.deps.store.db,
        testId,
        this.deps.settings.resultsKeepFull,
        this.deps.settings.resultsKeepSummary,
      )
      .catch(() => undefined);
  }

  /** Subtests resolve within the parent's team and are recorded as runs of their own test. */
  subtestPort(): Pick<SubtestPort, 'resolve'> {
    const { db } = this.deps.store;
    return {
      resolve: async (step: SubtestStep, parent: RunDefinition, variables: Record<string, string>) => {
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
        if (
          !environment ||
          environment.bucket_key !== bucket.key ||
          (environment.test_id !== null && environment.test_id !== test.id)
        ) {
          return { error: `environment_uuid: no environment ${environmentId} of test ${test.name}` };
        }
        return {
          test: { id: test.id, name: test.name, steps: await stepsRepo.forTest(db, test.id) },
          environment: {
            id: environment.id,
            name: environment.name,
            settings: await this.resolveEnvironment(db, environment),
          },
          bucket: bucketOf(bucket),
          region: parent.region,
          agent: parent.agent,
          variables,
        };
      },
    };
  }

  /** Stores a finished subtest run as a run of its own test (`source: subtest`); answers its id. */
  async recordSubtest(child: RunDefinition, outcome: RunOutcome, parent: RunDefinition): Promise<string> {
    const id = newId();
    const row: TestRunRow = {
      id,
      test_id: child.test.id,
      bucket_key: child.bucket.key,
      environment_id: child.environment.id,
      environment_name: child.environment.name,
      region: child.region,
      agent: child.agent,
      source: 'subtest',
      result: 'working',
      parent_run_id: parent.runId ?? null,
      queued_at: outcome.started_at,
      started_at: outcome.started_at,
      finished_at: null,
      attempts: 1,
      ...ZERO_COUNTERS,
      response_time_ms: null,
      error: null,
      trigger_variables: JSON.stringify(child.variables),
      notification_url: null,
      summary: null,
      worker_id: null,
      executions: 1,
      planned_at: null,
      schedule_id: null,
      agent_id: null,
    };
    await this.deps.store.transaction(async (trx) => {
      await runsRepo.insert(trx, [row]);
      await runsRepo.finish(trx, id, finishFields(outcome));
      await runsRepo.insertSteps(trx, stepRows(id, outcome));
    });
    return id;
  }

  // -------------------------------------------------------------------------------------------
  // Reading and canceling

  async list(
    principal: Principal,
    bucketKey: string,
    testId: string,
    page: { count?: number | undefined; since?: number | undefined; before?: number | undefined },
  ): Promise<TestRunRow[]> {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const count = Math.min(page.count ?? RESULTS_PAGE.default, RESULTS_PAGE.max);
    return runsRepo.list(this.deps.store.db, test.id, { count, since: page.since, before: page.before });
  }

  /** The newest run, or null when the test never ran. */
  async latest(principal: Principal, bucketKey: string, testId: string): Promise<TestRunRow | null> {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const [row] = await runsRepo.list(this.deps.store.db, test.id, { count: 1 });
    return row ?? null;
  }

  async get(principal: Principal, bucketKey: string, testId: string, runId: string): Promise<TestRunRow> {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const row = isUuid(runId) ? await runsRepo.ofTest(this.deps.store.db, test.id, runId) : undefined;
    if (!row) throw notFound(`Result ${runId}`);
    return row;
  }

  async step(
    principal: Principal,
    bucketKey: string,
    testId: string,
    runId: string,
    stepId: string,
  ): Promise<StepResult> {
    const run = await this.get(principal, bucketKey, testId, runId);
    const detail = isSafeId(stepId)
      ? await runsRepo.stepDetail(this.deps.store.db, run.id, stepId)
      : undefined;
    if (!detail) {
      throw notFound(
        run.result === 'queued' || run.result === 'working'
          ? `Step ${stepId} of result ${runId} (the run has not finished)`
          : `Step ${stepId} of result ${runId} (not run, or its details are past the retention limit)`,
      );
    }
    return JSON.parse(detail) as StepResult;
  }

  /** Response times and success over a timeframe, per region and environment (or all). */
  async metrics(
    principal: Principal,
    bucketKey: string,
    testId: string,
    query: {
      timeframe?: Timeframe | undefined;
      region?: string | undefined;
      environment_uuid?: string | undefined;
    },
  ): Promise<Metrics> {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const timeframe = query.timeframe ?? 'day';
    const now = nowFloat();
    const { period } = TIMEFRAME_SPANS[timeframe];
    const runs = await runsRepo.finishedBetween(this.deps.store.db, test.id, now - 2 * period, now + 1, {
      region: query.region && query.region !== 'all' ? query.region : undefined,
      environmentId:
        query.environment_uuid && query.environment_uuid !== 'all' ? query.environment_uuid : undefined,
    });
    return computeMetrics(
      timeframe,
      runs.map((r) => ({
        finished_at: r.finished_at ?? 0,
        result: r.result,
        response_time_ms: r.response_time_ms,
      })),
      now,
    );
  }

  /** Cancels a queued or working run; a finished run answers 409. */
  async cancel(principal: Principal, bucketKey: string, testId: string, runId: string): Promise<TestRunRow> {
    const run = await this.get(principal, bucketKey, testId, runId);
    const canceled = await this.deps.store.transaction(async (trx) => {
      const done = await runsRepo.cancel(trx, run.id, nowFloat(), 'canceled by request');
      if (done) await this.deps.onFinished?.(trx, run.id);
      return done;
    });
    if (!canceled)
      throw new AppError(
        'conflict',
        `Result ${runId} has already finished (${run.result}); only queued or working runs can be canceled`,
      );
    this.executing.get(run.id)?.abort();
    return (await runsRepo.byId(this.deps.store.db, run.id))!;
  }
}

/** The queue region a run's job goes to: its agent's own, or its region. */
export function queueRegionOf(run: Pick<TestRunRow, 'region' | 'agent_id'>): string {
  return run.agent_id ? agentRegion(run.agent_id) : run.region;
}

/** Whether anyone may hear of a run's end: webhooks, a notification URL, e-mail or integrations. */
function mayNotify(run: TestRunRow, settings: EnvironmentSettings): boolean {
  return (
    run.notification_url !== null ||
    (settings.webhooks?.length ?? 0) > 0 ||
    settings.integrations.length > 0 ||
    settings.emails.notify_all ||
    settings.emails.recipients.length > 0
  );
}

function isSafeId(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,128}$/.test(value);
}

function bucketOf(bucket: BucketRow): RunDefinition['bucket'] {
  return { key: bucket.key, name: bucket.name, verify_ssl: bucket.verify_ssl === 1 };
}

/** A step as the run detail lists it: everything but the full request and response. */
/** How often a working run's finished steps are written for live progress, at most. */
const PROGRESS_INTERVAL_MS = 500;

/**
 * Live progress of a working run: the summaries of its finished steps go to `test_runs.summary`
 * (where the finished run's summary goes later), at most every PROGRESS_INTERVAL_MS and not before
 * the run is that old, so a quick run costs no extra write. Writes happen one after another and a
 * failed one is only skipped: progress is a courtesy, the outcome is what counts.
 */
class RunProgress {
  private steps: ReturnType<typeof stepSummary>[] = [];
  private lastWrite = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly write: (summary: string) => Promise<void>) {}

  readonly events: RunEvents = {
    runStarted: () => {
      this.steps = [];
    },
    stepFinished: ({ result }) => {
      this.steps.push(stepSummary(result));
      if (this.timer) return;
      const delay = Math.max(0, this.lastWrite + PROGRESS_INTERVAL_MS - Date.now());
      this.timer = setTimeout(() => this.flush(), delay);
      this.timer.unref();
    },
  };

  private flush(): void {
    this.timer = undefined;
    this.lastWrite = Date.now();
    const summary = JSON.stringify({ requests: this.steps });
    this.pending = this.pending.then(() => this.write(summary).catch(() => undefined));
  }

  /** Stops writing and waits for the writes under way, so the outcome is written after them. */
  settled(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.pending;
  }
}

export function stepSummary(step: StepResult): Omit<StepResult, 'request' | 'response'> {
  const { request: _request, response: _response, ...rest } = step;
  return rest;
}

function finishFields(outcome: RunOutcome) {
  const responseTimes = outcome.requests
    .map((r) => r.response_time_ms)
    .filter((t): t is number => t !== null);
  const previous = outcome.previous_attempt;
  return {
    result: outcome.result,
    started_at: previous?.started_at ?? outcome.started_at,
    finished_at: outcome.finished_at,
    attempts: previous ? 2 : 1,
    ...countersFrom(outcome),
    response_time_ms: responseTimes.length > 0 ? responseTimes.reduce((a, b) => a + b, 0) : null,
    error: outcome.error,
    summary: JSON.stringify({
      requests: outcome.requests.map(stepSummary),
      initial_variables: outcome.initial_variables,
      variables: outcome.variables,
      environment_script: outcome.environment_script,
      previous_attempt: previous
        ? {
            result: previous.result,
            started_at: previous.started_at,
            finished_at: previous.finished_at,
            error: previous.error,
            requests: previous.requests.map(stepSummary),
          }
        : null,
    }),
  };
}

function stepRows(runId: string, outcome: RunOutcome) {
  const steps = [...(outcome.previous_attempt?.requests ?? []), ...outcome.requests];
  return steps.map((step, position) => ({
    run_id: runId,
    position,
    step_id: step.uuid,
    detail: JSON.stringify(step),
  }));
}
