import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_runs.js';
import * as m0003 from './0003_messages.js';
import * as m0004 from './0004_sessions.js';
import * as m0005 from './0005_oauth_codes.js';
import * as m0006 from './0006_scale_out.js';
import * as m0007 from './0007_notifications.js';
import * as m0008 from './0008_agents.js';
import * as m0009 from './0009_dashboard_client.js';
import * as m0010 from './0010_dashboard.js';
import * as m0011 from './0011_bucket_auth_token.js';
import * as m0012 from './0012_reliability.js';
import * as m0013 from './0013_teams.js';
import * as m0014 from './0014_token_name_expiry.js';
import * as m0015 from './0015_captures_not_errors.js';
import * as m0016 from './0016_integration_notify_on.js';
import * as m0017 from './0017_alerting.js';
import * as m0018 from './0018_status_pages.js';
import * as m0019 from './0019_runs_recent_index.js';
import * as m0020 from './0020_metric_rollups.js';
import * as m0021 from './0021_partial_view_indexes.js';

/** Every migration, in order. One set serves both dialects. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_runs': m0002,
  '0003_messages': m0003,
  '0004_sessions': m0004,
  '0005_oauth_codes': m0005,
  '0006_scale_out': m0006,
  '0007_notifications': m0007,
  '0008_agents': m0008,
  '0009_dashboard_client': m0009,
  '0010_dashboard': m0010,
  '0011_bucket_auth_token': m0011,
  '0012_reliability': m0012,
  '0013_teams': m0013,
  '0014_token_name_expiry': m0014,
  '0015_captures_not_errors': m0015,
  '0016_integration_notify_on': m0016,
  '0017_alerting': m0017,
  '0018_status_pages': m0018,
  '0019_runs_recent_index': m0019,
  '0020_metric_rollups': m0020,
  '0021_partial_view_indexes': m0021,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
