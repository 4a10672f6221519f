import { AppError, notFound } from '../../domain/errors.js';
import { isUuid, nowFloat } from '../../domain/ids.js';
import {
  computeMetrics,
  computeRollupMetrics,
  type Metrics,
  ROLLUP_GRAIN,
  rollupWindow,
  TIMEFRAME_SPANS,
  type Timeframe,
} from '../../domain/metrics.js';
import type { StepResult } from '../../domain/results.js';
import type { TestRunRow } from '../../store/database.js';
import { metricRollupsRepo } from '../../store/repositories/metric-rollups.js';
import { runsRepo } from '../../store/repositories/runs.js';
import type { Store } from '../../store/store.js';
import type { Principal } from '../principal.js';
import type { TestService } from '../tests.js';
import { endedRun, type RunLifecycle } from './events.js';
import type { RunExecutor } from './executor.js';
import { isSafeId } from './rows.js';

/** Metrics cover a day unless another timeframe is asked for. */
export const DEFAULT_TIMEFRAME = 'day' satisfies Timeframe;
/** See RunResults.exactPercentilesUpTo. */
export const EXACT_PERCENTILES_UP_TO = 1_000;
export const RESULTS_PAGE = { default: 10, max: 50 } as const;

export interface RunResultsOptions {
  store: Store;
  tests: TestService;
  lifecycle: RunLifecycle;
  /** Stops a canceled run at once when this process executes it. */
  executor: Pick<RunExecutor, 'abortHere'>;
}

/** Reading a test's results (list, latest, one run, one step, metrics) and canceling a run. */
export class RunResults {
  /**
   * A window of at most this many runs with a response time takes its percentiles from the stored
   * runs (exact, while retention has removed none of them); a larger one from the rollups' histogram.
   */
  exactPercentilesUpTo = EXACT_PERCENTILES_UP_TO;

  constructor(private readonly deps: RunResultsOptions) {}

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
    return (await this.find(principal, bucketKey, testId, runId)).run;
  }

  /** The test and one of its runs, or 404. */
  private async find(principal: Principal, bucketKey: string, testId: string, runId: string) {
    const { test } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const run = isUuid(runId) ? await runsRepo.ofTest(this.deps.store.db, test.id, runId) : undefined;
    if (!run) throw notFound(`Result ${runId}`);
    return { test, run };
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

  /**
   * A run with every step result kept for it (request and response included), for the report
   * download; steps past the retention limit are left out, and the report shows their summaries.
   */
  async withSteps(
    principal: Principal,
    bucketKey: string,
    testId: string,
    runId: string,
  ): Promise<{ testName: string; run: TestRunRow; steps: StepResult[] }> {
    const { test, run } = await this.find(principal, bucketKey, testId, runId);
    const details = await runsRepo.stepDetails(this.deps.store.db, run.id);
    return { testName: test.name, run, steps: details.map((d) => JSON.parse(d) as StepResult) };
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
    const timeframe = query.timeframe ?? DEFAULT_TIMEFRAME;
    const now = nowFloat();
    const filter = {
      region: query.region && query.region !== 'all' ? query.region : undefined,
      environmentId:
        query.environment_uuid && query.environment_uuid !== 'all' ? query.environment_uuid : undefined,
    };
    const grain = ROLLUP_GRAIN[timeframe];
    if (grain === null) {
      const { period } = TIMEFRAME_SPANS[timeframe];
      const runs = await runsRepo.finishedBetween(
        this.deps.store.db,
        test.id,
        now - 2 * period,
        now + 1,
        filter,
      );
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
    // Day, week and month: counts from the rollups, whatever the length of the history; exact
    // percentiles from the stored runs while a window holds few enough of them.
    const { first, previousFirst } = rollupWindow(timeframe, now);
    const read = await metricRollupsRepo.read(
      this.deps.store.db,
      test.id,
      grain,
      { from: previousFirst, split: first, to: now + 1 },
      filter,
    );
    const timed = read.slots.reduce((n, slot) => n + slot.timed, 0);
    if (timed > this.exactPercentilesUpTo) return computeRollupMetrics(timeframe, read, now);
    const runs = await runsRepo.finishedBetween(this.deps.store.db, test.id, previousFirst, now + 1, filter);
    const times = (from: number, to: number) =>
      runs
        .filter((r) => r.finished_at !== null && r.finished_at >= from && r.finished_at < to)
        .flatMap((r) => (r.response_time_ms === null ? [] : [r.response_time_ms]));
    return computeRollupMetrics(timeframe, read, now, {
      current: times(first, now + 1),
      previous: times(previousFirst, first),
    });
  }

  /** Cancels a queued or working run; a finished run answers 409. */
  async cancel(principal: Principal, bucketKey: string, testId: string, runId: string): Promise<TestRunRow> {
    const run = await this.get(principal, bucketKey, testId, runId);
    const now = nowFloat();
    const canceled = await this.deps.store.transaction(async (trx) => {
      const done = await runsRepo.cancel(trx, run.id, now, 'canceled by request');
      if (done) await this.deps.lifecycle.finished(trx, run.id);
      return done;
    });
    if (canceled) this.deps.lifecycle.ended(endedRun(run, 'canceled', now));
    if (!canceled)
      throw new AppError(
        'conflict',
        `Result ${runId} has already finished (${run.result}); only queued or working runs can be canceled`,
      );
    this.deps.executor.abortHere(run.id);
    return (await runsRepo.byId(this.deps.store.db, run.id))!;
  }
}
