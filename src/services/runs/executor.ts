import { nowFloat } from '../../domain/ids.js';
import type { RunOutcome } from '../../domain/results.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { RunEvents } from '../../runner/context.js';
import type { Engine, RunDefinition } from '../../runner/engine.js';
import type { TestRunRow } from '../../store/database.js';
import { runsRepo } from '../../store/repositories/runs.js';
import type { Executor, Store } from '../../store/store.js';
import type { RunDefinitions } from './definitions.js';
import { endedRun, type RunLifecycle } from './events.js';
import type { RunRecorder } from './recorder.js';
import {
  type InterruptedAttempt,
  parseInterrupted,
  queueRegionOf,
  RUN_JOB_RETRY,
  stepSummary,
} from './rows.js';

/** A run is handed to a worker at most this often: once, and once more when that worker dies. */
const MAX_EXECUTIONS = 2;
/** How often a working run's row is read to notice a cancel made by another process. */
const CANCEL_POLL_MS = 2_000;

export interface RunExecutorOptions {
  store: Store;
  queue: JobQueue;
  engine: Engine;
  definitions: RunDefinitions;
  recorder: RunRecorder;
  lifecycle: RunLifecycle;
}

/**
 * Executing runs (the `run-test` job, and remote agents through the agent protocol): claim the
 * run, build its definition, drive the engine, record the outcome; or hand the run over.
 */
export class RunExecutor {
  /** Runs executing in this process, to cancel them at once. */
  private readonly executing = new Map<string, AbortController>();

  constructor(private readonly deps: RunExecutorOptions) {}

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
    const definition = await this.deps.definitions.forRun(run);
    if ('error' in definition) {
      await this.deps.recorder.finishWithError(run, definition.error);
      return null;
    }
    return { run, definition: { ...definition, agent } };
  }

  /** Stores the outcome a worker or agent reports; false when the run is not its own any more. */
  async recordOutcome(run: TestRunRow, workerId: string, outcome: RunOutcome): Promise<boolean> {
    return this.deps.recorder.record(run, outcome, workerId);
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
      // Clean hand-overs by stopping workers do not use up the one hand-over a crash gets.
      if (run.executions - run.handovers < MAX_EXECUTIONS) {
        if (!(await runsRepo.requeue(trx, run.id, fromWorker))) return 'none' as const;
        await this.requeueJob(trx, run);
        return 'requeued' as const;
      }
      const now = nowFloat();
      if (!(await runsRepo.cancel(trx, run.id, now, `${reason}; it had been handed over once already`)))
        return 'none' as const;
      await this.deps.lifecycle.finished(trx, run.id);
      return endedRun(run, 'canceled', now);
    });
    if (outcome === 'requeued') this.deps.queue.notify();
    if (typeof outcome === 'object') {
      this.deps.lifecycle.ended(outcome);
      return 'canceled';
    }
    return outcome;
  }

  /**
   * A stopping worker (a deploy, a restart) gives a working run back: the attempt cut short is kept
   * with the run, which goes back to the queue and starts afresh on another worker, keeping its id.
   * Unlike a crash this costs the run nothing: it may be handed over this way any number of times.
   */
  async handOverOnStop(run: TestRunRow, fromWorker: string, partial: RunOutcome): Promise<boolean> {
    const requeued = await this.deps.store.transaction(async (trx) => {
      const current = await runsRepo.byId(trx, run.id);
      if (!current || current.result !== 'working' || current.worker_id !== fromWorker) return false;
      const interrupted: InterruptedAttempt[] = [
        ...parseInterrupted(current.interrupted_attempts),
        {
          result: 'interrupted',
          started_at: partial.started_at,
          finished_at: partial.finished_at,
          error: `the worker ${fromWorker} stopped (a restart or deploy); the run was handed over and started again`,
          requests: partial.requests.map(stepSummary),
        },
      ];
      if (!(await runsRepo.requeueOnStop(trx, run.id, fromWorker, JSON.stringify(interrupted)))) return false;
      await this.requeueJob(trx, current);
      return true;
    });
    if (requeued) this.deps.queue.notify();
    return requeued;
  }

  private async requeueJob(trx: Executor, run: TestRunRow): Promise<void> {
    await this.deps.queue.enqueue(
      trx,
      'run-test',
      { runId: run.id, execution: run.executions + 1 },
      { region: queueRegionOf(run), retry: RUN_JOB_RETRY },
    );
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
    // The worker may have begun stopping while the run was being claimed.
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // A cancel made through another process is seen by reading the run's row.
    const watcher = setInterval(() => {
      void runsRepo.byId(db, run.id).then(
        (current) => {
          if (current?.result === 'canceled') controller.abort();
        },
        () => undefined,
      );
    }, CANCEL_POLL_MS);
    watcher.unref();
    const progress = new RunProgress((summary) => runsRepo.recordProgress(db, run.id, workerId, summary));
    try {
      const outcome = await this.deps.engine.run(definition, {
        signal: controller.signal,
        events: progress.events,
      });
      await progress.settled();
      if (signal.aborted && outcome.result === 'canceled') {
        // The worker is stopping: another worker takes the run over and starts it afresh.
        await this.handOverOnStop(run, workerId, outcome);
        return;
      }
      await this.deps.recorder.record(run, outcome, workerId, definition.environment.settings);
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

  /** Stops a run executing in this process at once (it was canceled); others notice by polling. */
  abortHere(runId: string): void {
    this.executing.get(runId)?.abort();
  }

  /** Ends a run that is still queued as canceled with the reason; false when it had moved on. */
  async cancelQueued(runId: string, reason: string): Promise<boolean> {
    const now = nowFloat();
    const source = await this.deps.store.transaction(async (trx) => {
      const run = await runsRepo.byId(trx, runId);
      if (!run || run.result !== 'queued') return null;
      if (!(await runsRepo.cancel(trx, runId, now, reason))) return null;
      await this.deps.lifecycle.finished(trx, runId);
      return run.source;
    });
    if (source === null) return false;
    this.deps.lifecycle.ended({ result: 'canceled', source, startedAt: null, finishedAt: now });
    return true;
  }
}

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
