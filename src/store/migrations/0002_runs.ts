import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('test_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('test_id', 'text', (c) => c.notNull().references('tests.id').onDelete('cascade'))
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull())
    .addColumn('environment_name', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('agent', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('parent_run_id', 'text')
    .addColumn('queued_at', 'double precision', (c) => c.notNull())
    .addColumn('started_at', 'double precision')
    .addColumn('finished_at', 'double precision')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('requests_executed', 'integer', (c) => c.notNull())
    .addColumn('assertions_defined', 'integer', (c) => c.notNull())
    .addColumn('assertions_passed', 'integer', (c) => c.notNull())
    .addColumn('assertions_failed', 'integer', (c) => c.notNull())
    .addColumn('scripts_defined', 'integer', (c) => c.notNull())
    .addColumn('scripts_passed', 'integer', (c) => c.notNull())
    .addColumn('scripts_failed', 'integer', (c) => c.notNull())
    .addColumn('variables_defined', 'integer', (c) => c.notNull())
    .addColumn('variables_passed', 'integer', (c) => c.notNull())
    .addColumn('variables_failed', 'integer', (c) => c.notNull())
    .addColumn('response_time_ms', 'double precision')
    .addColumn('error', 'text')
    .addColumn('trigger_variables', 'text', (c) => c.notNull())
    .addColumn('notification_url', 'text')
    .addColumn('summary', 'text')
    .execute();
  await db.schema
    .createIndex('test_runs_test_finished')
    .on('test_runs')
    .columns(['test_id', 'finished_at'])
    .execute();
  await db.schema
    .createIndex('test_runs_test_queued')
    .on('test_runs')
    .columns(['test_id', 'queued_at'])
    .execute();

  await db.schema
    .createTable('test_run_steps')
    .addColumn('run_id', 'text', (c) => c.notNull().references('test_runs.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('test_run_steps_pk', ['run_id', 'position'])
    .execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('region', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('run_after', 'double precision', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'double precision')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_ready').on('jobs').columns(['state', 'name', 'run_after']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['jobs', 'test_run_steps', 'test_runs']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
