import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Remote agents (docs/agents.md): registered per team, authenticated by a token kept only as its
  // SHA-256 hash. A deleted agent keeps its row (runs name it) but its token stops working.
  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'double precision')
    .addColumn('version', 'text')
    .addColumn('hostname', 'text')
    .addColumn('deleted_at', 'double precision')
    .execute();
  await db.schema.createIndex('agents_team').on('agents').columns(['team_id', 'created_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('agents').ifExists().execute();
}
