import type { StepResult } from '../../domain/results.js';
import type { PauseStep } from '../../domain/steps.js';
import type { RunContext } from '../context.js';
import { emptyResult, settle } from './checks.js';

/** Waits `duration` seconds; a canceled or timed-out run stops waiting at once. */
export async function runPauseStep(ctx: RunContext, step: PauseStep, sleep: Sleep): Promise<StepResult> {
  const result = emptyResult(ctx, step);
  result.note = `paused ${step.duration} s`;
  try {
    await sleep(step.duration * 1000, ctx.signal);
  } catch {
    result.error = 'the run stopped during the pause';
  }
  return settle(ctx, result);
}

export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
