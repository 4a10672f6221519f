import fs from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../domain/module-worker.js';
import type { SqliteConnection } from './sqlite-drivers.js';

/** Pages in the log after which the writer itself copies them back (SQLite's default). */
const WRITER_PAGES = 1_000;
/** While the checkpoint thread runs: the writer steps in only if the log grows this far. */
const FALLBACK_PAGES = 16_000;
/** How often the thread looks for commits to copy back. */
const INTERVAL_MS = 100;
/** The thread stops after this long without a commit. */
const IDLE_MS = 30_000;
/** How often, at most, a commit looks at the size of the log. */
const LOOK_EVERY_MS = 1_000;
/**
 * Log growth, in bytes a second, at which the thread starts: 1,000 pages of 4 KiB a second, so the
 * writer would stop for a checkpoint every second.
 */
const HEAVY_BYTES_PER_SECOND = 4 << 20;
/** How long a stopping thread may take to close its connection before it is terminated. */
const STOP_MS = 2_000;
/** After a thread that ended unasked (it could not open the file, say), none starts for this long. */
const RETRY_AFTER_MS = 60_000;

/**
 * Checkpoints of the write-ahead log off the thread that writes, while writes are heavy.
 *
 * In WAL mode SQLite appends each commit to the `-wal` file, and every so often (1,000 pages by
 * default) the committing connection copies the log back into the database file and syncs it: a
 * pause of the one thread that serves requests, which under a stream of writes (message ingest)
 * costs more than the writes themselves. While writes are heavy, a worker thread with a
 * connection of its own starts taking those checkpoints (PASSIVE: they never wait for, or block, the
 * writer or readers), and the writer's own threshold is raised to FALLBACK_PAGES, so that the log
 * stays bounded if the thread falls behind or fails. After IDLE_MS without a commit the thread
 * stops and the writer checkpoints as before. Durability is SQLite's either way: a commit is as
 * safe as `synchronous` makes it before its caller hears of it, whoever copies it back later.
 *
 * "Heavy" is read off the files: the database and its log together growing by more than
 * HEAVY_BYTES_PER_SECOND (the writer would then checkpoint every second or more often). Writes that
 * change pages in place without adding any are not seen; the writer keeps checkpointing those as
 * SQLite does by default. `journal_size_limit` makes SQLite cut the log file back to 1 MiB when it
 * starts the log over, so that a log grown large once does not stay that size on disk.
 */
export class WalCheckpointer {
  #thread: Worker | null = null;
  #stopped: Promise<void> | null = null;
  #closed = false;
  #lastCommit = 0;
  #lastLook = 0;
  #lastSize = 0;
  #stopping = false;
  #noStartBefore = 0;
  #idleTimer: NodeJS.Timeout | null = null;
  readonly #logFile: string;

  constructor(
    private readonly raw: SqliteConnection,
    private readonly file: string,
  ) {
    this.#logFile = `${file}-wal`;
    raw.exec(`PRAGMA journal_size_limit = ${1 << 20}`);
  }

  /** Whether the checkpoint thread is running. */
  get running(): boolean {
    return this.#thread !== null;
  }

  /** Called after each commit of the writer: starts the thread when the store grows fast. */
  committed(): void {
    const now = performance.now();
    this.#lastCommit = now;
    if (this.#thread || this.#closed || now - this.#lastLook < LOOK_EVERY_MS || now < this.#noStartBefore) {
      return;
    }
    let size: number;
    try {
      size = fs.statSync(this.file).size + fs.statSync(this.#logFile).size;
    } catch {
      return;
    }
    // New pages land in the log, then in the file when the log is copied back (and cut back):
    // the growth of the two together is what commits added, whoever checkpointed in between.
    const rate = ((size - this.#lastSize) * 1000) / (now - this.#lastLook);
    const first = this.#lastLook === 0;
    this.#lastLook = now;
    this.#lastSize = size;
    if (!first && rate >= HEAVY_BYTES_PER_SECOND) this.#start();
  }

  #start(): void {
    const thread = startModuleWorker(import.meta.url, 'checkpoint-thread', {
      workerData: { file: this.file, driver: this.raw.driver, intervalMs: INTERVAL_MS },
      // The thread holds a connection and a few numbers; a small heap is plenty.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
      stdout: false,
      stderr: false,
    });
    this.#thread = thread;
    this.#setWriterPages(FALLBACK_PAGES);
    thread.unref();
    // A thread that fails ends like a stopped one: the writer checkpoints again.
    thread.on('error', () => undefined);
    this.#stopped = new Promise<void>((resolve) =>
      thread.once('exit', () => {
        if (this.#thread === thread) this.#ended();
        resolve();
      }),
    );
    this.#idleTimer = setInterval(() => {
      if (performance.now() - this.#lastCommit >= IDLE_MS) void this.stop();
    }, IDLE_MS / 3);
    this.#idleTimer.unref();
  }

  #ended(): void {
    this.#thread = null;
    if (!this.#stopping) this.#noStartBefore = performance.now() + RETRY_AFTER_MS;
    this.#stopping = false;
    if (this.#idleTimer) clearInterval(this.#idleTimer);
    this.#idleTimer = null;
    if (!this.#closed) this.#setWriterPages(WRITER_PAGES);
  }

  #setWriterPages(pages: number): void {
    try {
      this.raw.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
    } catch {
      // The connection is closing; nothing left to set.
    }
  }

  /** Stops the thread: it closes its connection first, so that the writer's close is the last. */
  async stop(): Promise<void> {
    const thread = this.#thread;
    if (!thread) return;
    const stopped = this.#stopped;
    this.#stopping = true;
    thread.postMessage('stop');
    const timer = setTimeout(() => void thread.terminate(), STOP_MS);
    await stopped;
    clearTimeout(timer);
  }

  /** Before the writer's connection closes: stops the thread for good. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.stop();
  }
}
