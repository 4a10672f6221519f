import type { FastifyReply } from 'fastify';
import type { StoragePort } from '../context.js';

/** Room for cached answers, in UTF-16 code units of their text (about bytes for JSON). */
const BUDGET = 2 * 1024 * 1024;
/** An answer longer than this is not kept: a few large ones would push out many small ones. */
const LARGEST = 64 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Serialised answers of hot reads, kept while the tables they are read from have not changed. Every
 * entry was built from reads made after the generation of those tables was taken
 * (StoragePort.generation); when it moves, every entry is dropped at once, so an answer is never
 * older than the last change to what it shows. Where the store has no generation to give
 * (PostgreSQL, or SQLite with its connection busy), nothing is kept or served and every request
 * reads the store.
 *
 * `tables` must name every table the answers are read from, and a key everything an answer depends
 * on besides them: the caller's account and whatever of the token changes what it may see.
 */
export class AnswerCache {
  #generation: string | undefined;
  #entries = new Map<string, string>();
  #size = 0;

  constructor(
    private readonly storage: Pick<StoragePort, 'generation'>,
    private readonly tables: readonly string[],
  ) {}

  /**
   * Answers from the cache when it holds `key` for the store as it is now; otherwise builds the
   * payload with `read`, serialises it with the route's serialiser, keeps it and sends it.
   */
  async send(reply: FastifyReply, key: string, read: () => Promise<unknown>): Promise<FastifyReply> {
    const generation = this.storage.generation(this.tables);
    if (generation !== undefined) {
      if (generation !== this.#generation) this.#clear(generation);
      const kept = this.#entries.get(key);
      if (kept !== undefined) return reply.type(JSON_TYPE).send(kept);
    }
    const body = reply.serialize(await read());
    if (generation !== undefined && typeof body === 'string') this.#keep(generation, key, body);
    return reply.type(JSON_TYPE).send(body);
  }

  #clear(generation: string): void {
    this.#generation = generation;
    this.#entries.clear();
    this.#size = 0;
  }

  #keep(generation: string, key: string, body: string): void {
    // Stored since the read began: what was read may be older than the store now.
    if (generation !== this.#generation || body.length > LARGEST) return;
    const before = this.#entries.get(key);
    if (before !== undefined) this.#size -= before.length;
    this.#entries.set(key, body);
    this.#size += body.length;
    for (const [oldest, text] of this.#entries) {
      if (this.#size <= BUDGET) break;
      this.#entries.delete(oldest);
      this.#size -= text.length;
    }
  }
}
