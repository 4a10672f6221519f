/**
 * Entry point of one sandbox thread (started by sandbox.ts): takes one job at a time, runs it in
 * the thread's QuickJS engine and answers with the outcome. After a job that spent its context, it
 * answers first and then builds the next context, telling the host when it is ready again.
 */
import { parentPort } from 'node:worker_threads';
import { type EngineJob, ScriptEngine } from './engine.js';
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
  post({ type: 'done', id: message.id, outcome: result.outcome, ready: !result.recycled });
  if (result.fatal) {
    process.exit(1);
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
