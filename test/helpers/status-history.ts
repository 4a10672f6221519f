import type { TestRunRow } from '../../src/store/database.js';
import { rollupsRepo } from '../../src/store/repositories/rollups.js';
import { runsRepo } from '../../src/store/repositories/runs.js';
import type { Store } from '../../src/store/store.js';
import { runRow } from './seed.js';

/**
 * Fills the history of tests through the store: `runsPerDay` finished runs a day for `days` days
 * ending at `now`, each counted in the daily rollups as a finishing run is. `fails(testIndex, day,
 * run)` decides which fail. The newest run of each test is the last one of today.
 */
export async function fillRunHistory(
  store: Store,
  options: {
    bucketKey: string;
    tests: readonly { id: string; environmentId: string }[];
    days: number;
    runsPerDay: number;
    now: number;
    fails: (testIndex: number, daysAgo: number, run: number) => boolean;
  },
): Promise<number> {
  const { tests, days, runsPerDay, now } = options;
  let count = 0;
  for (let daysAgo = days - 1; daysAgo >= 0; daysAgo -= 1) {
    await store.transaction(async (trx) => {
      const rows: TestRunRow[] = [];
      tests.forEach((test, index) => {
        for (let run = 0; run < runsPerDay; run += 1) {
          // Spread over the day, the last one a minute before `now` on the newest day.
          const finished = now - daysAgo * 86_400 - (runsPerDay - run) * Math.floor(86_000 / runsPerDay) + 60;
          const result = options.fails(index, daysAgo, run) ? 'fail' : 'pass';
          rows.push({
            ...runRow(test.id, options.bucketKey, result, finished - 0.5),
            environment_id: test.environmentId,
            source: 'scheduled',
          });
        }
      });
      for (let i = 0; i < rows.length; i += 200) await runsRepo.insert(trx, rows.slice(i, i + 200));
      for (const row of rows) {
        await rollupsRepo.count(trx, {
          test_id: row.test_id,
          environment_id: row.environment_id,
          finished_at: row.finished_at!,
          result: row.result as 'pass' | 'fail',
        });
      }
      count += rows.length;
    });
  }
  return count;
}
