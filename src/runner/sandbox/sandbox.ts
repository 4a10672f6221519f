/**
 * The user-script sandbox: scripts run in QuickJS compiled to WebAssembly. A script first runs on
 * the calling thread under tight limits (inline.ts); one that needs more, and every script while
 * there is no warm context there, runs in a small pool of worker threads with its full limits, so a
 * runaway script never blocks the host's event loop for more than the inline limit. Each engine
 * keeps a warm, hardened context (engine.ts, prelude.ts); a thread that stops answering is replaced.
 * The threads start with the first script that needs them.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../domain/module-worker.js';
import { type PoolJob, settleJob, watchAbort } from '../threads.js';
import type { EngineJob } from './engine.js';
import { type InlineOptions, InlineScripts } from './inline.js';
import type { RunMessage, WorkerMessage } from './worker.js';

export interface ScriptRequest {
  method: string;
  url: string;
  host: string;
  path: string;
  scheme: string;
  params: Record<string, string[]>;
  headers: Record<string, string[]>;
  body: string;
  form: Record<string, string | string[]>;
}

export interface ScriptResponse {
  status: number;
  reason: string;
  headers: Record<string, string[]>;
  body: string;
  response_time_ms: number;
  size_bytes: number;
}

export interface ScriptLimits {
  /** Wall-clock time the script may run (default 1000). */
  timeMs: number;
  /** Memory the script may allocate beyond the prepared context (default 32 MiB). */
  memoryBytes: number;
  /** Interpreter stack (default and most 512 KiB). */
  stackBytes: number;
  /** `log` output kept; beyond it the output is cut with a note (default 64 KiB). */
  outputBytes: number;
}

export interface ScriptJob {
  code: string;
  variables: Record<string, string>;
  request?: ScriptRequest;
  /** Pre-request scripts: changes to `request` come back in the outcome. */
  requestWritable?: boolean;
  response?: ScriptResponse;
  limits?: Partial<ScriptLimits>;
}

export interface ScriptOutcome {
  ok: boolean;
  output: string;
  error: string | null;
  /** Every variable after the script, also when it failed. */
  variables: Record<string, string>;
  /** The possibly modified request, when the job's request was writable. */
  request?: ScriptRequest;
}

export interface SandboxOptions {
  /** Worker threads (default 2), started with the first script that needs one. */
  threads?: number;
  /** Scripts on the calling thread first (default on); false sends every script to the threads. */
  inline?: boolean | InlineOptions;
  /** Defaults for every job; a job's own limits win. */
  limits?: Partial<ScriptLimits>;
}

export const DEFAULT_SCRIPT_LIMITS: Readonly<ScriptLimits> = Object.freeze({
  timeMs: 1000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  outputBytes: 64 * 1024,
});

/** How long past its time limit a thread may stay silent before it is replaced. */
const GRACE_MS = 500;
/** Threads that die this many times in a row before ever getting ready mean a broken install. */
const MAX_FAILED_STARTS = 3;

export function timeLimitMessage(timeMs: number): string {
  return `script exceeded its ${timeMs} ms time limit`;
}

interface Pending extends PoolJob<ScriptOutcome> {
  id: number;
  job: EngineJob;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  current: Pending | null;
  timer: NodeJS.Timeout | null;
  failedStarts: number;
  everReady: boolean;
}

export class ScriptSandbox {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private broken: Error | null = null;
  private threadJobs = 0;

  private constructor(
    private readonly threads: number,
    private readonly limits: ScriptLimits,
    private readonly inline: InlineScripts | null,
  ) {}

  /** A sandbox; its engines load on first use, and jobs wait until one is ready. */
  static start(options: SandboxOptions = {}): ScriptSandbox {
    const threads = Math.max(1, Math.floor(options.threads ?? 2));
    const inline =
      options.inline === false ? null : new InlineScripts(options.inline === true ? {} : options.inline);
    return new ScriptSandbox(threads, resolveLimits(DEFAULT_SCRIPT_LIMITS, options.limits), inline);
  }

  /** Jobs run so far on the calling thread and in the threads. */
  stats(): { inline: number; threads: number } {
    return { inline: this.inline?.ran ?? 0, threads: this.threadJobs };
  }

  run(job: ScriptJob, signal?: AbortSignal): Promise<ScriptOutcome> {
    const engineJob: EngineJob = {
      code: String(job.code),
      variables: { ...job.variables },
      request: job.request ?? null,
      requestWritable: job.requestWritable === true,
      response: job.response ?? null,
      limits: resolveLimits(this.limits, job.limits),
    };
    const first = this.inline?.firstBuild() ?? null;
    if (first === null) return this.runJob(engineJob, signal);
    return first.then(() => this.runJob(engineJob, signal));
  }

  private runJob(job: EngineJob, signal: AbortSignal | undefined): Promise<ScriptOutcome> {
    if (this.closed) return Promise.reject(new Error('the script sandbox is closed'));
    if (this.broken !== null) return Promise.reject(this.broken);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const outcome = this.inline?.run(job) ?? null;
    if (outcome !== null) return Promise.resolve(outcome);
    this.startThreads();
    this.threadJobs += 1;
    return new Promise<ScriptOutcome>((resolve, reject) => {
      const pending: Pending = {
        id: this.nextId++,
        job,
        resolve,
        reject,
        signal,
        onAbort: null,
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
    this.inline?.close();
    const error = new Error('the script sandbox is closed');
    for (const pending of this.queue.splice(0)) this.settle(pending, { reason: error });
    await Promise.all(
      this.slots.map(async (slot) => {
        if (slot.timer !== null) clearTimeout(slot.timer);
        if (slot.current !== null) this.settle(slot.current, { reason: error });
        slot.current = null;
        slot.worker.removeAllListeners();
        await slot.worker.terminate();
      }),
    );
  }

  private startThreads(): void {
    while (this.slots.length < this.threads) {
      const slot: Slot = {
        worker: this.spawn(),
        ready: false,
        current: null,
        timer: null,
        failedStarts: 0,
        everReady: false,
      };
      this.slots.push(slot);
      this.listen(slot);
    }
  }

  private spawn(): Worker {
    return startModuleWorker(import.meta.url, 'worker');
  }

  private listen(slot: Slot): void {
    const worker = slot.worker;
    let crash: string | null = null;
    worker.on('message', (message: WorkerMessage) => this.onMessage(slot, message));
    worker.on('error', (error: Error) => {
      crash = error.message;
    });
    worker.on('exit', (code) => {
      if (slot.worker !== worker || this.closed) return;
      const pending = slot.current;
      this.stop(slot);
      if (pending !== null) {
        const reason = crash ?? `exit code ${code}`;
        this.settle(pending, {
          outcome: failure(pending.job, `the script sandbox thread stopped (${reason})`),
        });
      }
      if (!slot.everReady && ++slot.failedStarts >= MAX_FAILED_STARTS) {
        this.fail(new Error(`the script sandbox threads fail to start${crash === null ? '' : `: ${crash}`}`));
        return;
      }
      this.replace(slot);
    });
  }

  private onMessage(slot: Slot, message: WorkerMessage): void {
    switch (message.type) {
      case 'ready':
        slot.ready = true;
        slot.everReady = true;
        slot.failedStarts = 0;
        break;
      case 'done': {
        const pending = slot.current;
        if (pending === null || pending.id !== message.id) return;
        this.stop(slot);
        slot.ready = message.ready;
        this.settle(pending, { outcome: message.outcome });
        break;
      }
      case 'fatal':
        this.fail(new Error(message.message));
        return;
      default: {
        const unknown: never = message;
        throw new Error(`unknown sandbox message ${JSON.stringify(unknown)}`);
      }
    }
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (!slot.ready || slot.current !== null) continue;
      const pending = this.queue.shift();
      if (pending === undefined) break;
      slot.current = pending;
      slot.ready = false;
      slot.timer = setTimeout(() => this.expire(slot), pending.job.limits.timeMs + GRACE_MS);
      const message: RunMessage = { type: 'run', id: pending.id, job: pending.job };
      slot.worker.postMessage(message);
    }
    this.updateRefs();
  }

  /** The thread did not answer in time: the job fails with the time limit, the thread is replaced. */
  private expire(slot: Slot): void {
    const pending = slot.current;
    this.stop(slot);
    this.replace(slot);
    if (pending !== null) {
      this.settle(pending, { outcome: failure(pending.job, timeLimitMessage(pending.job.limits.timeMs)) });
    }
    this.dispatch();
  }

  private abort(pending: Pending): void {
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = this.slots.find((candidate) => candidate.current === pending);
    if (slot !== undefined) {
      this.stop(slot);
      this.replace(slot);
    }
    this.settle(pending, { reason: abortReason(pending.signal) });
    this.dispatch();
  }

  private stop(slot: Slot): void {
    if (slot.timer !== null) clearTimeout(slot.timer);
    slot.timer = null;
    slot.current = null;
  }

  private replace(slot: Slot): void {
    const old = slot.worker;
    old.removeAllListeners();
    old.on('error', () => {});
    void old.terminate();
    slot.worker = this.spawn();
    slot.ready = false;
    slot.everReady = false;
    this.listen(slot);
    this.updateRefs();
  }

  /** The install is broken (no prelude bundle, threads that cannot start): every job is refused. */
  private fail(error: Error): void {
    this.broken = error;
    for (const pending of this.queue.splice(0)) this.settle(pending, { reason: error });
    for (const slot of this.slots) {
      const pending = slot.current;
      this.stop(slot);
      if (pending !== null) this.settle(pending, { reason: error });
      slot.ready = false;
      slot.worker.removeAllListeners();
      slot.worker.on('error', () => {});
      void slot.worker.terminate();
    }
  }

  private settle(pending: Pending, result: { outcome: ScriptOutcome } | { reason: unknown }): void {
    settleJob(pending, result);
    this.updateRefs();
  }

  /** Idle threads do not keep the process alive; threads with work do. */
  private updateRefs(): void {
    const busy = this.queue.length > 0 || this.slots.some((slot) => slot.current !== null);
    for (const slot of this.slots) {
      if (busy) slot.worker.ref();
      else slot.worker.unref();
    }
  }
}

function resolveLimits(base: ScriptLimits, overrides: Partial<ScriptLimits> | undefined): ScriptLimits {
  const pick = (key: keyof ScriptLimits): number => {
    const value = overrides?.[key];
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : base[key];
  };
  return {
    timeMs: pick('timeMs'),
    memoryBytes: pick('memoryBytes'),
    stackBytes: pick('stackBytes'),
    outputBytes: pick('outputBytes'),
  };
}

function failure(job: EngineJob, message: string): ScriptOutcome {
  return { ok: false, output: '', error: message, variables: { ...job.variables } };
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new Error('the script was aborted');
}
