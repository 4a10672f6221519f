import { createHash } from 'node:crypto';
import { AppError, invalid } from '../domain/errors.js';
import { nowFloat } from '../domain/ids.js';
import { idempotencyRepo } from '../store/repositories/idempotency.js';
import type { Store } from '../store/store.js';

/** How long the first answer to a key is replayed. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
/** A key reserved this long ago whose request never got an answer (the process died) is free again. */
const ABANDONED_AFTER_SECONDS = 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface StoredAnswer {
  status: number;
  contentType: string | null;
  body: string;
}

/** What to do with a request carrying an Idempotency-Key. */
export type IdempotencyStart = { kind: 'first' } | { kind: 'replay'; answer: StoredAnswer };

/**
 * `Idempotency-Key` (docs/api-decisions.md): the first answer to a key is kept for 24 h and replayed
 * to every retry carrying the same key, so that a client that lost an answer can send again without
 * storing a batch twice or starting runs twice. A key is unique per caller and path; reusing it for
 * another request, or while the first is still being answered, is a 409.
 */
export class IdempotencyService {
  constructor(private readonly deps: { store: Store }) {}

  /** Checks the key and reserves it for this request, or answers the stored first answer. */
  async start(
    scope: string,
    key: string,
    request: { method: string; url: string; body: string },
  ): Promise<IdempotencyStart> {
    if (!KEY_PATTERN.test(key))
      throw invalid('Idempotency-Key', 'must be 1 to 255 printable ASCII characters without spaces');
    const fingerprint = createHash('sha256')
      .update(`${request.method}\n${request.url}\n${request.body}`)
      .digest('base64url');
    const { db } = this.deps.store;
    for (let tries = 0; tries < 2; tries++) {
      const now = nowFloat();
      if (await idempotencyRepo.reserve(db, { scope, key, fingerprint, created_at: now }))
        return { kind: 'first' };
      const row = await idempotencyRepo.get(db, scope, key);
      if (!row) continue;
      const expired = row.created_at < now - IDEMPOTENCY_TTL_SECONDS;
      const abandoned = row.status === null && row.created_at < now - ABANDONED_AFTER_SECONDS;
      if (expired || abandoned) {
        await idempotencyRepo.remove(db, scope, key, row.created_at);
        continue;
      }
      if (row.fingerprint !== fingerprint)
        throw new AppError(
          'conflict',
          'Idempotency-Key was first used with a different request (method, URL or body); use a new key for a new request',
        );
      if (row.status === null)
        throw new AppError(
          'conflict',
          'A request with this Idempotency-Key is still being answered; retry in a moment',
        );
      return {
        kind: 'replay',
        answer: { status: row.status, contentType: row.content_type, body: row.body ?? '' },
      };
    }
    throw new AppError('conflict', 'The Idempotency-Key is in use by concurrent requests; retry in a moment');
  }

  /** Keeps the answer of the first request; an answer of the server's fault frees the key instead. */
  async finish(scope: string, key: string, answer: StoredAnswer): Promise<void> {
    const { db } = this.deps.store;
    if (answer.status >= 500) await idempotencyRepo.remove(db, scope, key);
    else
      await idempotencyRepo.complete(db, scope, key, {
        status: answer.status,
        content_type: answer.contentType,
        body: answer.body,
      });
  }

  /** Forgets keys older than 24 h (the hourly retention job). */
  purge(now: number = nowFloat()): Promise<number> {
    return idempotencyRepo.removeOlderThan(this.deps.store.db, now - IDEMPOTENCY_TTL_SECONDS);
  }
}
