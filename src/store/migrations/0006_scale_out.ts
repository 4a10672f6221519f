import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Who executes a run, how often it was delivered, which schedule meant it to start and when, and
  // the remote agent it is meant for.
  await db.schema.alterTable('test_runs').addColumn('worker_id', 'text').execute();
  await db.schema
    .alterTable('test_runs')
    .addColumn('executions', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('test_runs').addColumn('planned_at', 'double precision').execute();
  await db.schema.alterTable('test_runs').addColumn('agent_id', 'text').execute();
  await db.schema.alterTable('test_runs').addColumn('schedule_id', 'text').execute();
  await sql`create index test_runs_unfinished on test_runs (result, queued_at) where result in ('queued', 'working')`.execute(
    db,
  );

  // The scheduler's next planned start of each schedule.
  await db.schema.alterTable('schedules').addColumn('next_run_at', 'double precision').execute();
  await db.schema.createIndex('schedules_next_run').on('schedules').column('next_run_at').execute();

  // Retry policy of a queued job (the embedded queue).
  await db.schema
    .alterTable('jobs')
    .addColumn('retry_delay', 'double precision', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('jobs')
    .addColumn('retry_backoff', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  // Processes that execute runs announce themselves here: workers, serve processes with their
  // in-process worker, and remote agents.
  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('regions', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('concurrency', 'integer', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('started_at', 'double precision', (c) => c.notNull())
    .addColumn('last_seen_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workers_last_seen').on('workers').column('last_seen_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('workers').ifExists().execute();
}
