import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { type PostgresCursor, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type * as Pg from 'pg';

// node-postgres is loaded when a PostgreSQL store is opened, so a process on SQLite never holds it.
const require = createRequire(import.meta.url);

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Statements the server keeps prepared, by their text: each connection parses and plans one of these
 * once and afterwards only binds and executes it, which saves both processes the work on every run.
 * Only the fixed texts of the hottest statements are named (see {@link keepPrepared}): message
 * ingest's and the reads every request makes, so the set stays small.
 */
const PREPARED_NAMES = new Map<string, string>();
/** More texts than any release names; a text past it simply runs unnamed. */
const MAX_PREPARED = 256;

/**
 * Asks the PostgreSQL stores to keep `text` prepared on each connection that runs it, under a name
 * derived from the text. For statements of a fixed text run often with varying values:
 * - the plan a prepared statement settles on may not depend on the values, so reads whose best plan
 *   depends on them should not be named;
 * - a statement whose result columns come from a `*` must not be named: once a migration adds a
 *   column, PostgreSQL refuses to run it on a connection that prepared it before ("cached plan must
 *   not change result type"), which a process still running the old release would hit.
 */
export function keepPrepared(text: string): void {
  if (PREPARED_NAMES.has(text) || PREPARED_NAMES.size >= MAX_PREPARED) return;
  PREPARED_NAMES.set(text, `vigil_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`);
}

/** Runs the texts {@link keepPrepared} names as named statements on this client. */
function namingClient(client: Pg.PoolClient): PostgresPoolClient {
  return {
    query(textOrCursor: string | PostgresCursor<unknown>, parameters?: ReadonlyArray<unknown>) {
      if (typeof textOrCursor !== 'string') return client.query(textOrCursor as never);
      const name = PREPARED_NAMES.get(textOrCursor);
      const values = parameters as unknown[];
      return name === undefined
        ? client.query(textOrCursor, values)
        : client.query({ name, text: textOrCursor, values });
    },
    release() {
      client.release();
    },
  } as unknown as PostgresPoolClient;
}

export interface PostgresOptions {
  /** Keep the statements {@link keepPrepared} names prepared per connection (default true). */
  preparedStatements?: boolean | undefined;
}

/** PostgreSQL through a `pg` pool; int8 and numeric come back as numbers, as they do from SQLite. */
export function createPostgresDialect(
  connectionString: string,
  options: PostgresOptions = {},
): PostgresDialect {
  const pg = require('pg') as typeof Pg;
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') => {
        if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads do not accept a union format
        return pg.types.getTypeParser(oid, format as any);
      },
    },
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  if (options.preparedStatements === false) return new PostgresDialect({ pool });
  // One wrapper per pooled client, so Kysely sees the same client each time it gets it back.
  const wrapped = new WeakMap<Pg.PoolClient, PostgresPoolClient>();
  const naming: PostgresPool = {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (!wrapper) wrapped.set(client, (wrapper = namingClient(client)));
      return wrapper;
    },
    end: () => pool.end(),
  };
  return new PostgresDialect({ pool: naming });
}
