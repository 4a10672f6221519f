/**
 * The checkpoint thread of a SQLite store (see WalCheckpointer): its own connection to the
 * database file, which copies committed pages of the log back into the file every `intervalMs`
 * when another connection has committed since it last looked (`data_version` tells).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite, type SqliteDriverName } from './sqlite-drivers.js';

const { file, driver, intervalMs } = workerData as {
  file: string;
  driver: SqliteDriverName;
  intervalMs: number;
};

const db = openSqlite(file, driver);
const version = db.prepare('select data_version as version from pragma_data_version');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let seen: unknown;

const timer = setInterval(() => {
  try {
    const now = (version.all([])[0] as { version: number }).version;
    if (now === seen) return;
    seen = now;
    checkpoint.all([]);
  } catch {
    // A full disk or a busy file: the next round tries again, and the writer's own threshold keeps
    // the log bounded meanwhile.
    seen = undefined;
  }
}, intervalMs);

parentPort?.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
