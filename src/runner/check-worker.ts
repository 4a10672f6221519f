/**
 * Entry point of one check thread (started by check-pool.ts): evaluates one step's checks at a time.
 * Before each check it writes where it is into the shared progress array, so that the host can name
 * the check it stopped. The results it has so far go to the host before each check that may take
 * long and once they are 10 ms old, so that they outlive a thread ended in a later check; the
 * others go with the end of the step's checks.
 */
import { Buffer } from 'node:buffer';
import { parentPort, workerData } from 'node:worker_threads';
import { renderTemplate } from '../domain/templates.js';
import {
  type CheckReply,
  type CheckRequest,
  type CheckResult,
  checkAt,
  evaluateChecks,
  mayTakeLong,
  PROGRESS_INDEX,
  PROGRESS_JOB,
  PROGRESS_STAGE,
} from './check-batch.js';
import type { ResponseSubject } from './extract.js';

/** Results older than this are sent before the next check, whatever it is. */
const SEND_AFTER_MS = 10;

const port = parentPort;
if (port === null) throw new Error('the check worker must run in a worker thread');
const progress = new Int32Array((workerData as { progress: SharedArrayBuffer }).progress);

function post(message: CheckReply): void {
  port?.postMessage(message);
}

port.on('message', (message: CheckRequest) => {
  const { id, job } = message;
  Atomics.store(progress, PROGRESS_INDEX, 0);
  Atomics.store(progress, PROGRESS_JOB, id);
  // A Buffer arrives as a plain Uint8Array.
  const body = job.subject.body;
  const subject: ResponseSubject = {
    ...job.subject,
    body: typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  };
  const results: CheckResult[] = [];
  let current = -1;
  let sent = performance.now();
  try {
    evaluateChecks(
      job.checks,
      subject,
      job.values,
      (text) =>
        text.includes('{{')
          ? renderTemplate(text, { variables: job.values, now: () => job.nowMs, budget: job.budget })
          : { ok: true, value: text },
      (result) => results.push(result),
      (index, stage) => {
        if (index !== current) {
          current = index;
          const at = checkAt(job.checks, index);
          const heavy = at !== undefined && mayTakeLong(at.check.source, subject);
          if (results.length > 0 && (heavy || performance.now() - sent > SEND_AFTER_MS)) {
            post({ type: 'results', id, results: results.splice(0) });
            sent = performance.now();
          }
        }
        Atomics.store(progress, PROGRESS_INDEX, index);
        Atomics.store(progress, PROGRESS_STAGE, stage);
      },
    );
    post({ type: 'done', id, results });
  } catch (error) {
    post({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) });
  }
});

post({ type: 'ready' });
