import type { Kysely } from 'kysely';
import { rebuildMetricRollups } from '../repositories/metric-rollups.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Counts of finished pass/fail runs per test, hour or day (`grain` seconds, `slot` = Unix seconds
  // ÷ grain), environment, region and response-time bucket, kept as runs finish: what the day, week
  // and month metrics read instead of the runs themselves. They go with their test (deleted alone or
  // with its bucket).
  await db.schema
    .createTable('test_metric_rollups')
    .addColumn('test_id', 'text', (c) => c.notNull().references('tests.id').onDelete('cascade'))
    .addColumn('grain', 'integer', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('environment_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('passes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('response_time_sum', 'double precision', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('test_metric_rollups_pk', [
      'test_id',
      'grain',
      'slot',
      'environment_id',
      'region',
      'bucket',
    ])
    .execute();
  await rebuildMetricRollups(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('test_metric_rollups').execute();
}
