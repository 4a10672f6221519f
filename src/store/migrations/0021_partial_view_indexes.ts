import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // The errors and captures views read only their own rows: each index holds only those rows, so
  // a message that is neither (most of them) writes two index entries fewer. The lists name the
  // same conditions as literals (messagesRepo.list), which is what lets both databases use them.
  await db.schema
    .createIndex('messages_bucket_errors_only')
    .on('messages')
    .columns(['bucket_key', 'timestamp', 'id'])
    .where(sql.ref('is_error'), '=', sql.lit(1))
    .execute();
  await db.schema
    .createIndex('messages_bucket_captures_only')
    .on('messages')
    .columns(['bucket_key', 'timestamp', 'id'])
    .where(sql.ref('source'), '=', sql.lit('capture'))
    .execute();
  await db.schema.dropIndex('messages_bucket_errors').execute();
  await db.schema.dropIndex('messages_bucket_source').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
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
  await db.schema.dropIndex('messages_bucket_errors_only').execute();
  await db.schema.dropIndex('messages_bucket_captures_only').execute();
}
