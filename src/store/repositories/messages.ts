import { CompiledQuery, PostgresAdapter, type SelectQueryBuilder, sql } from 'kysely';
import { filterColumns, likeEscape, type MessageFilters } from '../../domain/message-filters.js';
import type {
  ListedMessage,
  MessageRequest,
  MessageResponse,
  MessageView,
  NewMessage,
  StoredMessage,
} from '../../domain/messages.js';
import { isErrorExchange, summarize } from '../../domain/messages.js';
import type { Database, MessageRow } from '../database.js';
import { keepPrepared } from '../dialects/postgres.js';
import { preparedQuery } from '../prepared.js';
import type { Db, Executor } from '../store.js';

/** Every column of a message (the type makes this list complete), bound in this order by an insert. */
const MESSAGE_COLUMNS = Object.keys({
  id: true,
  bucket_key: true,
  source: true,
  unique_identifier: true,
  received_at: true,
  timestamp: true,
  is_error: true,
  share_token: true,
  shared_at: true,
  note: true,
  summary: true,
  request_meta: true,
  response_meta: true,
  request_body: true,
  response_body: true,
  request_method: true,
  request_host: true,
  request_path: true,
  request_target: true,
  response_status: true,
} satisfies Record<keyof MessageRow, true>) as (keyof MessageRow)[];

const insertMessage = preparedQuery<MessageRow, never>(MESSAGE_COLUMNS, (db, p) =>
  db.insertInto('messages').values(p),
);

/** Rows of the largest PostgreSQL insert kept prepared: a batch of the API (MAX_MESSAGES_PER_CALL). */
const KEPT_INSERT_ROWS = 50;
/** Rows per PostgreSQL insert statement: 20 parameters each, well under its 65,535. */
const POSTGRES_STATEMENT_ROWS = 1_000;
const postgresInserts = new Map<number, string>();

/**
 * The PostgreSQL text inserting `rows` messages, with the parameters of row r at r × 20 + 1 onwards
 * in the order of MESSAGE_COLUMNS. Written once per row count up to a batch's, and kept prepared:
 * building a 1,000-parameter insert through Kysely and having the server parse and plan it cost more
 * than the rows themselves.
 */
function postgresInsertText(rows: number): string {
  const kept = postgresInserts.get(rows);
  if (kept !== undefined) return kept;
  const width = MESSAGE_COLUMNS.length;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    tuples.push(`(${MESSAGE_COLUMNS.map((_, c) => `$${r * width + c + 1}`).join(', ')})`);
  }
  const text = `insert into "messages" (${MESSAGE_COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${tuples.join(', ')}`;
  if (rows <= KEPT_INSERT_ROWS) {
    postgresInserts.set(rows, text);
    keepPrepared(text);
  }
  return text;
}

async function insertOnPostgres(db: Executor, rows: readonly MessageRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += POSTGRES_STATEMENT_ROWS) {
    const chunk = rows.slice(from, from + POSTGRES_STATEMENT_ROWS);
    const values: unknown[] = [];
    for (const row of chunk) for (const column of MESSAGE_COLUMNS) values.push(row[column]);
    await db.executeQuery(CompiledQuery.raw(postgresInsertText(chunk.length), values));
  }
}

const countReceived = preparedQuery<{ bucketKey: string; added: number }, never>(
  ['bucketKey', 'added'],
  (db, p) =>
    db
      .insertInto('bucket_usage')
      .values({ bucket_key: p.bucketKey, messages_received: p.added })
      .onConflict((oc) =>
        oc
          .column('bucket_key')
          .doUpdateSet({ messages_received: sql`bucket_usage.messages_received + ${p.added}` }),
      ),
  { keepPreparedOnPostgres: true },
);

/** Columns of a list item: everything but the bodies. */
const LIST_COLUMNS = [
  'id',
  'bucket_key',
  'source',
  'unique_identifier',
  'received_at',
  'timestamp',
  'is_error',
  'share_token',
  'shared_at',
  'note',
  'summary',
] as const;

export type MessageListRow = Pick<MessageRow, (typeof LIST_COLUMNS)[number]>;

type RequestMeta = Omit<MessageRequest, 'body'>;
type ResponseMeta = Omit<MessageResponse, 'body'>;

function withoutBody<T extends { body: string }>(part: T): Omit<T, 'body'> {
  const { body: _body, ...rest } = part;
  return rest;
}

/** The row of a new message. */
export function messageRow(
  id: string,
  bucketKey: string,
  message: NewMessage,
  receivedAt: number,
): MessageRow {
  return {
    id,
    bucket_key: bucketKey,
    source: message.source,
    unique_identifier: message.unique_identifier,
    received_at: receivedAt,
    timestamp: message.request?.timestamp ?? message.response?.timestamp ?? receivedAt,
    is_error: isErrorExchange(message) ? 1 : 0,
    share_token: null,
    shared_at: null,
    note: message.note,
    summary: JSON.stringify(summarize(message)),
    request_meta: message.request ? JSON.stringify(withoutBody(message.request)) : null,
    response_meta: message.response ? JSON.stringify(withoutBody(message.response)) : null,
    request_body: message.request ? message.request.body : null,
    response_body: message.response ? message.response.body : null,
    ...filterColumns(message.request),
    response_status: message.response ? message.response.status : null,
  };
}

/** The query of a page of a view (messagesRepo.list), to run or to explain. */
export function listQuery(db: Executor, bucketKey: string, view: MessageView, page: MessagePage) {
  let query = filtered(
    db.selectFrom('messages').select(LIST_COLUMNS).where('bucket_key', '=', bucketKey),
    page.filters,
  );
  // Literals, not parameters: the partial indexes of these views (migration 0021) serve only a
  // plan that knows the value, which a plan kept for any value (PostgreSQL's generic plans) does not.
  if (view === 'errors') query = query.where('is_error', '=', sql.lit(1));
  if (view === 'captures') query = query.where('source', '=', sql.lit('capture'));
  if (view === 'shared') {
    query = query.where('shared_at', 'is not', null);
    if (page.since !== undefined) query = query.where('shared_at', '>', page.since);
    if (page.before !== undefined) query = query.where('shared_at', '<', page.before);
    return query.orderBy('shared_at', 'desc').orderBy('id', 'desc').limit(page.count);
  }
  if (page.since !== undefined) query = query.where('timestamp', '>', page.since);
  if (page.before !== undefined) query = query.where('timestamp', '<', page.before);
  return query.orderBy('timestamp', 'desc').orderBy('id', 'desc').limit(page.count);
}

/**
 * Adds the list filters to a query of messages. Without filters the query is left as it is, so an
 * unfiltered list keeps its index plan; with them the bucket's rows are walked newest first.
 */
function filtered<O>(
  query: SelectQueryBuilder<Database, 'messages', O>,
  filters: MessageFilters | undefined,
): SelectQueryBuilder<Database, 'messages', O> {
  if (!filters) return query;
  let q = query;
  if (filters.method !== undefined) q = q.where('request_method', '=', filters.method);
  if (filters.host !== undefined) q = q.where('request_host', '=', filters.host);
  if (filters.path !== undefined) {
    // A prefix compared by characters: LIKE would fold case on SQLite and not on PostgreSQL.
    const length = [...filters.path].length;
    q = q.where(sql<string>`substr(${sql.ref('request_path')}, 1, ${length})`, '=', filters.path);
  }
  const status = filters.status;
  if (status?.kind === 'none') q = q.where('response_status', 'is', null);
  if (status?.kind === 'code') q = q.where('response_status', '=', status.code);
  if (status?.kind === 'class')
    q = q.where('response_status', '>=', status.from).where('response_status', '<=', status.to);
  if (filters.q !== undefined) {
    const pattern = `%${likeEscape(filters.q)}%`;
    q = q.where(sql<boolean>`${sql.ref('request_target')} like ${pattern} escape '\\'`);
  }
  return q;
}

/** The fields every form of a message shares. */
function messageFields(row: MessageListRow): Omit<ListedMessage, 'request' | 'response'> {
  return {
    uuid: row.id,
    bucket_key: row.bucket_key,
    source: row.source as ListedMessage['source'],
    unique_identifier: row.unique_identifier,
    received_at: row.received_at,
    timestamp: row.timestamp,
    shared: row.share_token !== null,
    shared_at: row.shared_at,
    note: row.note,
  };
}

/** A list item from its row. */
export function toListedMessage(row: MessageListRow): ListedMessage {
  const { request, response } = JSON.parse(row.summary) as Pick<ListedMessage, 'request' | 'response'>;
  return { ...messageFields(row), request, response };
}

/** A stored message with its bodies. */
export function toMessage(row: MessageRow): StoredMessage {
  const request = row.request_meta
    ? ({ ...(JSON.parse(row.request_meta) as RequestMeta), body: row.request_body ?? '' } as MessageRequest)
    : null;
  const response = row.response_meta
    ? ({
        ...(JSON.parse(row.response_meta) as ResponseMeta),
        body: row.response_body ?? '',
      } as MessageResponse)
    : null;
  return { ...messageFields(row), request, response };
}

const byId = preparedQuery<{ bucketKey: string; id: string }, MessageRow>(['bucketKey', 'id'], (db, p) =>
  db.selectFrom('messages').selectAll().where('bucket_key', '=', p.bucketKey).where('id', '=', p.id),
);

export interface MessagePage {
  count: number;
  since?: number | undefined;
  before?: number | undefined;
  filters?: MessageFilters | undefined;
}

export const messagesRepo = {
  /**
   * On PostgreSQL one multi-row statement (one round trip), kept prepared; on SQLite, in the same
   * process, one statement compiled once and run per row, which costs less than building and
   * compiling a statement for each batch's number of rows.
   */
  async insert(db: Executor, rows: MessageRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await insertOnPostgres(db, rows);
      return;
    }
    for (const row of rows) await insertMessage(db, row);
  },

  async get(db: Executor, bucketKey: string, id: string): Promise<MessageRow | undefined> {
    return (await byId(db, { bucketKey, id }))[0];
  },

  /** The newest message with this identifier that still lacks the part being sent. */
  async pendingPair(
    db: Executor,
    bucketKey: string,
    identifier: string,
    lacking: 'request' | 'response',
  ): Promise<MessageRow | undefined> {
    return db
      .selectFrom('messages')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .where('unique_identifier', '=', identifier)
      .where(lacking === 'request' ? 'request_meta' : 'response_meta', 'is', null)
      .orderBy('received_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  },

  async replace(db: Executor, row: MessageRow): Promise<void> {
    const { id, bucket_key, ...rest } = row;
    await db
      .updateTable('messages')
      .set(rest)
      .where('id', '=', id)
      .where('bucket_key', '=', bucket_key)
      .execute();
  },

  /** A page of a view, newest first, without bodies. */
  async list(
    db: Executor,
    bucketKey: string,
    view: MessageView,
    page: MessagePage,
  ): Promise<MessageListRow[]> {
    return listQuery(db, bucketKey, view, page).execute();
  },

  /** Messages of a window, oldest first, with bodies (HAR export). */
  async window(
    db: Executor,
    bucketKey: string,
    window: {
      since?: number | undefined;
      before?: number | undefined;
      limit: number;
      filters?: MessageFilters | undefined;
    },
  ): Promise<MessageRow[]> {
    let query = filtered(
      db.selectFrom('messages').selectAll().where('bucket_key', '=', bucketKey),
      window.filters,
    );
    if (window.since !== undefined) query = query.where('timestamp', '>', window.since);
    if (window.before !== undefined) query = query.where('timestamp', '<', window.before);
    return query.orderBy('timestamp').orderBy('id').limit(window.limit).execute();
  },

  async delete(db: Executor, bucketKey: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('messages')
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** Deletes every message of a bucket, DELETE_CHUNK at a time (see deleteInChunks). */
  async clear(db: Db, bucketKey: string): Promise<number> {
    return deleteInChunks(db, (chunk) => chunk.where('bucket_key', '=', bucketKey));
  },

  async share(db: Executor, bucketKey: string, id: string, token: string, at: number): Promise<void> {
    await db
      .updateTable('messages')
      .set({ share_token: token, shared_at: at })
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .execute();
  },

  async unshare(db: Executor, bucketKey: string, id: string): Promise<void> {
    await db
      .updateTable('messages')
      .set({ share_token: null, shared_at: null })
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .execute();
  },

  byShareToken(db: Executor, token: string): Promise<MessageRow | undefined> {
    return db.selectFrom('messages').selectAll().where('share_token', '=', token).executeTakeFirst();
  },

  async countReceived(db: Executor, bucketKey: string, added: number): Promise<void> {
    if (added === 0) return;
    await countReceived(db, { bucketKey, added });
  },

  async usage(
    db: Executor,
    bucketKey: string,
  ): Promise<{ received: number; stored: number; shared: number }> {
    const usage = await db
      .selectFrom('bucket_usage')
      .select('messages_received')
      .where('bucket_key', '=', bucketKey)
      .executeTakeFirst();
    const counts = await db
      .selectFrom('messages')
      .select((eb) => [
        eb.fn.countAll<number>().as('stored'),
        eb.fn.count<number>('share_token').as('shared'),
      ])
      .where('bucket_key', '=', bucketKey)
      .executeTakeFirstOrThrow();
    return {
      received: Number(usage?.messages_received ?? 0),
      stored: Number(counts.stored),
      shared: Number(counts.shared),
    };
  },

  /** Deletes unshared messages older than each bucket's retention; answers how many went. */
  async applyRetention(db: Db, now: number): Promise<number> {
    const buckets = await db.selectFrom('buckets').select(['key', 'retention_days']).execute();
    let deleted = 0;
    for (const bucket of buckets) {
      const cutoff = now - bucket.retention_days * 86_400;
      deleted += await deleteInChunks(db, (chunk) =>
        chunk
          .where('bucket_key', '=', bucket.key)
          .where('received_at', '<', cutoff)
          .where('share_token', 'is', null),
      );
    }
    return deleted;
  },
};

/** Messages one delete statement removes at most. */
const DELETE_CHUNK = 500;

/**
 * Deletes the messages a filter picks in statements of DELETE_CHUNK rows, each its own transaction:
 * on a nearly full disk a big delete would need room in the write-ahead log for all of it at once,
 * while small ones reuse the room the previous ones freed.
 */
async function deleteInChunks(
  db: Db,
  filter: (
    query: SelectQueryBuilder<Database, 'messages', { id: string }>,
  ) => SelectQueryBuilder<Database, 'messages', { id: string }>,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const chunk = filter(db.selectFrom('messages').select('id')).limit(DELETE_CHUNK);
    const result = await db.deleteFrom('messages').where('id', 'in', chunk).executeTakeFirst();
    const count = Number(result.numDeletedRows);
    deleted += count;
    if (count < DELETE_CHUNK) return deleted;
  }
}
