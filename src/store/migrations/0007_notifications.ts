import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Services a team notifies or drives (Slack, PagerDuty, a signed webhook, the browser-test partner).
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('integration_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('integrations_team')
    .on('integrations')
    .columns(['team_id', 'created_at'])
    .execute();

  // One row per message a finished run sends (DESIGN §5); unique so a repeated notify-run job adds none.
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('test_runs.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .addColumn('delivered_at', 'double precision')
    .addColumn('last_error', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addUniqueConstraint('notifications_run_channel_target', ['run_id', 'channel', 'target'])
    .execute();

  await db.schema
    .createTable('notification_attempts')
    .addColumn('notification_id', 'text', (c) =>
      c.notNull().references('notifications.id').onDelete('cascade'),
    )
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'double precision', (c) => c.notNull())
    .addColumn('duration_ms', 'double precision', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('notification_attempts_pk', ['notification_id', 'attempt'])
    .execute();

  // Mails kept instead of sent when no SMTP_URL is set.
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('run_id', 'text')
    .addColumn('recipients', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('outbox_team_created')
    .on('outbox')
    .columns(['team_id', 'created_at'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('outbox').ifExists().execute();
  await db.schema.dropTable('notification_attempts').ifExists().execute();
  await db.schema.dropTable('notifications').ifExists().execute();
  await db.schema.dropTable('integrations').ifExists().execute();
}
