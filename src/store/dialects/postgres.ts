import { createRequire } from 'node:module';
import { PostgresDialect } from 'kysely';
import type * as Pg from 'pg';

// node-postgres is loaded when a PostgreSQL store is opened, so a process on SQLite never holds it.
const require = createRequire(import.meta.url);

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** PostgreSQL through a `pg` pool; int8 and numeric come back as numbers, as they do from SQLite. */
export function createPostgresDialect(connectionString: string): PostgresDialect {
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
  return new PostgresDialect({ pool });
}
