import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_runs.js';
import * as m0003 from './0003_messages.js';

/** Every migration, in order. One set serves both dialects. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_runs': m0002,
  '0003_messages': m0003,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
