import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_runs.js';
import * as m0003 from './0003_messages.js';
import * as m0004 from './0004_sessions.js';
import * as m0005 from './0005_oauth_codes.js';

/** Every migration, in order. One set serves both dialects. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_runs': m0002,
  '0003_messages': m0003,
  '0004_sessions': m0004,
  '0005_oauth_codes': m0005,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
