import fs from 'node:fs';
import path from 'node:path';

/** The SQLite file and the journals SQLite keeps beside it. */
const SQLITE_SUFFIXES = ['', '-wal', '-shm', '-journal'];

/**
 * The path of `vigil.db` in `dataDir`, made ready to be opened by its owner alone: a missing data
 * directory is created 0700, and the database and its journals are created (or narrowed to) 0600, so
 * that other users of the machine read neither tokens' hashes nor captured traffic. SQLite creates
 * its journals with the database file's mode.
 */
export function privateDatabaseFile(dataDir: string): string {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, 'vigil.db');
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  for (const suffix of SQLITE_SUFFIXES) {
    try {
      fs.chmodSync(`${file}${suffix}`, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return file;
}
