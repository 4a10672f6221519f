import type { Executor } from '../../store/store.js';

/**
 * Called inside the transaction that ends a run (pass, fail or canceled; not subtest runs), with
 * that transaction: what a handler writes commits or rolls back with the run's outcome.
 */
export type RunFinishedHandler = (trx: Executor, runId: string) => Promise<void>;

/**
 * The run side's events. `finished` handlers are awaited one after another inside the
 * transaction that stores the outcome, before it commits: notifications queued by a handler exist
 * exactly when the outcome does, and a handler that throws rolls the outcome back with it.
 */
export class RunLifecycle {
  private readonly finishedHandlers: RunFinishedHandler[] = [];

  on(event: 'finished', handler: RunFinishedHandler): void {
    if (event === 'finished') this.finishedHandlers.push(handler);
  }

  /** Runs the `finished` handlers in `trx`, the transaction that ended the run. */
  async finished(trx: Executor, runId: string): Promise<void> {
    for (const handler of this.finishedHandlers) await handler(trx, runId);
  }
}
