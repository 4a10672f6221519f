/**
 * Fills one bucket of a SQLite store with FILL_COUNT benchmark messages, straight through the store
 * rather than the API: each item goes through the API's normalisation (`normalizeItem`) and
 * `messageRow`, and rows are written with `messagesRepo.insert` in transactions of TRANSACTION_ROWS.
 * Timestamps are spread evenly from FILL_FROM to FILL_TO (Unix seconds), oldest first. Writes
 * FILL_SAMPLE ids, evenly spread, as a JSON array to FILL_SAMPLE_FILE, and as its last stdout
 * line a JSON object with the count and the time taken.
 *
 * Env: FILL_DATA_DIR, FILL_BUCKET, FILL_COUNT, FILL_FROM, FILL_TO, FILL_SAMPLE, FILL_SAMPLE_FILE.
 */
import fs from 'node:fs';
import { normalizeItem } from '../../src/capture/normalize.js';
import { newId } from '../../src/domain/ids.js';
import type { MessageRow } from '../../src/store/database.js';
import { messageRow, messagesRepo } from '../../src/store/repositories/messages.js';
import { Store } from '../../src/store/store.js';
import { benchMessage } from './messages.js';

/** Rows per INSERT statement: 14 columns each, well under SQLite's 32,766 parameters. */
const STATEMENT_ROWS = 500;
const TRANSACTION_ROWS = 20_000;

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const dataDir = setting('FILL_DATA_DIR');
const bucket = setting('FILL_BUCKET');
const count = Number(setting('FILL_COUNT'));
const from = Number(setting('FILL_FROM'));
const to = Number(setting('FILL_TO'));
const sampleSize = Number(setting('FILL_SAMPLE'));
const sampleFile = setting('FILL_SAMPLE_FILE');

const store = Store.open({ dataDir, sqliteSynchronous: 'NORMAL' });
const step = (to - from) / count;
const sampleEvery = Math.max(1, Math.floor(count / sampleSize));
const sample: string[] = [];
const startedAt = performance.now();

for (let first = 0; first < count; first += TRANSACTION_ROWS) {
  const last = Math.min(count, first + TRANSACTION_ROWS);
  await store.transaction(async (trx) => {
    let rows: MessageRow[] = [];
    for (let n = first; n < last; n++) {
      const timestamp = Math.round((from + n * step) * 1_000_000) / 1_000_000;
      const item = normalizeItem(benchMessage(n, timestamp), timestamp);
      if (!item.ok) throw new Error(`message ${n} is invalid: ${item.error.message}`);
      const row = messageRow(newId(), bucket, item.message, timestamp);
      if (n % sampleEvery === 0 && sample.length < sampleSize) sample.push(row.id);
      rows.push(row);
      if (rows.length === STATEMENT_ROWS) {
        await messagesRepo.insert(trx, rows);
        rows = [];
      }
    }
    await messagesRepo.insert(trx, rows);
    await messagesRepo.countReceived(trx, bucket, last - first);
  });
  if (last % 100_000 === 0 || last === count) {
    const seconds = (performance.now() - startedAt) / 1000;
    process.stderr.write(`  filled ${last.toLocaleString('en-US')} (${Math.round(last / seconds)}/s)\n`);
  }
}
await store.close();
fs.writeFileSync(sampleFile, JSON.stringify(sample));
process.stdout.write(`${JSON.stringify({ count, seconds: (performance.now() - startedAt) / 1000 })}\n`);
