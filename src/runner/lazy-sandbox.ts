import type { ScriptRunner } from './context.js';
import { type ScriptJob, type ScriptOutcome, ScriptSandbox } from './sandbox/sandbox.js';

/**
 * The script sandbox, started on first use: a process that never runs a script starts no threads.
 * After `close()` a later script starts a fresh sandbox.
 */
export class LazyScriptSandbox implements ScriptRunner {
  private sandbox: ScriptSandbox | null = null;

  constructor(private readonly options: Parameters<typeof ScriptSandbox.start>[0] = {}) {}

  run(job: ScriptJob, signal?: AbortSignal): Promise<ScriptOutcome> {
    this.sandbox ??= ScriptSandbox.start(this.options);
    return this.sandbox.run(job, signal);
  }

  async close(): Promise<void> {
    const sandbox = this.sandbox;
    this.sandbox = null;
    await sandbox?.close();
  }
}
