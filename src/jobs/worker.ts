import { hostname } from 'node:os';
import { newRandomId } from '../domain/ids.js';
import type { ClaimedJob, JobName, JobPayloads } from './jobs.js';
import type { JobQueue } from './queue.js';

/** What a handler gets besides its payload. */
export interface JobContext {
  /** Aborted when the worker stops; the handler should end quickly (its job is retried). */
  signal: AbortSignal;
  job: ClaimedJob;
  /** The worker running the job (recorded on the runs it executes). */
  workerId: string;
}

/** One handler per job name; a name without a handler fails the build. */
export type JobHandlers = { [N in JobName]: (payload: JobPayloads[N], ctx: JobContext) => Promise<void> };

export interface WorkerOptions {
  queue: JobQueue;
  handlers: JobHandlers;
  /** A job given up after its last attempt (its workers kept dying); the owner records why. */
  onGiveUp?: (job: ClaimedJob, reason: string, workerId: string) => Promise<void>;
  concurrency: number;
  /** Regions served; null serves every region. */
  regions: readonly string[] | null;
  pollMs?: number;
  leaseMs?: number;
  /** How long `stop()` lets running jobs finish before aborting them (they are handed over); default 30 s. */
  graceMs?: number;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Takes jobs from the queue and runs them, up to `concurrency` at once. Leases are renewed while a
 * job runs; expired leases of dead workers are reclaimed here too, so every job ends somewhere.
 */
export class Worker {
  readonly id = `${hostname()}:${process.pid}:${newRandomId().slice(0, 8)}`;
  private readonly active = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();
  private stopped = true;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly pollMs: number;
  private readonly leaseMs: number;

  constructor(private readonly options: WorkerOptions) {
    this.pollMs = options.pollMs ?? 1_000;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.options.queue.onNotify(() => this.wake?.());
    this.loop = this.run();
  }

  /**
   * Stops taking jobs; running ones get `graceMs` (the `graceMs` option by default) to finish, then
   * are aborted: their handlers hand them over to other workers.
   */
  async stop(graceMs = this.options.graceMs ?? 30_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.wake?.();
    await this.loop;
    const all = Promise.allSettled([...this.active.values()]);
    const timer = setTimeout(() => this.controller.abort(), graceMs);
    await all;
    clearTimeout(timer);
  }

  /** Ends the grace period of a stop now: running jobs are aborted (and handed over) at once. */
  abortRunning(): void {
    this.controller.abort();
  }

  /** Jobs running now. */
  get running(): number {
    return this.active.size;
  }

  private async run(): Promise<void> {
    let lastReclaim = 0;
    const names = Object.keys(this.options.handlers) as JobName[];
    while (!this.stopped) {
      try {
        if (Date.now() - lastReclaim > this.pollMs * 5) {
          lastReclaim = Date.now();
          for (const job of await this.options.queue.reclaimExpired()) {
            await this.options.onGiveUp?.(job, 'the worker running it stopped before finishing', this.id);
          }
        }
        // A busy worker refills in batches: with a backlog, each claim costs the queue a scan.
        const refill = Math.max(1, Math.floor(this.options.concurrency / 4));
        while (
          !this.stopped &&
          this.active.size < this.options.concurrency &&
          (this.active.size === 0 || this.options.concurrency - this.active.size >= refill)
        ) {
          const jobs = await this.options.queue.claimMany(
            this.id,
            names,
            this.options.regions,
            this.leaseMs,
            this.options.concurrency - this.active.size,
          );
          if (jobs.length === 0) break;
          for (const job of jobs) {
            const running = this.execute(job).finally(() => {
              this.active.delete(job.id);
              this.wake?.();
            });
            this.active.set(job.id, running);
          }
        }
      } catch (err) {
        this.options.log?.error({ err }, 'the worker could not read the job queue');
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const { queue } = this.options;
    const renew = setInterval(() => {
      void queue.renew(job.id, this.id, this.leaseMs).catch(() => undefined);
    }, this.leaseMs / 3);
    renew.unref();
    try {
      const handler = this.options.handlers[job.name] as (payload: unknown, ctx: JobContext) => Promise<void>;
      await handler(job.payload, { signal: this.controller.signal, job, workerId: this.id });
      await queue.complete(job.id, this.id);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const outcome = await queue.fail(job.id, this.id, message).catch(() => 'dropped' as const);
      if (outcome === 'dropped') await this.options.onGiveUp?.(job, message, this.id).catch(() => undefined);
      else
        this.options.log?.warn(
          { job: job.id, name: job.name, err: message },
          'job failed; it will be retried',
        );
    } finally {
      clearInterval(renew);
    }
  }
}
