import { type Compilable, CompiledQuery, PostgresAdapter } from 'kysely';
import type { ReadNow } from './dialects/sqlite.js';
import type { Db, Executor } from './store.js';

type Slot<P> = { param: keyof P } | { value: unknown };

const marker = (name: string) => `\u0001vigil-param:${name}\u0001`;

/**
 * A query on a hot path, built and compiled by Kysely once per dialect and then run with fresh
 * parameters. `build` receives a marker for each named parameter in place of its value; constants it
 * writes into the query stay constants. Only values may vary, never the query's shape.
 */
export function preparedQuery<P extends Record<string, unknown>, R>(
  names: readonly (keyof P & string)[],
  build: (db: Db, params: P) => Compilable<R>,
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
      entry = { sql: query.sql, slots };
      compiled.set(dialect, entry);
    }
    const parameters = entry.slots.map((slot) => ('param' in slot ? params[slot.param] : slot.value));
    const now = db.isTransaction ? undefined : readsNow.get(db)?.(entry.sql, parameters);
    if (now) return now as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(entry.sql, parameters));
    return result.rows;
  };
}

/** Stores whose reads may run at once when their connection is free (SQLite: `readNow`). */
const readsNow = new WeakMap<Executor, ReadNow>();

/** Lets the prepared queries on `db` (outside transactions) read through `readNow` when it can. */
export function allowReadNow(db: Db, readNow: ReadNow): void {
  readsNow.set(db, readNow);
}
