/**
 * Short scripts on the calling thread. The hop to a sandbox thread and back costs more than most
 * scripts themselves (a post-response check runs in about 0.1 ms on a warm context), so a script
 * first runs here, in a QuickJS engine of the calling thread, under limits much tighter than its
 * own: 20 ms, 8 MiB, a 128 KiB interpreter stack. A script that hits one of them is run again from
 * the start in the sandbox threads with its full limits, and its code is remembered so that it goes
 * straight there next time. Nothing of the first attempt is kept: scripts reach nothing outside the
 * sandbox, so running one again has no effect but its outcome.
 *
 * What stays bounded for the calling thread's event loop:
 * - one job: the inline time limit (plus as much again to collect its outcome);
 * - building a context (the prelude with Chai, tens of milliseconds): after `maxUses` jobs, and
 *   after a job that hit a limit (or ended its context otherwise) once `rebuildIntervalMs` has
 *   passed; until then scripts go to the
 *   threads, so hostile scripts cannot make the calling thread build contexts back to back;
 * - memory: the engine's WebAssembly memory grows by at most the inline memory limit; an engine
 *   that grew past {@link RETIRE_GROWN_BYTES} is dropped whole and its pages go back to the system.
 */
import { createHash } from 'node:crypto';
import { type EngineJob, RETIRE_GROWN_BYTES, ScriptEngine } from './engine.js';
import type { ScriptOutcome } from './sandbox.js';

export interface InlineOptions {
  /** Time a script may run on the calling thread (default 20 ms). */
  timeMs?: number;
  /** Memory it may allocate there (default 8 MiB). */
  memoryBytes?: number;
  /** Interpreter stack there (default 128 KiB). */
  stackBytes?: number;
  /** Request and response bodies larger than this together go to the threads (default 256 KiB). */
  inputBytes?: number;
  /** After a job hit a limit, time before a context is built again on the calling thread (default 10 s). */
  rebuildIntervalMs?: number;
  /** Jobs one context serves before it is rebuilt (default 10,000). */
  maxUses?: number;
}

const DEFAULTS: Required<InlineOptions> = {
  timeMs: 20,
  memoryBytes: 8 * 1024 * 1024,
  stackBytes: 128 * 1024,
  inputBytes: 256 * 1024,
  rebuildIntervalMs: 10_000,
  maxUses: 10_000,
};

/** Scripts remembered as needing the threads; the oldest is forgotten first. */
const MAX_REFUSED = 1_000;

export class InlineScripts {
  private readonly options: Required<InlineOptions>;
  private engine: ScriptEngine | null = null;
  private first: Promise<void> | null = null;
  private started = false;
  private loading = false;
  private timer: NodeJS.Timeout | null = null;
  /** No context is built on the calling thread before this time (after a job ended one). */
  private cooldownUntil = 0;
  private disabled = false;
  private closed = false;
  private readonly refused = new Map<string, true>();
  /** Jobs whose outcome came from the calling thread. */
  ran = 0;

  constructor(options: InlineOptions = {}) {
    const pick = (key: keyof InlineOptions): number => {
      const value = options[key];
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : DEFAULTS[key];
    };
    this.options = {
      timeMs: pick('timeMs'),
      memoryBytes: pick('memoryBytes'),
      stackBytes: pick('stackBytes'),
      inputBytes: pick('inputBytes'),
      rebuildIntervalMs: pick('rebuildIntervalMs'),
      maxUses: pick('maxUses'),
    };
  }

  /**
   * While the first context is being built, a promise that settles when it is ready (or could not
   * be built); null once it was. The first call starts the build.
   */
  firstBuild(): Promise<void> | null {
    if (this.started || this.disabled || this.closed) return this.first;
    this.started = true;
    this.first = this.build().finally(() => {
      this.first = null;
    });
    return this.first;
  }

  /** The job's outcome, run here; null when the job is to run in the threads instead. */
  run(job: EngineJob): ScriptOutcome | null {
    if (this.disabled || this.closed) return null;
    if (inputLength(job) > this.options.inputBytes) return null;
    const key = this.refused.size > 0 ? codeKey(job.code) : null;
    if (key !== null && this.refused.has(key)) return null;
    const engine = this.engine;
    if (engine === null) {
      this.schedule();
      return null;
    }
    // A context ends after `maxUses` jobs, or after a job that hit a limit or failed in a way that
    // got out of the script's session. The first kind is
    // rebuilt at once; after the second the calling thread waits out the interval.
    if (!engine.isWarm() && (Date.now() < this.cooldownUntil || !this.warmUp(engine))) return null;

    const own = job.limits;
    const limits = {
      timeMs: Math.min(own.timeMs, this.options.timeMs),
      memoryBytes: Math.min(own.memoryBytes, this.options.memoryBytes),
      stackBytes: Math.min(own.stackBytes, this.options.stackBytes),
      outputBytes: own.outputBytes,
    };
    const result = engine.run({ ...job, limits });
    // A context that ended for any reason but having served its jobs (a limit, an error that got
    // out of the script's session, a failure of the engine) is not rebuilt here before the
    // interval has passed, and the script that ended it runs in the threads from now on.
    const troubled = result.recycled && !result.exhausted;
    if (troubled) {
      this.cooldownUntil = Date.now() + this.options.rebuildIntervalMs;
      this.remember(key ?? codeKey(job.code));
    }
    if (result.fatal || engine.grownBytes() > RETIRE_GROWN_BYTES) {
      engine.dispose();
      this.engine = null;
      this.schedule();
    }
    const tighter =
      limits.timeMs < own.timeMs ||
      limits.memoryBytes < own.memoryBytes ||
      limits.stackBytes < own.stackBytes;
    if (result.fatal || (result.limited && tighter)) return null;
    this.ran += 1;
    return result.outcome;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.engine?.dispose();
    this.engine = null;
  }

  private remember(key: string): void {
    if (this.refused.size >= MAX_REFUSED) {
      const oldest = this.refused.keys().next();
      if (oldest.done !== true) this.refused.delete(oldest.value);
    }
    this.refused.set(key, true);
  }

  /** Loads a new engine once the interval after the last limit hit has passed, outside of any job. */
  private schedule(): void {
    if (this.timer !== null || this.loading || this.disabled || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.build();
      },
      Math.max(0, this.cooldownUntil - Date.now()),
    );
    this.timer.unref();
  }

  private warmUp(engine: ScriptEngine): boolean {
    try {
      engine.warmUp();
      return true;
    } catch {
      this.disable(engine);
      return false;
    }
  }

  /** No engine here (the prelude bundle is missing, say): every script goes to the threads, which report what is wrong. */
  private disable(engine: ScriptEngine | null): void {
    engine?.dispose();
    this.engine = null;
    this.disabled = true;
  }

  private async build(): Promise<void> {
    if (this.closed) return;
    this.loading = true;
    let engine: ScriptEngine | null = null;
    try {
      engine = await ScriptEngine.load({ maxUses: this.options.maxUses, collectMs: this.options.timeMs });
      if (this.closed) engine.dispose();
      else if (this.warmUp(engine)) this.engine = engine;
    } catch {
      this.disable(engine);
    } finally {
      this.loading = false;
    }
  }
}

function inputLength(job: EngineJob): number {
  return (job.request?.body.length ?? 0) + (job.response?.body.length ?? 0) + job.code.length;
}

function codeKey(code: string): string {
  return createHash('sha256').update(code).digest('base64');
}
