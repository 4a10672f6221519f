/**
 * QuickJS side of the sandbox, used inside each sandbox thread (worker.ts) and on the calling thread
 * (inline.ts). One WebAssembly module per engine; one warm context at a time, with the prelude (Chai
 * and the script globals) loaded and the realm hardened, reused for many jobs. A context is replaced
 * after a job that hit a limit or whose error got out of its session, and after `maxUses` jobs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { coerceRequest } from './request.js';
import {
  type ScriptLimits,
  type ScriptOutcome,
  type ScriptRequest,
  type ScriptResponse,
  timeLimitMessage,
} from './sandbox.js';

/** A job as the worker receives it: limits resolved, optional parts explicit. */
export interface EngineJob {
  code: string;
  variables: Record<string, string>;
  request: ScriptRequest | null;
  requestWritable: boolean;
  response: ScriptResponse | null;
  limits: ScriptLimits;
}

export interface EngineResult {
  outcome: ScriptOutcome;
  /** The job hit its time, memory or stack limit. */
  limited: boolean;
  /** The context was dropped; a new one should be built before the next job. */
  recycled: boolean;
  /** It was dropped only because it had served its number of jobs (nothing went wrong). */
  exhausted: boolean;
  /** The WebAssembly module itself may be damaged; the thread should be replaced. */
  fatal: boolean;
}

/** Jobs one context serves before it is rebuilt, so nothing can build up in it indefinitely. */
export const MAX_USES = 500;

/**
 * Growth of the WebAssembly memory past its size after the first context after which the thread
 * ends (worker.ts): the memory never shrinks, so only a new thread gives the pages back.
 */
export const RETIRE_GROWN_BYTES = 8 * 1024 * 1024;

/**
 * QuickJS counts only its own stack; the WebAssembly frames under it use the thread's native stack
 * (4 MiB). At 768 KiB deeply nested JSON.parse already overflows the native stack first; at 512 KiB
 * only Proxy-trap recursion does, which `run` reports as a stack error and the thread is replaced.
 */
export const MAX_STACK_BYTES = 512 * 1024;

/** Phases of a prelude session (prelude.ts). */
const RUN = 1;
const FINISH = 2;
const FINISH_WITHOUT_REQUEST = 3;

const MEMORY_MESSAGE = 'script exceeded its memory limit';
const STACK_MESSAGE = 'script exceeded its stack limit (too much recursion)';

const PRELUDE_PATH = ['dist', 'sandbox', 'prelude.js'];

interface WarmContext {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  prepare: QuickJSHandle;
  baselineBytes: number;
  uses: number;
}

/**
 * QuickJS's own memory limit refuses one allocation over the limit but does not add up large
 * strings and buffers (quickjs-emscripten issue #271). The engine's WebAssembly memory is ours
 * instead: while a job runs, growing it past `capBytes` fails, malloc returns NULL and QuickJS
 * throws its "out of memory". `baseBytes` is the size of the memory once the first context was
 * built, fixed for the life of the module: WebAssembly memory never shrinks, so measuring it again
 * after a job that filled it would raise every later cap by that job's allocation.
 */
interface HeapGuard {
  memory: WebAssembly.Memory;
  baseBytes: number;
  capBytes: number;
}

const WASM_PAGE = 64 * 1024;

function guardedHeap(): HeapGuard {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 32768 });
  const guard: HeapGuard = { memory, baseBytes: 0, capBytes: Number.POSITIVE_INFINITY };
  const grow = WebAssembly.Memory.prototype.grow;
  Object.defineProperty(memory, 'grow', {
    value: (pages: number): number => {
      if (memory.buffer.byteLength + pages * WASM_PAGE > guard.capBytes) {
        throw new RangeError('the script heap is at its limit');
      }
      return grow.call(memory, pages);
    },
  });
  return guard;
}

interface SessionParts {
  error: string | null;
  limit: 'memory' | 'stack' | null;
  output: string;
  /** The variables the script set. */
  variables: Record<string, string>;
  request?: unknown;
}

export class ScriptEngine {
  private warm: WarmContext | null = null;
  private deadline = Number.POSITIVE_INFINITY;
  private interrupted = false;

  private constructor(
    private readonly module: QuickJSWASMModule,
    private readonly heap: HeapGuard,
    private readonly prelude: string,
    private readonly maxUses: number,
    private readonly collectMs: number,
  ) {}

  /**
   * `maxUses`: jobs one context serves before it is rebuilt (default {@link MAX_USES});
   * `collectMs`: the least time given to collecting a job's outcome after it ran (default 100).
   */
  static async load(options: { maxUses?: number; collectMs?: number } = {}): Promise<ScriptEngine> {
    const prelude = readPrelude();
    const base = syncVariant(await import('@jitl/quickjs-wasmfile-release-sync'));
    const heap = guardedHeap();
    const module = await newQuickJSWASMModuleFromVariant(newVariant(base, { wasmMemory: heap.memory }));
    return new ScriptEngine(module, heap, prelude, options.maxUses ?? MAX_USES, options.collectMs ?? 100);
  }

  /** Builds the warm context now if there is none, so the next job does not wait for it. */
  warmUp(): void {
    this.warm ??= this.build();
  }

  /** A context is built and the next job runs without building one first. */
  isWarm(): boolean {
    return this.warm !== null;
  }

  run(job: EngineJob): EngineResult {
    const warm = this.warm ?? this.build();
    this.warm = warm;
    warm.uses += 1;
    const handles: QuickJSHandle[] = [];
    let recycle = true;
    try {
      const result = this.runIn(warm, job, handles);
      recycle = result.recycled;
      return result;
    } catch (error) {
      // An exception out of the engine itself (the host stack overflowing inside WebAssembly, an
      // abort): nothing in this module can be trusted any more.
      this.warm = null;
      const message =
        error instanceof RangeError
          ? STACK_MESSAGE
          : `script sandbox failed: ${error instanceof Error ? error.message : String(error)}`;
      return {
        outcome: failureOutcome(job, message),
        limited: true,
        recycled: true,
        exhausted: false,
        fatal: true,
      };
    } finally {
      this.deadline = Number.POSITIVE_INFINITY;
      this.heap.capBytes = Number.POSITIVE_INFINITY;
      if (this.warm === warm) {
        for (const handle of handles) if (handle.alive) handle.dispose();
        warm.runtime.setMemoryLimit(-1);
        if (recycle) this.discard();
      }
    }
  }

  private runIn(warm: WarmContext, job: EngineJob, handles: QuickJSHandle[]): EngineResult {
    const { context, runtime } = warm;
    const limits = job.limits;
    this.heap.capBytes = this.heap.baseBytes + limits.memoryBytes;
    runtime.setMemoryLimit(warm.baselineBytes + limits.memoryBytes);
    runtime.setMaxStackSize(Math.min(limits.stackBytes, MAX_STACK_BYTES));
    this.interrupted = false;
    this.deadline = Date.now() + limits.timeMs;

    const input = JSON.stringify({
      variables: job.variables,
      request: job.request,
      requestWritable: job.requestWritable,
      response: job.response,
      outputBytes: limits.outputBytes,
    });
    const code = track(handles, context.newString(job.code));
    const data = track(handles, context.newString(input));
    const prepared = context.callFunction(warm.prepare, context.undefined, code, data);
    if (prepared.error) {
      track(handles, prepared.error);
      return failure(job, MEMORY_MESSAGE, true);
    }
    const session = track(handles, prepared.value);

    const ran = context.callFunction(session, context.undefined, track(handles, context.newNumber(RUN)));
    track(handles, ran.error ?? ran.value);
    if (!this.interrupted) this.drainPendingJobs(runtime);
    const timedOut = this.interrupted;
    // Only an uncatchable error or one thrown while handling another gets out of the session.
    const escaped = ran.error === undefined || timedOut ? null : errorText(context, ran.error);

    // Collecting runs no user code when the script timed out; give it its own short deadline.
    this.deadline = Date.now() + Math.max(limits.timeMs, this.collectMs);
    this.interrupted = false;
    let parts = this.finish(context, session, timedOut ? FINISH_WITHOUT_REQUEST : FINISH, handles);
    if (parts === null) {
      runtime.setMemoryLimit(-1);
      parts = this.finish(context, session, FINISH_WITHOUT_REQUEST, handles);
      if (parts !== null) {
        parts.limit ??= 'memory';
        parts.error ??= MEMORY_MESSAGE;
      }
    }
    if (parts === null) return failure(job, 'script sandbox failed to collect the outcome', true);

    const error = timedOut ? timeLimitMessage(limits.timeMs) : (parts.error ?? escaped);
    const outcome: ScriptOutcome = {
      ok: error === null,
      output: parts.output,
      error,
      variables: withChanges(job.variables, parts.variables),
    };
    if (job.requestWritable && job.request !== null && parts.request !== undefined) {
      const coerced = coerceRequest(parts.request);
      if ('error' in coerced) {
        outcome.ok = false;
        outcome.error ??= coerced.error;
      } else outcome.request = coerced.request;
    }
    const limited =
      timedOut || parts.limit !== null || escaped === MEMORY_MESSAGE || escaped === STACK_MESSAGE;
    const troubled = limited || escaped !== null;
    const exhausted = !troubled && warm.uses >= this.maxUses;
    return { outcome, limited, recycled: troubled || exhausted, exhausted, fatal: false };
  }

  /** Memory the warm context holds (for benchmarks and diagnostics), or 0 when there is none. */
  contextBytes(): number {
    return this.warm?.baselineBytes ?? 0;
  }

  /**
   * Bytes the WebAssembly memory grew past its size after the first context was built. It never
   * shrinks again: only ending the thread gives those pages back.
   */
  grownBytes(): number {
    return Math.max(0, this.heap.memory.buffer.byteLength - this.heap.baseBytes);
  }

  dispose(): void {
    this.discard();
  }

  private build(): WarmContext {
    const runtime = this.module.newRuntime();
    try {
      runtime.setMaxStackSize(MAX_STACK_BYTES);
      runtime.setInterruptHandler(() => {
        if (Date.now() <= this.deadline) return false;
        this.interrupted = true;
        return true;
      });
      const context = runtime.newContext();
      const loaded = context.evalCode(this.prelude, 'prelude.js');
      context.unwrapResult(loaded).dispose();
      const prepare = context.unwrapResult(context.evalCode('__vigilInstall()', 'install.js'));
      if (this.heap.baseBytes === 0) this.heap.baseBytes = this.heap.memory.buffer.byteLength;
      return { runtime, context, prepare, baselineBytes: memoryUsed(runtime, context), uses: 0 };
    } catch (error) {
      runtime.dispose();
      throw new Error(`the script sandbox prelude failed to load: ${describe(error)}`);
    }
  }

  private discard(): void {
    const warm = this.warm;
    this.warm = null;
    if (warm === null) return;
    try {
      warm.prepare.dispose();
      warm.context.dispose();
      warm.runtime.dispose();
    } catch {
      // A context that cannot be freed cleanly is dropped with its memory; the module stays usable.
    }
  }

  private drainPendingJobs(runtime: QuickJSRuntime): void {
    while (runtime.hasPendingJob() && !this.interrupted) {
      const result = runtime.executePendingJobs();
      if (result.error) {
        result.error.dispose();
        return;
      }
    }
  }

  private finish(
    context: QuickJSContext,
    session: QuickJSHandle,
    phase: number,
    handles: QuickJSHandle[],
  ): SessionParts | null {
    const result = context.callFunction(session, context.undefined, track(handles, context.newNumber(phase)));
    if (result.error) {
      track(handles, result.error);
      return null;
    }
    const text = context.getString(track(handles, result.value));
    return parseParts(text);
  }
}

function failure(job: EngineJob, message: string, limited: boolean): EngineResult {
  return { outcome: failureOutcome(job, message), limited, recycled: true, exhausted: false, fatal: false };
}

function failureOutcome(job: EngineJob, message: string): ScriptOutcome {
  return { ok: false, output: '', error: message, variables: { ...job.variables } };
}

function errorText(context: QuickJSContext, handle: QuickJSHandle): string {
  try {
    const dumped: unknown = context.dump(handle);
    if (isRecord(dumped) && dumped.message === 'out of memory') return MEMORY_MESSAGE;
    if (isRecord(dumped) && dumped.message === 'stack overflow') return STACK_MESSAGE;
    return `script failed: ${isRecord(dumped) ? String(dumped.message) : String(dumped)}`;
  } catch {
    return MEMORY_MESSAGE;
  }
}

function track(handles: QuickJSHandle[], handle: QuickJSHandle): QuickJSHandle {
  handles.push(handle);
  return handle;
}

function memoryUsed(runtime: QuickJSRuntime, context: QuickJSContext): number {
  const usage = runtime.computeMemoryUsage();
  try {
    const dumped: unknown = context.dump(usage);
    const size = isRecord(dumped) ? dumped.memory_used_size : undefined;
    return typeof size === 'number' ? size : 0;
  } finally {
    usage.dispose();
  }
}

/** The job's variables with those the script set; names are own properties, `__proto__` included. */
function withChanges(
  before: Record<string, string>,
  changes: Record<string, string>,
): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const source of [before, changes]) {
    for (const name of Object.keys(source)) {
      Object.defineProperty(variables, name, {
        value: source[name],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return variables;
}

function parseParts(text: string): SessionParts | null {
  const value: unknown = JSON.parse(text);
  if (!isRecord(value) || typeof value.output !== 'string' || !isRecord(value.variables)) return null;
  const variables: Record<string, string> = {};
  for (const [name, entry] of Object.entries(value.variables)) {
    Object.defineProperty(variables, name, {
      value: String(entry),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  const limit = value.limit === 'memory' || value.limit === 'stack' ? value.limit : null;
  const parts: SessionParts = {
    error: typeof value.error === 'string' ? value.error : null,
    limit,
    output: value.output,
    variables,
  };
  if ('request' in value) parts.request = value.request;
  return parts;
}

/** The variant package's default export, whichever way the module system wrapped it. */
function syncVariant(imported: unknown): QuickJSSyncVariant {
  for (let value = imported, depth = 0; isRecord(value) && depth < 3; value = value.default, depth++) {
    if (isSyncVariant(value)) return value;
  }
  throw new Error('@jitl/quickjs-wasmfile-release-sync did not export a QuickJS variant');
}

function isSyncVariant(
  value: Record<string, unknown>,
): value is Record<string, unknown> & QuickJSSyncVariant {
  return (
    value.type === 'sync' &&
    typeof value.importFFI === 'function' &&
    typeof value.importModuleLoader === 'function'
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The bundled prelude, found from the package root whether this runs from dist/ or src/. */
function readPrelude(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = packageRoot(here);
  const bundle = path.join(root, ...PRELUDE_PATH);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(bundle);
  } catch {
    throw new Error(`the script sandbox prelude ${bundle} is missing; run \`npm run build\``);
  }
  const source = path.join(here, 'prelude.ts');
  if (
    import.meta.url.endsWith('.ts') &&
    fs.existsSync(source) &&
    fs.statSync(source).mtimeMs > stat.mtimeMs
  ) {
    throw new Error(`the script sandbox prelude ${bundle} is older than prelude.ts; run \`npm run build\``);
  }
  return fs.readFileSync(bundle, 'utf8');
}

function packageRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}
