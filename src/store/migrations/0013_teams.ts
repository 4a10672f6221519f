import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Roles of a team (docs/teams.md): a name and the permissions a member holding it has.
  await db.schema
    .createTable('team_roles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('team_roles_team').on('team_roles').column('team_id').execute();

  // A member's role; null: every permission but managing the team (owners have every one).
  await db.schema
    .alterTable('team_members')
    .addColumn('role_id', 'text', (c) => c.references('team_roles.id').onDelete('set null'))
    .execute();

  // Invitations by e-mail: the link carries a random token, kept only as its SHA-256 hash.
  await db.schema
    .createTable('team_invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role_id', 'text', (c) => c.references('team_roles.id').onDelete('set null'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('team_invitations_team').on('team_invitations').column('team_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('team_invitations').execute();
  await db.schema.alterTable('team_members').dropColumn('role_id').execute();
  await db.schema.dropTable('team_roles').execute();
}
