/**
 * Check threads: the checks of a step that could take long (XPath, large bodies; see
 * check-batch.ts) run in a small pool of worker threads, so they never hold up the event loop of
 * the process that runs the test (the API's, in `vigil serve`). Each job has a time budget; a
 * thread still busy when it runs out is ended and the check is named in the failure ("xpath: took
 * longer than 1 s"). Threads start on first need, are reused, and end after a while without work.
 */
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import {
  type CheckJob,
  type CheckList,
  type CheckReply,
  type CheckRequest,
  type CheckResult,
  checkAt,
  PROGRESS_INDEX,
  PROGRESS_JOB,
  PROGRESS_SLOTS,
  PROGRESS_STAGE,
  sourceLabel,
  STAGE_TEMPLATE,
} from './check-batch.js';
import { startModuleWorker } from '../domain/module-worker.js';
import { type PoolJob, settleJob, watchAbort } from './threads.js';

export type { CheckJob } from './check-batch.js';

/**
 * How a job ended: every check answered, or the one at `index` stopped it (`error` says why);
 * `elapsedMs` is the time it spent on a thread.
 */
export type CheckOutcome = { elapsedMs: number } & (
  { complete: true } | { complete: false; index: number; error: string }
);

export interface CheckRunner {
  /**
   * Evaluates `job` within `time.leftMs` (counted from when a thread takes it), calling `report`
   * with each result as it comes; a job that runs out of time fails "took longer than
   * <time.limitMs>". Rejects with the signal's reason when it aborts.
   */
  run(
    job: CheckJob,
    time: CheckTime,
    report: (result: CheckResult) => void,
    signal?: AbortSignal,
  ): Promise<CheckOutcome>;
}

/** The step's time limit, and what is left of it for this job. */
export interface CheckTime {
  limitMs: number;
  leftMs: number;
}

export interface CheckPoolOptions {
  /** Most threads (default: 2, or 1 on a machine with at most two cores). */
  threads?: number;
  /** A thread without work for this long ends (default 30 s). */
  idleMs?: number;
  /** Heap of one thread, in MiB; a check that needs more fails (default 256). */
  heapMb?: number;
}

const DEFAULT_IDLE_MS = 30_000;
const DEFAULT_HEAP_MB = 256;

interface Pending extends PoolJob<CheckOutcome> {
  id: number;
  job: CheckJob;
  time: CheckTime;
  report: (result: CheckResult) => void;
  /** Index of the next result expected. */
  next: number;
  /** `performance.now()` when a thread took it. */
  startedAt: number;
}

interface Slot {
  worker: Worker;
  progress: Int32Array;
  ready: boolean;
  current: Pending | null;
  timer: NodeJS.Timeout | null;
  idle: NodeJS.Timeout | null;
  /** Why the thread stopped, when it did on its own. */
  crash: string | null;
}

/** "1 s", "1.5 s", "250 ms". */
export function describeBudget(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}

export class CheckPool implements CheckRunner {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private readonly maxThreads: number;
  private readonly idleMs: number;
  private readonly heapMb: number;
  private nextId = 1;
  private closed = false;

  constructor(options: CheckPoolOptions = {}) {
    const cores = os.availableParallelism();
    this.maxThreads = Math.max(1, Math.floor(options.threads ?? (cores > 2 ? 2 : 1)));
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.heapMb = options.heapMb ?? DEFAULT_HEAP_MB;
  }

  /** Threads running now (for tests and diagnostics). */
  get threads(): number {
    return this.slots.length;
  }

  run(
    job: CheckJob,
    time: CheckTime,
    report: (result: CheckResult) => void,
    signal?: AbortSignal,
  ): Promise<CheckOutcome> {
    if (this.closed) return Promise.reject(new Error('the check threads are closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<CheckOutcome>((resolve, reject) => {
      const pending: Pending = {
        id: this.nextId++,
        job,
        time,
        report,
        resolve,
        reject,
        signal,
        onAbort: null,
        next: 0,
        startedAt: 0,
      };
      watchAbort(pending, () => this.abort(pending));
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Ends every thread; jobs still queued or running are rejected. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new Error('the check threads are closed');
    for (const pending of this.queue.splice(0)) this.settle(pending, { reason: error });
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        this.clearTimers(slot);
        if (slot.current !== null) this.settle(slot.current, { reason: error });
        slot.worker.removeAllListeners();
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((candidate) => candidate.ready && candidate.current === null);
      if (slot === undefined) {
        // Start a thread when every one is busy (or starting) and there is room for another.
        const starting = this.slots.filter((candidate) => !candidate.ready).length;
        if (this.slots.length < this.maxThreads && starting < this.queue.length) this.spawn();
        return;
      }
      const pending = this.queue.shift()!;
      this.clearTimers(slot);
      slot.current = pending;
      pending.startedAt = performance.now();
      slot.worker.ref();
      slot.timer = setTimeout(() => this.expire(slot), pending.time.leftMs);
      const request: CheckRequest = { type: 'check', id: pending.id, job: pending.job };
      slot.worker.postMessage(request);
    }
  }

  private spawn(): void {
    const shared = new SharedArrayBuffer(PROGRESS_SLOTS * Int32Array.BYTES_PER_ELEMENT);
    const worker = startModuleWorker(import.meta.url, 'check-worker', {
      workerData: { progress: shared },
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    const slot: Slot = {
      worker,
      progress: new Int32Array(shared),
      ready: false,
      current: null,
      timer: null,
      idle: null,
      crash: null,
    };
    worker.unref();
    worker.on('message', (message: CheckReply) => this.onMessage(slot, message));
    worker.on('error', (error: Error & { code?: string }) => {
      slot.crash =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `used more than ${this.heapMb} MB of memory`
          : error.message;
    });
    worker.on('exit', () => this.onExit(slot));
    this.slots.push(slot);
  }

  private onMessage(slot: Slot, message: CheckReply): void {
    if (message.type === 'ready') {
      slot.ready = true;
      this.dispatch();
      this.rest(slot);
      return;
    }
    const pending = slot.current;
    if (pending === null || pending.id !== message.id) return;
    switch (message.type) {
      case 'results':
        this.take(pending, message.results);
        return;
      case 'done':
        this.take(pending, message.results);
        this.finish(slot, { outcome: { complete: true, elapsedMs: performance.now() - pending.startedAt } });
        return;
      case 'failed':
        this.finish(slot, { outcome: this.stopped(slot, pending, `failed: ${message.message}`) });
        return;
    }
  }

  private take(pending: Pending, results: readonly CheckResult[]): void {
    for (const result of results) {
      pending.next = result.index + 1;
      pending.report(result);
    }
  }

  /** The job's budget ran out: the thread is ended, and the job fails naming the check. */
  private expire(slot: Slot): void {
    const pending = slot.current;
    if (pending === null) return;
    const outcome = this.stopped(slot, pending, `took longer than ${describeBudget(pending.time.limitMs)}`);
    this.remove(slot);
    this.settle(pending, { outcome });
    this.dispatch();
  }

  /** The thread ended on its own: out of memory, or it could not start. */
  private onExit(slot: Slot): void {
    if (!this.slots.includes(slot)) return;
    const pending = slot.current;
    const outcome = pending && this.stopped(slot, pending, slot.crash ?? 'the check thread stopped');
    this.remove(slot);
    if (pending !== null && outcome !== null) this.settle(pending, { outcome });
    if (!slot.ready) {
      // A thread that never got ready would fail again at once: refuse what waits, and let a later
      // job try anew.
      const error = new Error(`the check thread could not start: ${slot.crash ?? 'it stopped'}`);
      for (const queued of this.queue.splice(0)) this.settle(queued, { reason: error });
      return;
    }
    this.dispatch();
  }

  /** The failure of a job stopped halfway, naming the check it was on. */
  private stopped(slot: Slot, pending: Pending, reason: string): CheckOutcome {
    const onJob = Atomics.load(slot.progress, PROGRESS_JOB) === pending.id;
    const index = onJob ? Atomics.load(slot.progress, PROGRESS_INDEX) : pending.next;
    const template = onJob && Atomics.load(slot.progress, PROGRESS_STAGE) === STAGE_TEMPLATE;
    const what = template ? 'template' : label(pending.job.checks, index);
    return {
      complete: false,
      index,
      error: `${what}: ${reason}`,
      elapsedMs: performance.now() - pending.startedAt,
    };
  }

  private abort(pending: Pending): void {
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = this.slots.find((candidate) => candidate.current === pending);
    if (slot !== undefined) this.remove(slot);
    this.settle(pending, { reason: pending.signal?.reason });
    this.dispatch();
  }

  private finish(slot: Slot, result: { outcome: CheckOutcome }): void {
    const pending = slot.current;
    if (pending === null) return;
    this.clearTimers(slot);
    slot.current = null;
    this.settle(pending, result);
    this.dispatch();
    this.rest(slot);
  }

  /** A thread left without work stops holding the process open and ends after `idleMs`. */
  private rest(slot: Slot): void {
    if (slot.current !== null || !this.slots.includes(slot)) return;
    slot.worker.unref();
    slot.idle = setTimeout(() => {
      if (slot.current === null) this.remove(slot);
    }, this.idleMs);
    slot.idle.unref();
  }

  /** Ends the thread of `slot` and forgets it; a later job starts a new one. */
  private remove(slot: Slot): void {
    this.clearTimers(slot);
    slot.current = null;
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => {});
    void slot.worker.terminate();
  }

  private clearTimers(slot: Slot): void {
    if (slot.timer !== null) clearTimeout(slot.timer);
    if (slot.idle !== null) clearTimeout(slot.idle);
    slot.timer = null;
    slot.idle = null;
  }

  private settle(pending: Pending, result: { outcome: CheckOutcome } | { reason: unknown }): void {
    settleJob(pending, result);
  }
}

function label(checks: CheckList, index: number): string {
  const at = checkAt(checks, index);
  return at === undefined ? 'checks' : sourceLabel(at.check.source);
}

let shared: CheckPool | null = null;

/**
 * The process's check threads, started on first need; every engine without a runner of its own uses
 * them. Idle threads do not keep the process alive.
 */
export function sharedCheckPool(): CheckPool {
  shared ??= new CheckPool();
  return shared;
}
