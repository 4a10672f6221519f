import { type Compilable, CompiledQuery, type DialectAdapter, PostgresAdapter } from 'kysely';
import { keepPrepared } from './dialects/postgres.js';
import type { ReadNow } from './dialects/sqlite.js';
import type { Db, Executor } from './store.js';

export type Slot<P> = { param: keyof P } | { value: unknown };

const marker = (name: string) => `\u0001vigil-param:${name}\u0001`;

/**
 * A query on a hot path, built and compiled by Kysely once per dialect and then run with fresh
 * parameters. `build` receives a marker for each named parameter in place of its value; constants it
 * writes into the query stay constants. Only values may vary, never the query's shape.
 *
 * With `keepPreparedOnPostgres`, PostgreSQL keeps the statement prepared on each connection
 * (`keepPrepared`): for hot statements whose best plan does not depend on the values bound, and
 * whose result columns are named (never `*`).
 */
export function preparedQuery<P extends Record<string, unknown>, R>(
  names: readonly (keyof P & string)[],
  build: (db: Db, params: P) => Compilable<R>,
  options: { keepPreparedOnPostgres?: boolean } = {},
): (db: Executor, params: P) => Promise<R[]> {
  const compiled = new Map<'sqlite' | 'postgres', { sql: string; slots: Slot<P>[] }>();
  return async (db, params) => {
    const dialect = db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
    let entry = compiled.get(dialect);
    if (!entry) {
      const markers = Object.fromEntries(names.map((name) => [name, marker(name)])) as unknown as P;
      const query = build(db as Db, markers).compile();
      const slots = query.parameters.map((value): Slot<P> => {
        const param = names.find((name) => markers[name] === value);
        return param ? { param } : { value };
      });
      entry = dialect === 'sqlite' ? sqliteText(query.sql, slots) : { sql: query.sql, slots };
      if (dialect === 'postgres' && options.keepPreparedOnPostgres === true) keepPrepared(entry.sql);
      compiled.set(dialect, entry);
    }
    const parameters = entry.slots.map((slot) => ('param' in slot ? params[slot.param] : slot.value));
    const runNow = runsNow.get(db.getExecutor().adapter);
    const now = db.isTransaction
      ? runNow?.runHeld(entry.sql, parameters)
      : runNow?.readNow(entry.sql, parameters);
    if (now) return now as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(entry.sql, parameters));
    return result.rows;
  };
}

/**
 * The SQLite text of a prepared query. SQLite (3.47 and later) plans a bound `LIMIT ?` or
 * `OFFSET ?` from the value bound to it and marks the statement to be compiled again whenever that
 * parameter is bound anew, which is on every run: a `limit(1)` made a one-row read of an index cost
 * four times what it costs with `LIMIT 1` written out. So integer constants are written into the
 * text (they come from the query's own code, never from a caller), and a limit or offset that is a
 * parameter is bound inside an expression, `(? + 0)`, which SQLite does not plan from. The `?`
 * placeholders are matched to their values in order, skipping quoted text.
 */
export function sqliteText<P>(sql: string, slots: readonly Slot<P>[]): { sql: string; slots: Slot<P>[] } {
  let out = '';
  let from = 0;
  let index = 0;
  const kept: Slot<P>[] = [];
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      const end = sql.indexOf(c, i + 1);
      // A doubled quote inside quoted text ends it and starts it again: the scan stays in step.
      i = end < 0 ? sql.length : end;
    } else if (c === '?') {
      const slot = slots[index++];
      if (!slot) continue;
      if ('value' in slot && Number.isSafeInteger(slot.value)) {
        out += sql.slice(from, i) + String(slot.value);
        from = i + 1;
        continue;
      }
      kept.push(slot);
      if (LIMIT_BEFORE.test(sql.slice(Math.max(0, i - 8), i))) {
        out += sql.slice(from, i) + '(? + 0)';
        from = i + 1;
      }
    }
  }
  // A count that does not match means the text was not understood: keep every value bound.
  if (index !== slots.length) return { sql, slots: [...slots] };
  return { sql: out + sql.slice(from), slots: kept };
}

/** The end of the text before a limit's or an offset's placeholder. */
const LIMIT_BEFORE = /\b(limit|offset) $/i;

/**
 * SQLite stores (by their Kysely adapter, which a store and its transactions share) whose prepared
 * queries may run at once: reads outside a transaction when the connection is free (`readNow`), and
 * a transaction's own queries on the connection it holds (`runHeld`).
 */
const runsNow = new WeakMap<DialectAdapter, { readNow: ReadNow; runHeld: ReadNow }>();

/** Lets the prepared queries on `db` and its transactions run at once when they can (see runsNow). */
export function allowRunNow(db: Db, runNow: { readNow: ReadNow; runHeld: ReadNow }): void {
  runsNow.set(db.getExecutor().adapter, runNow);
}
