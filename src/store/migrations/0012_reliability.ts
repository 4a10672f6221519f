import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // A run handed over by a stopping worker (a deploy, a restart) is not a crash: such hand-overs are
  // counted apart from `executions`, and each interrupted attempt is kept (JSON array) until the run
  // finishes and records it beside the attempt that completed.
  await db.schema
    .alterTable('test_runs')
    .addColumn('handovers', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('test_runs').addColumn('interrupted_attempts', 'text').execute();

  // The first answer to a request sent with an Idempotency-Key, replayed to its retries for 24 h.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    // null while the first request is still being answered.
    .addColumn('status', 'integer')
    .addColumn('content_type', 'text')
    .addColumn('body', 'text')
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_created')
    .on('idempotency_keys')
    .column('created_at')
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').ifExists().execute();
  await db.schema.alterTable('test_runs').dropColumn('interrupted_attempts').execute();
  await db.schema.alterTable('test_runs').dropColumn('handovers').execute();
}
