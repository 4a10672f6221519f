/**
 * The floors' SQLite: the same binding Vigil picks on this Node (SQLITE_DRIVER overrides it, as for
 * Vigil), with the few calls the floors make: one-row and all-row reads, writes, transactions.
 */
import { openSqlite, type SqliteDriverName } from '../src/store/dialects/sqlite-drivers.js';

export interface FloorStatement<P extends unknown[], R> {
  get(...parameters: P): R | undefined;
  all(...parameters: P): R[];
  run(...parameters: P): void;
}

export function openFloorDb(file: string, options: { readonly?: boolean } = {}) {
  const connection = openSqlite(
    file,
    (process.env.SQLITE_DRIVER || undefined) as SqliteDriverName | undefined,
  );
  if (options.readonly) connection.exec('PRAGMA query_only = ON');
  return {
    driver: connection.driver,
    exec: (sql: string) => connection.exec(sql),
    pragma: (setting: string) => connection.exec(`PRAGMA ${setting}`),
    prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): FloorStatement<P, R> {
      const statement = connection.prepare(sql);
      return {
        get: (...parameters) => statement.all(parameters)[0] as R | undefined,
        all: (...parameters) => statement.all(parameters) as R[],
        run: (...parameters) => void statement.run(parameters),
      };
    },
    /** fn wrapped in BEGIN … COMMIT, rolled back when it throws. */
    transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T {
      return (...args) => {
        connection.exec('BEGIN');
        try {
          const result = fn(...args);
          connection.exec('COMMIT');
          return result;
        } catch (error) {
          connection.exec('ROLLBACK');
          throw error;
        }
      };
    },
    close: () => connection.close(),
  };
}

export type FloorDb = ReturnType<typeof openFloorDb>;
