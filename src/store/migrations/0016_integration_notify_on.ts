import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // When a notifying integration hears of a run, with the values of an environment's e-mail
  // `notify_on`; null keeps the type's own rule (docs/notifications.md).
  await db.schema.alterTable('integrations').addColumn('notify_on', 'text').execute();
  await db.schema.alterTable('integrations').addColumn('notify_threshold', 'integer').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('integrations').dropColumn('notify_threshold').execute();
  await db.schema.alterTable('integrations').dropColumn('notify_on').execute();
}
