import { nowFloat } from '../domain/ids.js';
import { runsRepo } from '../store/repositories/runs.js';
import type { Store } from '../store/store.js';
import type { RunExecutor } from './runs/executor.js';
import { queueRegionOf } from './runs/rows.js';
import { EVERY_REGION, regionsOf, type WorkerRegistry } from './workers.js';

export interface RunReaperOptions {
  store: Store;
  executor: RunExecutor;
  registry: WorkerRegistry;
  /** A queued run that no live process could take for this long ends canceled. */
  queueTimeoutSeconds: number;
  intervalMs?: number;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Makes sure every run ends. A working run whose worker (or agent) fell silent is handed over to
 * another worker once, or ends canceled; a queued run for a region that no live worker or agent
 * serves ends canceled after `queueTimeoutSeconds`. Every step is a conditional update, so any
 * number of processes may reap at once.
 */
export class RunReaper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly options: RunReaperOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.reap()
        .catch((err: unknown) => this.options.log?.error({ err }, 'the run reaper could not read the runs'))
        .finally(() => {
          this.running = null;
        });
    }, this.options.intervalMs ?? 5_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass; answers what it did, for tests and logs. */
  async reap(now = nowFloat()): Promise<{ handedOver: number; canceled: number }> {
    const { store, executor, registry } = this.options;
    const live = await registry.live();
    const liveIds = new Set(live.map((w) => w.id));
    const served = new Set(live.flatMap((w) => regionsOf(w)));
    const unfinished = await runsRepo.unfinished(store.db, now - this.options.queueTimeoutSeconds);
    let handedOver = 0;
    let canceled = 0;
    for (const run of unfinished) {
      if (run.result === 'working') {
        if (run.worker_id === null || liveIds.has(run.worker_id)) continue;
        const who = run.worker_id.startsWith('agent:')
          ? `the remote agent ${run.agent ?? ''}`.trim()
          : `the worker ${run.worker_id}`;
        const outcome = await executor.handOver(
          run.id,
          run.worker_id,
          `${who} stopped responding during the run`,
        );
        if (outcome === 'requeued') handedOver += 1;
        if (outcome === 'canceled') canceled += 1;
        if (outcome !== 'none')
          this.options.log?.warn({ run: run.id, worker: run.worker_id, outcome }, 'a run lost its worker');
        continue;
      }
      const region = queueRegionOf(run);

      const everyRegion = served.has(EVERY_REGION) && run.agent_id === null;
      if (served.has(region) || everyRegion) continue;
      const reason = run.agent_id
        ? `the remote agent ${run.agent ?? run.agent_id} did not connect within ${this.options.queueTimeoutSeconds} s`
        : `no worker serves region ${run.region} (none was seen within ${this.options.queueTimeoutSeconds} s; start one with \`vigil worker --region ${run.region}\`)`;
      const c = await executor.cancelQueued(run.id, reason);

      if (c) canceled += 1;
    }
    return { handedOver, canceled };
  }
}
