import { type Kysely, PostgresAdapter, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // A notifying integration's own message (docs/alerting.md, "Notification templates"): JSON
  // `{subject?, body}`, null for the type's standard message.
  await db.schema.alterTable('integrations').addColumn('template', 'text').execute();

  // Pass and fail counts per test, environment and UTC day (day = Unix days), kept as runs finish:
  // what a status page's uptime bars read instead of the runs themselves. They go with their test
  // (deleted alone or with its bucket).
  await db.schema
    .createTable('test_daily_rollups')
    .addColumn('test_id', 'text', (c) => c.notNull().references('tests.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('passes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('fails', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('test_daily_rollups_pk', ['test_id', 'environment_id', 'day'])
    .execute();

  // The history there is: finished pass/fail runs, subtest runs left out.
  const day =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? sql`cast(floor(finished_at / 86400) as integer)`
      : sql`cast(finished_at / 86400 as integer)`;
  await sql`
    insert into test_daily_rollups (test_id, environment_id, day, passes, fails)
    select test_id, environment_id, ${day},
      sum(case when result = 'pass' then 1 else 0 end),
      sum(case when result = 'fail' then 1 else 0 end)
    from test_runs
    where finished_at is not null and result in ('pass', 'fail') and source <> 'subtest'
    group by test_id, environment_id, ${day}
  `.execute(db);

  await db.schema
    .createTable('status_pages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_key', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('title', 'text', (c) => c.notNull())
    /** Only runs of this environment count; null: every environment. */
    .addColumn('environment_id', 'text')
    /** JSON `[{name, tests: [{test_id, name}]}]`. */
    .addColumn('groups', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .addColumn('updated_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('status_pages_bucket').on('status_pages').column('bucket_key').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('status_pages').execute();
  await db.schema.dropTable('test_daily_rollups').execute();
  await db.schema.alterTable('integrations').dropColumn('template').execute();
}
