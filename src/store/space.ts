import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from './store.js';

/**
 * How long one reading of the free space is trusted. Short: a burst of large writes within it is
 * not seen, and a reading costs a statfs and a pragma (microseconds) next to the write it guards.
 */
const READING_TTL_MS = 50;
/** Bytes kept in the reserve file beside the database, at most. */
const RESERVE_BYTES = 8 * 1024 * 1024;
const MB = 1024 * 1024;

/** The reserve file of a SQLite data directory, and its size for a MIN_FREE_DISK. */
export function reserveOf(dataDir: string, minFree: number): { file: string; bytes: number } {
  return {
    file: path.join(dataDir, 'vigil.reserve'),
    bytes: Math.min(RESERVE_BYTES, Math.floor(minFree / 2)),
  };
}

/** Writes the reserve file when it is missing and the disk has room for it; answers whether it exists. */
export function keepReserve(reserve: { file: string; bytes: number }): boolean {
  if (reserve.bytes <= 0 || fs.existsSync(reserve.file)) return true;
  try {
    fs.writeFileSync(reserve.file, Buffer.alloc(reserve.bytes));
    return true;
  } catch {
    fs.rmSync(reserve.file, { force: true });
    return false;
  }
}

/**
 * The room the SQLite store has to grow: the free bytes of its filesystem plus the free pages inside
 * the database file (which SQLite fills before it grows the file, so deleting rows makes room even
 * though the file does not shrink). Below `minFree` the store refuses writes that add data; the
 * space under that mark is kept for deletes, retention and the outcomes of runs under way.
 *
 * A reserve file beside the database (see the SQLite dialect) is given up to start on a full disk;
 * until it can be written again, writes that add data are refused too.
 */
export class StoreRoom {
  private reading: { at: number; blocker: string | null } | null = null;
  private pending: Promise<string | null> | null = null;
  private readonly reserve: { file: string; bytes: number };

  constructor(private readonly options: { dir: string; minFree: number; db: Db }) {
    this.reserve = reserveOf(options.dir, options.minFree);
  }

  /** Why writes that add data are refused now, or null (read at most every READING_TTL_MS). */
  async blocker(): Promise<string | null> {
    if (this.reading && Date.now() - this.reading.at < READING_TTL_MS) return this.reading.blocker;
    this.pending ??= this.read().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** Forgets the last reading (after deletes), so that the next check reads again. */
  forget(): void {
    this.reading = null;
  }

  private async read(): Promise<string | null> {
    const { minFree } = this.options;
    let stats = await fs.promises.statfs(this.options.dir);
    const onDisk = () => stats.bavail * stats.bsize;
    let reserved = fs.existsSync(this.reserve.file) || this.reserve.bytes <= 0;
    if (!reserved && onDisk() >= minFree + this.reserve.bytes) {
      reserved = keepReserve(this.reserve);
      stats = await fs.promises.statfs(this.options.dir);
    }
    let freePages = 0;
    try {
      const { rows } = await sql<{ free: number; size: number }>`
        select (select freelist_count from pragma_freelist_count()) as free,
               (select page_size from pragma_page_size()) as size`.execute(this.options.db);
      freePages = (rows[0]?.free ?? 0) * (rows[0]?.size ?? 0);
    } catch {
      // The filesystem figure alone is still a fair answer.
    }
    const free = onDisk() + freePages;
    let blocker: string | null = null;
    if (!reserved)
      blocker = `the disk was full when the store opened and its reserve file is used up; free ${((minFree + this.reserve.bytes) / MB).toFixed(1)} MB on the disk`;
    else if (free < minFree)
      blocker = `the store has ${(free / MB).toFixed(1)} MB of disk left, less than MIN_FREE_DISK (${(minFree / MB).toFixed(1)} MB); delete messages or add disk space`;
    this.reading = { at: Date.now(), blocker };
    return blocker;
  }
}
