/**
 * Entry point of one sandbox thread (started by sandbox.ts): takes one job at a time, runs it in
 * the thread's QuickJS engine and answers with the outcome. After a job that spent its context, it
 * answers first and then builds the next context, telling the host when it is ready again. After a
 * job that grew the engine's memory by more than {@link RETIRE_GROWN_BYTES} (a script that used
 * much memory, or hit the limit), it answers and ends: WebAssembly memory never shrinks, and the
 * host's new thread starts small again.
 */
import { parentPort } from 'node:worker_threads';
import { type EngineJob, RETIRE_GROWN_BYTES, ScriptEngine } from './engine.js';
import type { ScriptOutcome } from './sandbox.js';

export interface RunMessage {
  type: 'run';
  id: number;
  job: EngineJob;
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'done'; id: number; outcome: ScriptOutcome; ready: boolean }
  | { type: 'fatal'; message: string };

const port = parentPort;
if (port === null) throw new Error('the script sandbox worker must run in a worker thread');

function post(message: WorkerMessage): void {
  port?.postMessage(message);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

let engine: ScriptEngine | null = null;
try {
  engine = await ScriptEngine.load();
  engine.warmUp();
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'fatal', message: errorMessage(error) });
  port.close();
}

port.on('message', (message: RunMessage) => {
  if (engine === null) return;
  const result = engine.run(message.job);
  const retire = !result.fatal && engine.grownBytes() > RETIRE_GROWN_BYTES;
  post({ type: 'done', id: message.id, outcome: result.outcome, ready: !result.recycled && !retire });
  if (result.fatal) {
    process.exit(1);
  }
  if (retire) {
    engine.dispose();
    process.exit(0);
  }
  if (!result.recycled) return;
  try {
    engine.warmUp();
    post({ type: 'ready' });
  } catch (error) {
    post({ type: 'fatal', message: errorMessage(error) });
    process.exit(1);
  }
});
