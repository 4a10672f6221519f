import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // A bucket may require a token of its own on its capture and gateway URLs (docs/security.md):
  // null means the bucket key alone is enough, as before.
  await db.schema.alterTable('buckets').addColumn('auth_token', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('buckets').dropColumn('auth_token').execute();
}
