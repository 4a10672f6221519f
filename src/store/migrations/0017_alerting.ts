import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // The runs one start (a schedule tick, a trigger, a manual run) fans out to its regions and agents
  // share a round; an alert quorum decides the round's notifications once it is complete.
  await db.schema.alterTable('test_runs').addColumn('round_id', 'text').execute();
  await db.schema.createIndex('test_runs_round').on('test_runs').column('round_id').execute();

  // One row per decided round: its primary key is the guard that lets exactly one process decide.
  await db.schema
    .createTable('alert_rounds')
    .addColumn('round_id', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('test_runs.id').onDelete('cascade'))
    .addColumn('quorum', 'integer', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('failed_regions', 'text', (c) => c.notNull())
    .addColumn('passed_regions', 'text', (c) => c.notNull())
    .addColumn('decided_at', 'double precision', (c) => c.notNull())
    .execute();

  // Maintenance windows of a bucket, or of one test of it (test_id). One-off windows hold
  // starts_at/ends_at; weekly ones hold their recurrence as JSON.
  await db.schema
    .createTable('maintenance_windows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('test_id', 'text', (c) => c.references('tests.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'double precision')
    .addColumn('ends_at', 'double precision')
    .addColumn('weekly', 'text')
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('maintenance_windows_bucket')
    .on('maintenance_windows')
    .column('bucket_key')
    .execute();
  // Whether a maintenance window covered the run when it was queued (its notifications are muted).
  await db.schema
    .alterTable('test_runs')
    .addColumn('in_maintenance', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('test_runs').dropColumn('in_maintenance').execute();
  await db.schema.dropTable('maintenance_windows').execute();
  await db.schema.dropTable('alert_rounds').execute();
  await db.schema.dropIndex('test_runs_round').execute();
  await db.schema.alterTable('test_runs').dropColumn('round_id').execute();
}
