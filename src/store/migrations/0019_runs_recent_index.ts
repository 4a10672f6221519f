import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // The recent runs of the tests list, newest start first, read from the index whatever the length
  // of the test's history (runsRepo.recentForTests).
  await db.schema
    .createIndex('test_runs_test_started')
    .on('test_runs')
    .columns(['test_id', 'started_at', 'id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('test_runs_test_started').execute();
}
