import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // The dashboard's own OAuth client (docs/oauth.md): one hidden application row per account, marked
  // `builtin = 'dashboard'`, so its codes and tokens have a client row to point to. The unique index
  // lets two first sign-ins at once insert it without a duplicate (NULLs, i.e. ordinary
  // applications, never collide).
  await db.schema.alterTable('client_applications').addColumn('builtin', 'text').execute();
  await db.schema
    .createIndex('client_applications_builtin')
    .on('client_applications')
    .columns(['account_id', 'builtin'])
    .unique()
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('client_applications_builtin').ifExists().execute();
  await db.schema.alterTable('client_applications').dropColumn('builtin').execute();
}
