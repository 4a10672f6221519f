import { createHash } from 'node:crypto';
import { nowFloat } from '../domain/ids.js';
import { SCHEDULE_INTERVALS, type ScheduleInterval } from '../domain/schedules.js';
import { schedulesRepo } from '../store/repositories/schedules.js';
import type { Metrics } from '../observability/metrics.js';
import type { Store } from '../store/store.js';
import type { RunLauncher } from './runs/launcher.js';

/** Schedules fired in one transaction. */
const BATCH = 25;

export interface SchedulerOptions {
  store: Store;
  launcher: RunLauncher;
  /** Divides every interval (tests only: 60 turns a minute into a second). */
  timeScale?: number;
  /** How often due schedules are looked for, in ms. */
  tickMs?: number;
  log?: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Observes how late each schedule's run was queued. */
  metrics?: Metrics;
}

/** Length of a schedule's interval in seconds, under the time scale. */
export function intervalSeconds(interval: string, timeScale = 1): number {
  const seconds = SCHEDULE_INTERVALS[interval as ScheduleInterval] ?? SCHEDULE_INTERVALS['1h'];
  return seconds / timeScale;
}

/**
 * A schedule's stable phase within its interval, in seconds: derived from its id, so that many
 * schedules of one interval spread over it instead of firing in the same second, and so that a
 * schedule keeps its slot across restarts and processes.
 */
export function phaseSeconds(scheduleId: string, interval: number): number {
  const hash = createHash('sha256').update(scheduleId).digest();
  const fraction = hash.readUInt32BE(0) / 0x1_0000_0000;
  return Math.floor(fraction * interval * 1000) / 1000;
}

/** The first planned start strictly after `now`. */
export function nextSlot(scheduleId: string, interval: number, now: number): number {
  const phase = phaseSeconds(scheduleId, interval);
  const k = Math.floor((now - phase) / interval) + 1;
  return phase + k * interval;
}

/**
 * Fires schedules. Each schedule row holds its next planned start; a tick takes every due row,
 * starts its run with the planned time, and moves the row to its next slot after now, all in one
 * transaction per schedule. On PostgreSQL the row is taken `FOR UPDATE SKIP LOCKED` and re-checked,
 * so with any number of serve processes each planned start fires exactly once. A schedule late by
 * less than one interval keeps its cadence (the next start follows at once); after longer downtime
 * it fires once and resumes on its slots: missed starts are not replayed.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private readonly timeScale: number;
  private readonly tickMs: number;

  constructor(private readonly options: SchedulerOptions) {
    this.timeScale = options.timeScale ?? 1;
    this.tickMs = options.tickMs ?? 250;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .then(
          () => undefined,
          (err: unknown) => this.options.log?.error({ err }, 'the scheduler could not read the schedules'),
        )
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(loop, this.tickMs);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Plans new schedules and fires due ones; answers how many runs were started. */
  async tick(now = nowFloat()): Promise<number> {
    const { db } = this.options.store;
    for (const row of await schedulesRepo.unplanned(db, 1000)) {
      await schedulesRepo.plan(
        db,
        row.id,
        nextSlot(row.id, intervalSeconds(row.interval, this.timeScale), now),
      );
    }

    const due = await schedulesRepo.dueIds(db, now, 1000);
    let fired = 0;
    for (let i = 0; i < due.length; i += BATCH) {
      const batch = due.slice(i, i + BATCH);
      try {
        fired += await this.fire(batch, now);
      } catch {
        // One schedule of the batch could not start its run: go through them one by one.
        for (const id of batch) {
          try {
            fired += await this.fire([id], now);
          } catch (err) {
            this.options.log?.warn({ err, schedule: id }, 'a schedule could not start its run');
            await this.skip(id, now).catch(() => undefined);
          }
        }
      }
      if (fired > 0) this.options.launcher.wakeWorkers();
    }
    return fired;
  }

  /**
   * Starts the due runs of these schedules in one transaction; answers how many fired (a schedule
   * another process fired first, or holds right now, is left out).
   */
  private async fire(ids: string[], now: number): Promise<number> {
    const { store } = this.options;
    const lags: number[] = [];
    const fired = await store.transaction(async (trx) => {
      lags.length = 0;
      const schedules = await schedulesRepo.takeDue(trx, ids, now, {
        skipLocked: store.dialect === 'postgres',
      });
      for (const schedule of schedules) {
        const planned = schedule.next_run_at!;
        const interval = intervalSeconds(schedule.interval, this.timeScale);
        // Keep the cadence when a little late; after downtime, fire once and resume on the slots.
        let next = planned + interval;
        if (next <= now - interval) next = nextSlot(schedule.id, interval, now);
        await schedulesRepo.setNextRun(trx, schedule.id, next);
        await this.options.launcher.queueScheduled(trx, schedule, planned);
        lags.push(nowFloat() - planned);
      }
      return schedules.length;
    });
    // Observed once the runs are committed: a rolled-back batch is fired again one by one.
    for (const lag of lags) this.options.metrics?.scheduleFired(lag);
    return fired;
  }

  /** A schedule whose run cannot start (its test or environment is gone) moves on to its next slot. */
  private async skip(id: string, now: number): Promise<void> {
    const { db } = this.options.store;
    const interval = await schedulesRepo.intervalOf(db, id);
    if (interval === undefined) return;
    await schedulesRepo.setNextRun(db, id, nextSlot(id, intervalSeconds(interval, this.timeScale), now));
  }
}
