import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Tokens made on the account's token page carry a name and may expire; null: no name, never.
  await db.schema.alterTable('access_tokens').addColumn('name', 'text').execute();
  await db.schema.alterTable('access_tokens').addColumn('expires_at', 'bigint').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('access_tokens').dropColumn('expires_at').execute();
  await db.schema.alterTable('access_tokens').dropColumn('name').execute();
}
