/**
 * Outbound notification requests (webhooks, Slack, PagerDuty, the browser-test partner): undici
 * through the egress policy, a fixed timeout, and an outcome instead of an exception.
 */
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { undici } from '../net/undici.js';
import { VERSION } from '../config/version.js';
import { type EgressPolicy, egressConnector, type Resolver } from '../net/egress.js';

export const NOTIFY_TIMEOUT_MS = 10_000;
export const USER_AGENT = `Vigil/${VERSION}`;

/** `sha256=<hex HMAC-SHA256 of the body>`: the X-Vigil-Signature header. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

export interface PostOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The egress policy refused the address: retrying cannot help. */
  refused: boolean;
  /** The response body, when asked for (JSON answers of the partner). */
  body?: string;
}

export interface HttpPoster {
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    options?: { signal?: AbortSignal; timeoutMs?: number; readBody?: boolean },
  ): Promise<PostOutcome>;
  close(): Promise<void>;
}

const MAX_READ_BYTES = 1024 * 1024;

function describe(error: unknown): { message: string; refused: boolean } {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if ((current as { code?: unknown }).code === 'EGRESS_REFUSED')
      return { message: current.message, refused: true };
    current = current.cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return { message: `${message}${cause}`, refused: false };
}

/** POSTs with undici; names and addresses pass the egress policy first. */
export function createPoster(options: { egress: EgressPolicy; resolve?: Resolver }): HttpPoster {
  // The connection pool is made with the first request.
  let agent: Agent | null = null;
  return {
    async post(url, body, headers, postOptions = {}) {
      const started = performance.now();
      const timeout = AbortSignal.timeout(postOptions.timeoutMs ?? NOTIFY_TIMEOUT_MS);
      const signal = postOptions.signal ? AbortSignal.any([timeout, postOptions.signal]) : timeout;
      const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
      try {
        agent ??= new (undici().Agent)({
          connect: egressConnector(options.egress, NOTIFY_TIMEOUT_MS, options.resolve),
          headersTimeout: NOTIFY_TIMEOUT_MS,
          bodyTimeout: NOTIFY_TIMEOUT_MS,
        });
        const response = await undici().request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'user-agent': USER_AGENT, ...headers },
          body,
          signal,
        });
        let text: string | undefined;
        if (postOptions.readBody) {
          const chunks: Buffer[] = [];
          let size = 0;
          for await (const chunk of response.body) {
            size += (chunk as Buffer).length;
            if (size > MAX_READ_BYTES) throw new Error(`the answer is larger than ${MAX_READ_BYTES} bytes`);
            chunks.push(chunk as Buffer);
          }
          text = Buffer.concat(chunks).toString('utf8');
        } else {
          await response.body.dump();
        }
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        return {
          ok,
          statusCode: response.statusCode,
          error: ok ? null : `the receiver answered HTTP ${response.statusCode}`,
          durationMs: elapsed(),
          refused: false,
          ...(text !== undefined && { body: text }),
        };
      } catch (error) {
        const { message, refused } = timeout.aborted
          ? {
              message: `no answer within ${(postOptions.timeoutMs ?? NOTIFY_TIMEOUT_MS) / 1000} s`,
              refused: false,
            }
          : describe(error);
        return { ok: false, statusCode: null, error: message, durationMs: elapsed(), refused };
      }
    },
    close: async () => {
      await agent?.close();
    },
  };
}
