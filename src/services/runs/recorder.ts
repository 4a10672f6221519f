import type { EnvironmentSettings } from '../../domain/environments.js';
import { nowFloat } from '../../domain/ids.js';
import { type RunOutcome, ZERO_COUNTERS } from '../../domain/results.js';
import type { RunDefinition } from '../../runner/engine.js';
import type { TestRunRow } from '../../store/database.js';
import { metricRollupsRepo } from '../../store/repositories/metric-rollups.js';
import { rollupsRepo } from '../../store/repositories/rollups.js';
import { runsRepo } from '../../store/repositories/runs.js';
import type { Executor, Store } from '../../store/store.js';
import { endedRun, type RunLifecycle } from './events.js';
import { finishFields, newRunRow, parseInterrupted, stepRows } from './rows.js';

/** Result retention of one test runs at most this often per process. */
const RETENTION_PAUSE_MS = 5_000;

export interface RetentionSettings {
  resultsKeepFull: number;
  resultsKeepSummary: number;
}

/**
 * Stores what runs end with: outcomes with their steps, runs that could not start, and subtest
 * runs; then applies result retention.
 */
export class RunRecorder {
  /** When result retention last ran per test in this process (ms). */
  private readonly retained = new Map<string, number>();

  constructor(
    private readonly deps: { store: Store; lifecycle: RunLifecycle; settings: RetentionSettings },
  ) {}

  /**
   * Stores the outcome, its steps in full, and applies retention; one transaction. `settings`, when
   * given, spares the `finished` event to a run that nobody may hear of.
   */
  async record(
    run: TestRunRow,
    outcome: RunOutcome,
    workerId: string,
    settings?: EnvironmentSettings,
  ): Promise<boolean> {
    const stored = await this.deps.store.transaction(async (trx) => {
      const interrupted = parseInterrupted(run.interrupted_attempts);
      const fields = finishFields(outcome, interrupted);
      const finished = await runsRepo.finish(trx, run.id, fields, workerId);
      if (!finished) return false;
      await runsRepo.insertSteps(trx, stepRows(run.id, outcome));
      await countRollups(trx, run, fields);
      if (settings === undefined || mayNotify(run, settings)) await this.deps.lifecycle.finished(trx, run.id);
      return true;
    });
    if (!stored) return false;
    this.deps.lifecycle.ended({
      result: outcome.result,
      source: run.source,
      startedAt: outcome.started_at,
      finishedAt: outcome.finished_at,
    });
    await this.applyRetention(run.test_id);
    return true;
  }

  /** Ends a run that could not start (its test or environment is gone) as failed with `error`. */
  async finishWithError(run: TestRunRow, error: string): Promise<void> {
    const now = nowFloat();
    const ended = await this.deps.store.transaction(async (trx) => {
      const fields = {
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
      };
      const finished = await runsRepo.finish(trx, run.id, fields);
      if (!finished) return false;
      await countRollups(trx, run, fields);
      await this.deps.lifecycle.finished(trx, run.id);
      return true;
    });
    if (ended) this.deps.lifecycle.ended(endedRun(run, 'fail', now));
  }

  /** Stores a finished subtest run as a run of its own test (`source: subtest`); answers its id. */
  readonly recordSubtest = async (
    child: RunDefinition,
    outcome: RunOutcome,
    parent: RunDefinition,
  ): Promise<string> => {
    const row = newRunRow({
      test_id: child.test.id,
      bucket_key: child.bucket.key,
      environment_id: child.environment.id,
      environment_name: child.environment.name,
      region: child.region,
      agent: child.agent,
      agent_id: null,
      source: 'subtest',
      result: 'working',
      parent_run_id: parent.runId ?? null,
      queued_at: outcome.started_at,
      started_at: outcome.started_at,
      attempts: 1,
      executions: 1,
      variables: child.variables,
      notification_url: null,
      planned_at: null,
      schedule_id: null,
      round_id: null,
    });
    await this.deps.store.transaction(async (trx) => {
      await runsRepo.insert(trx, [row]);
      const fields = finishFields(outcome);
      await runsRepo.finish(trx, row.id, fields);
      await countRollups(trx, row, fields);
      await runsRepo.insertSteps(trx, stepRows(row.id, outcome));
    });
    this.deps.lifecycle.ended({
      result: outcome.result,
      source: 'subtest',
      startedAt: outcome.started_at,
      finishedAt: outcome.finished_at,
    });
    return row.id;
  };

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
}

/**
 * Counts a finished pass or fail run in the metric rollups, and (subtest runs aside) in the daily
 * rollups status pages read.
 */
async function countRollups(
  trx: Executor,
  run: TestRunRow,
  fields: Pick<TestRunRow, 'result' | 'finished_at' | 'response_time_ms'>,
): Promise<void> {
  if (fields.finished_at === null) return;
  if (fields.result !== 'pass' && fields.result !== 'fail') return;
  await metricRollupsRepo.count(trx, {
    test_id: run.test_id,
    environment_id: run.environment_id,
    region: run.region,
    finished_at: fields.finished_at,
    result: fields.result,
    response_time_ms: fields.response_time_ms,
  });
  if (run.source === 'subtest') return;
  await rollupsRepo.count(trx, {
    test_id: run.test_id,
    environment_id: run.environment_id,
    finished_at: fields.finished_at,
    result: fields.result,
  });
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
