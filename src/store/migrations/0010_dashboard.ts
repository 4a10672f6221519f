import { type Kysely, PostgresAdapter, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // Saved stream views of the dashboard (docs/capture.md): a named set of list filters per bucket.
  await db.schema
    .createTable('saved_views')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_key', 'text', (c) => c.notNull().references('buckets.key').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('filters', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
    .addColumn('updated_at', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('saved_views_bucket_name')
    .on('saved_views')
    .columns(['bucket_key', 'name_key'])
    .unique()
    .execute();

  // What the list filters compare (docs/capture.md), kept beside the JSON summary so that a filter is
  // a plain column comparison. No index: an unfiltered list keeps its plan, a filtered one walks the
  // bucket's time index and stops after a page of matches.
  await db.schema.alterTable('messages').addColumn('request_method', 'text').execute();
  await db.schema.alterTable('messages').addColumn('request_host', 'text').execute();
  await db.schema.alterTable('messages').addColumn('request_path', 'text').execute();
  await db.schema.alterTable('messages').addColumn('request_target', 'text').execute();
  await db.schema.alterTable('messages').addColumn('response_status', 'integer').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      update messages set
        request_method = upper(summary::json #>> '{request,method}'),
        request_host = lower(summary::json #>> '{request,host}'),
        request_path = summary::json #>> '{request,path}',
        request_target = lower(substr(summary::json #>> '{request,url}', strpos(summary::json #>> '{request,url}', '://') + 3)),
        response_status = (summary::json #>> '{response,status}')::integer
    `.execute(db);
  } else {
    await sql`
      update messages set
        request_method = upper(json_extract(summary, '$.request.method')),
        request_host = lower(json_extract(summary, '$.request.host')),
        request_path = json_extract(summary, '$.request.path'),
        request_target = lower(substr(json_extract(summary, '$.request.url'), instr(json_extract(summary, '$.request.url'), '://') + 3)),
        response_status = json_extract(summary, '$.response.status')
    `.execute(db);
    // SQLite's lower() folds ASCII only; rows with other letters are lowered as new messages are.
    const NON_ASCII = '*[^\u0001-\u007f]*';
    const rows = await sql<{ id: string; host: string | null; url: string | null }>`
      select id, json_extract(summary, '$.request.host') as host, json_extract(summary, '$.request.url') as url
      from messages where request_host glob ${NON_ASCII} or request_target glob ${NON_ASCII}
    `.execute(db);
    for (const row of rows.rows) {
      const url = row.url ?? '';
      const scheme = url.indexOf('://');
      await db
        .updateTable('messages')
        .set({
          request_host: row.host === null ? null : row.host.toLowerCase(),
          request_target: (scheme >= 0 ? url.slice(scheme + 3) : url).toLowerCase(),
        })
        .where('id', '=', row.id)
        .execute();
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [
    'request_method',
    'request_host',
    'request_path',
    'request_target',
    'response_status',
  ])
    await db.schema.alterTable('messages').dropColumn(column).execute();
  await db.schema.dropTable('saved_views').ifExists().execute();
}
