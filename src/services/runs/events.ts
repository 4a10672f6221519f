import type { Executor } from '../../store/store.js';

/**
 * Called inside the transaction that ends a run (pass, fail or canceled; not subtest runs), with
 * that transaction: what a handler writes commits or rolls back with the run's outcome.
 */
export type RunFinishedHandler = (trx: Executor, runId: string) => Promise<void>;

/** How a run ended, told after the transaction that ended it committed (metrics). */
export interface RunEnded {
  result: string;
  source: string;
  /** Null for a run that never started (canceled while queued). */
  startedAt: number | null;
  finishedAt: number;
}

export type RunEndedHandler = (run: RunEnded) => void;

/** How a stored run ended that did not run to an outcome here (canceled, or failed to start). */
export function endedRun(
  run: { source: string; started_at: number | null },
  result: 'fail' | 'canceled',
  finishedAt: number,
): RunEnded {
  return { result, source: run.source, startedAt: run.started_at, finishedAt };
}

/**
 * The run side's events. `finished` handlers are awaited one after another inside the
 * transaction that stores the outcome, before it commits: notifications queued by a handler exist
 * exactly when the outcome does, and a handler that throws rolls the outcome back with it.
 */
export class RunLifecycle {
  private readonly finishedHandlers: RunFinishedHandler[] = [];
  private readonly endedHandlers: RunEndedHandler[] = [];

  on(event: 'finished', handler: RunFinishedHandler): void;
  on(event: 'ended', handler: RunEndedHandler): void;
  on(event: 'finished' | 'ended', handler: RunFinishedHandler | RunEndedHandler): void {
    if (event === 'finished') this.finishedHandlers.push(handler as RunFinishedHandler);
    else this.endedHandlers.push(handler as RunEndedHandler);
  }

  /** Runs the `finished` handlers in `trx`, the transaction that ended the run. */
  async finished(trx: Executor, runId: string): Promise<void> {
    for (const handler of this.finishedHandlers) await handler(trx, runId);
  }

  /**
   * Every run that ended, subtest runs and runs nobody hears of included, once its outcome is
   * committed. Handlers only observe: they are called synchronously and may not throw.
   */
  ended(run: RunEnded): void {
    for (const handler of this.endedHandlers) handler(run);
  }
}
