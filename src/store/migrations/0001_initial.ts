import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'account_id'])
    .execute();
  await db.schema.createIndex('team_members_account').on('team_members').column('account_id').execute();

  await db.schema
    .createTable('buckets')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('verify_ssl', 'integer', (c) => c.notNull())
    .addColumn('trigger_id', 'text', (c) => c.notNull().unique())
    .addColumn('signing_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('buckets_team').on('buckets').column('team_id').execute();

  await db.schema
    .createTable('client_applications')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('website_url', 'text', (c) => c.notNull())
    .addColumn('callback_url', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('client_applications_account')
    .on('client_applications')
    .column('account_id')
    .execute();

  await db.schema
    .createTable('access_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.references('client_applications.client_id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('access_tokens_account').on('access_tokens').column('account_id').execute();

  await db.schema
    .createTable('tests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'double precision', (c) => c.notNull())
    .addColumn('default_environment_id', 'text', (c) => c.notNull())
    .addColumn('trigger_id', 'text', (c) => c.notNull().unique())
    .execute();
  await db.schema.createIndex('tests_bucket').on('tests').columns(['bucket_key', 'created_at']).execute();

  await db.schema
    .createTable('steps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('test_id', 'text', (c) => c.notNull().references('tests.id').onDelete('cascade'))
    .addColumn('parent_id', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('step_type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('steps_test').on('steps').columns(['test_id', 'position']).execute();

  await db.schema
    .createTable('environments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('test_id', 'text', (c) => c.references('tests.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent_environment_id', 'text')
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .addColumn('updated_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('environments_test').on('environments').column('test_id').execute();
  await db.schema
    .createIndex('environments_bucket')
    .on('environments')
    .columns(['bucket_key', 'test_id'])
    .execute();

  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('test_id', 'text', (c) => c.notNull().references('tests.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('interval', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schedules_test').on('schedules').column('test_id').execute();
  await db.schema.createIndex('schedules_environment').on('schedules').column('environment_id').execute();

  await db.schema
    .createTable('revisions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('item_type', 'text', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('test_id', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'double precision', (c) => c.notNull())
    .addColumn('author_id', 'text', (c) => c.notNull())
    .addColumn('author_name', 'text', (c) => c.notNull())
    .addColumn('author_email', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('revisions_test').on('revisions').columns(['test_id', 'timestamp']).execute();
  await db.schema.createIndex('revisions_item').on('revisions').columns(['item_id', 'timestamp']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'revisions',
    'schedules',
    'environments',
    'steps',
    'tests',
    'access_tokens',
    'client_applications',
    'buckets',
    'team_members',
    'teams',
    'accounts',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
