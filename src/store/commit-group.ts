import { sql } from 'kysely';
import type { Trx } from './store.js';

/** Calls written in one transaction at most: a group holds the store while it is written. */
const MOST_CALLS = 16;

interface Call {
  fn: (trx: Trx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: calls that arrive while a transaction is being written wait, and are then written
 * together in the next one, each inside a savepoint of its own. A call that throws undoes only its
 * own writes (back to its savepoint) and its caller gets the error; the others are committed
 * together, and no caller hears of its writes before the commit that keeps them. When the
 * transaction as a whole fails (its commit, or a store that gave up the transaction, as SQLite does
 * on a full disk), every call of the group gets that error and none of their writes is kept.
 *
 * A call that finds nothing being written starts a transaction at once, so a lone call waits for
 * no one; under load, one commit serves many calls, which is what writing many small batches costs
 * most: each commit writes the pages its rows touched, and rows written together share them. It
 * serves a store that writes one transaction at a time (SQLite); the store decides (sharedTransaction).
 */
export class CommitGroup {
  #waiting: Call[] = [];
  #writing = false;

  constructor(private readonly transaction: <T>(fn: (trx: Trx) => Promise<T>) => Promise<T>) {}

  run<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#writing) void this.#write();
    });
  }

  async #write(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#waiting.length > 0) {
        const group = this.#waiting.splice(0, MOST_CALLS);
        if (group.length === 1) {
          // Alone, a call needs no savepoint: its transaction is all or nothing already.
          const [call] = group as [Call];
          await this.transaction(call.fn).then(call.resolve, call.reject);
          continue;
        }
        let outcomes: Outcome[];
        try {
          outcomes = await this.transaction((trx) => runEach(trx, group));
        } catch (error) {
          for (const call of group) call.reject(error);
          continue;
        }
        group.forEach((call, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) call.resolve(outcome.value);
          else call.reject(outcome.error);
        });
      }
    } finally {
      this.#writing = false;
    }
  }
}

/** Runs each call in a savepoint of its own; a call's failure is its outcome, not the transaction's. */
async function runEach(trx: Trx, group: readonly Call[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const [i, call] of group.entries()) {
    const name = sql.raw(`vigil_call_${i}`);
    await sql`savepoint ${name}`.execute(trx);
    try {
      const value = await call.fn(trx);
      await sql`release savepoint ${name}`.execute(trx);
      outcomes.push({ ok: true, value });
    } catch (error) {
      try {
        await sql`rollback to savepoint ${name}`.execute(trx);
        await sql`release savepoint ${name}`.execute(trx);
      } catch {
        // The store gave up the whole transaction (SQLite does on a full disk): the group fails,
        // and the call's own error says why.
        throw error;
      }
      outcomes.push({ ok: false, error });
    }
  }
  return outcomes;
}
