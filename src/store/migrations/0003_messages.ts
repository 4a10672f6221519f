import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('unique_identifier', 'text')
    .addColumn('received_at', 'double precision', (c) => c.notNull())
    .addColumn('timestamp', 'double precision', (c) => c.notNull())
    .addColumn('is_error', 'integer', (c) => c.notNull())
    .addColumn('share_token', 'text', (c) => c.unique())
    .addColumn('shared_at', 'double precision')
    .addColumn('note', 'text')
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('request_meta', 'text')
    .addColumn('response_meta', 'text')
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  await db.schema
    .createIndex('messages_bucket_time')
    .on('messages')
    .columns(['bucket_key', 'timestamp', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_bucket_errors')
    .on('messages')
    .columns(['bucket_key', 'is_error', 'timestamp', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_bucket_source')
    .on('messages')
    .columns(['bucket_key', 'source', 'timestamp', 'id'])
    .execute();
  // Partial: most messages have no identifier and are never shared, and would otherwise fill these
  // indexes with entries in random order.
  await db.schema
    .createIndex('messages_bucket_identifier')
    .on('messages')
    .columns(['bucket_key', 'unique_identifier'])
    .where(sql.ref('unique_identifier'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('messages_bucket_received')
    .on('messages')
    .columns(['bucket_key', 'received_at'])
    .execute();
  await db.schema
    .createIndex('messages_bucket_shared')
    .on('messages')
    .columns(['bucket_key', 'shared_at', 'id'])
    .where(sql.ref('shared_at'), 'is not', null)
    .execute();

  await db.schema
    .createTable('bucket_usage')
    .addColumn('bucket_key', 'text', (c) => c.primaryKey().references('buckets.key').onDelete('cascade'))
    .addColumn('messages_received', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .alterTable('buckets')
    .addColumn('retention_days', 'integer', (c) => c.notNull().defaultTo(30))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('buckets').dropColumn('retention_days').execute();
  await db.schema.dropTable('bucket_usage').ifExists().execute();
  await db.schema.dropTable('messages').ifExists().execute();
}
