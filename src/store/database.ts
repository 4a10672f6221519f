import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The Kysely database type. Both dialects use the same column types: text ids (UUIDs), integer
 * 0/1 booleans, float Unix seconds for timestamps and JSON documents kept as text, so one set of
 * migrations and one set of queries serve SQLite and PostgreSQL alike.
 */
export interface Database {
  accounts: AccountTable;
  teams: TeamTable;
  team_members: TeamMemberTable;
  buckets: BucketTable;
  client_applications: ClientApplicationTable;
  access_tokens: AccessTokenTable;
  oauth_codes: OAuthCodeTable;
  tests: TestTable;
  steps: StepTable;
  environments: EnvironmentTable;
  schedules: ScheduleTable;
  revisions: RevisionTable;
  test_runs: TestRunTable;
  test_run_steps: TestRunStepTable;
  jobs: JobTable;
  messages: MessageTable;
  bucket_usage: BucketUsageTable;
  web_sessions: WebSessionTable;
  workers: WorkerTable;
  agents: AgentTable;
  integrations: IntegrationTable;
  notifications: NotificationTable;
  alert_rounds: AlertRoundTable;
  maintenance_windows: MaintenanceWindowTable;
  notification_attempts: NotificationAttemptTable;
  outbox: OutboxTable;
  saved_views: SavedViewTable;
  idempotency_keys: IdempotencyKeyTable;
  team_roles: TeamRoleTable;
  team_invitations: TeamInvitationTable;
  test_daily_rollups: TestDailyRollupTable;
  test_metric_rollups: TestMetricRollupTable;
  status_pages: StatusPageTable;
}

export interface AccountTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  created_at: number;
}

export interface TeamTable {
  id: string;
  name: string;
  created_at: number;
}

export interface TeamMemberTable {
  team_id: string;
  account_id: string;
  role: 'owner' | 'member';
  created_at: number;
  /** The member's team role; null: every permission but manage_team. Owners have every one. */
  role_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A role of a team: the permissions of the members holding it (JSON array). */
export interface TeamRoleTable {
  id: string;
  team_id: string;
  name: string;
  permissions: string;
  created_at: number;
}
export type TeamRoleRow = Selectable<TeamRoleTable>;

/** An invitation to join a team, sent by e-mail; its token is kept only as a SHA-256 hash. */
export interface TeamInvitationTable {
  id: string;
  team_id: string;
  email: string;
  role_id: string | null;
  token_hash: string;
  invited_by: string;
  created_at: number;
  expires_at: number;
}
export type TeamInvitationRow = Selectable<TeamInvitationTable>;

export interface BucketTable {
  key: string;
  name: string;
  team_id: string;
  created_by: string;
  is_default: number;
  verify_ssl: number;
  trigger_id: string;
  /** Key for signing webhook payloads (DESIGN §5); must be usable, so it is not hashed. */
  signing_secret: string;
  created_at: number;
  /** Messages older than this many days are deleted (shared ones excepted). */
  retention_days: number;
  /** When set, capture and gateway requests must present it (Vigil-Bucket-Auth); null: the key suffices. */
  auth_token: string | null;
}

export interface ClientApplicationTable {
  client_id: string;
  account_id: string;
  name: string;
  website_url: string;
  callback_url: string;
  secret_hash: string;
  is_public: number;
  created_at: number;
  /** 'dashboard' for the hidden row of the dashboard's own client (one per account); null otherwise. */
  builtin: string | null;
}

export interface AccessTokenTable {
  id: string;
  token_hash: string;
  account_id: string;
  client_id: string | null;
  /** Space-separated scopes. */
  scopes: string;
  /** personal: the holder's own; oauth: granted to an application; dashboard: the web dashboard's. */
  kind: 'personal' | 'oauth' | 'dashboard';
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** Given when the account made the token on its token page; null for the others. */
  name: string | null;
  /** From this second on the token is refused; null: it lasts until revoked. */
  expires_at: number | null;
}

/** Authorization codes of the web application flow (spec 5): single use, valid 60 seconds. */
export interface OAuthCodeTable {
  /** SHA-256 of the code; the code itself is never stored. */
  code_hash: string;
  client_id: string;
  account_id: string;
  redirect_uri: string;
  /** Space-separated scopes the user granted. */
  scopes: string;
  /** PKCE S256 challenge, or null when the client sent none. */
  code_challenge: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The access token the code was exchanged for; revoked if the code is presented again. */
  token_id: string | null;
}

export interface TestTable {
  id: string;
  bucket_key: string;
  name: string;
  description: string | null;
  created_by: string;
  created_at: number;
  updated_at: number;
  default_environment_id: string;
  trigger_id: string;
}

export interface StepTable {
  id: string;
  test_id: string;
  /** The condition step that embeds this step, or null for a top-level step. */
  parent_id: string | null;
  position: number;
  step_type: string;
  /** The step's fields other than id, step_type and embedded steps, as JSON. */
  body: string;
}

export interface EnvironmentTable {
  id: string;
  bucket_key: string;
  test_id: string | null;
  name: string;
  parent_environment_id: string | null;
  /** The settings the environment sets itself, as JSON; unset fields are inherited from the parent. */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface ScheduleTable {
  id: string;
  test_id: string;
  environment_id: string;
  interval: string;
  note: string;
  created_at: number;
  /** The scheduler's next planned start (float seconds); null until the scheduler first sees it. */
  next_run_at: number | null;
}

export interface RevisionTable {
  id: string;
  item_type: 'radar_test' | 'environment';
  item_id: string;
  /** The test the item belongs to: the test itself, or a test environment's test; null for shared environments. */
  test_id: string | null;
  action: 'create' | 'update' | 'delete';
  timestamp: number;
  author_id: string;
  author_name: string;
  author_email: string;
  team_id: string;
  bucket_key: string;
  source: string;
  snapshot: string;
}

export interface TestRunTable {
  id: string;
  test_id: string;
  bucket_key: string;
  environment_id: string;
  environment_name: string;
  region: string;
  agent: string | null;
  source: string;
  /** queued | working | pass | fail | canceled */
  result: string;
  /** The run whose subtest step started this one. */
  parent_run_id: string | null;
  queued_at: number;
  started_at: number | null;
  finished_at: number | null;
  attempts: number;
  requests_executed: number;
  assertions_defined: number;
  assertions_passed: number;
  assertions_failed: number;
  scripts_defined: number;
  scripts_passed: number;
  scripts_failed: number;
  variables_defined: number;
  variables_passed: number;
  variables_failed: number;
  /** Sum of the response times of the run's requests, for metrics. */
  response_time_ms: number | null;
  error: string | null;
  /** Variables given by the trigger (JSON object), the run's initial variables on top of its environment. */
  trigger_variables: string;
  notification_url: string | null;
  /** The worker (or agent) executing the run; null while queued. */
  worker_id: string | null;
  /** How many times the run was handed to a worker (a run whose worker died is handed over once more). */
  executions: number;
  /** Hand-overs by workers that stopped cleanly; they do not count against the crash hand-over. */
  handovers: number;
  /** Attempts cut short by a stopping worker (JSON array of InterruptedAttempt), until the run finishes. */
  interrupted_attempts: string | null;
  /** The start its schedule planned, for scheduled runs. */
  planned_at: number | null;
  /** The schedule that started the run. */
  schedule_id: string | null;
  /** The remote agent the run is meant for, when the environment picks remote agents. */
  agent_id: string | null;
  /** The finished run's step summaries, variables and earlier attempt (JSON); null before it finishes. */
  summary: string | null;
  /** Shared by the runs one start fanned out to its regions and agents (null for older runs). */
  round_id: string | null;
  /** 1 when a maintenance window covered the run as it was queued: its notifications are muted. */
  in_maintenance: number;
}

export interface TestRunStepTable {
  run_id: string;
  position: number;
  step_id: string;
  /** The full step result with the request sent and the response received (JSON). */
  detail: string;
}

export interface JobTable {
  id: string;
  name: string;
  payload: string;
  region: string | null;
  /** ready | active */
  state: string;
  run_after: number;
  attempts: number;
  max_attempts: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
  retry_delay: number;
  retry_backoff: number;
}

export interface MessageTable {
  id: string;
  bucket_key: string;
  source: string;
  unique_identifier: string | null;
  received_at: number;
  /** The time lists order by: the request's timestamp, else the response's. */
  timestamp: number;
  /** 1 when the response status is ≥ 400 or there is no response. */
  is_error: number;
  /** The secret of the public URL while the message is shared. */
  share_token: string | null;
  shared_at: number | null;
  note: string | null;
  /** What a list shows of the exchange (JSON): no headers, parameters or bodies. */
  summary: string;
  /** The request without its body (JSON); null for a response-only message. */
  request_meta: string | null;
  response_meta: string | null;
  request_body: string | null;
  response_body: string | null;
  /** What the list filters compare (docs/capture.md): the request's method in upper case, */
  request_method: string | null;
  /** its host (with a non-default port) in lower case, */
  request_host: string | null;
  /** its path as sent, */
  request_path: string | null;
  /** host + path + query in lower case, */
  request_target: string | null;
  /** and the response's status; null when that half is missing. */
  response_status: number | null;
}

export interface BucketUsageTable {
  bucket_key: string;
  /** Every message ever saved in the bucket, deleted ones included. */
  messages_received: number;
}

/** A signed-in browser. The session id is a secret, so only its SHA-256 is kept. */
export interface WebSessionTable {
  id_hash: string;
  account_id: string;
  /** Sent back in every form of the session and compared on each POST. */
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export type MessageRow = Selectable<MessageTable>;
export type TestRunRow = Selectable<TestRunTable>;
export type JobRow = Selectable<JobTable>;
export type AccountRow = Selectable<AccountTable>;
export type BucketRow = Selectable<BucketTable>;
export type TestRow = Selectable<TestTable>;
export type StepRow = Selectable<StepTable>;
export type EnvironmentRow = Selectable<EnvironmentTable>;
export type ScheduleRow = Selectable<ScheduleTable>;
export type RevisionRow = Selectable<RevisionTable>;
export type AccessTokenRow = Selectable<AccessTokenTable>;
export type NewRevision = Insertable<RevisionTable>;
export type TestUpdate = Updateable<TestTable>;

export interface WorkerTable {
  id: string;
  kind: 'serve' | 'worker' | 'agent';
  /** JSON array of region codes; `["*"]` for a worker of every region. */
  regions: string;
  version: string;
  hostname: string;
  pid: number;
  concurrency: number;
  agent_id: string | null;
  started_at: number;
  last_seen_at: number;
}
export type WorkerRow = Selectable<WorkerTable>;

/** A remote agent of a team (docs/agents.md); its token is kept only as a SHA-256 hash. */
export interface AgentTable {
  id: string;
  team_id: string;
  name: string;
  /** The region label of the agent's runs. */
  region: string;
  token_hash: string;
  created_at: number;
  /** The account that registered it. */
  created_by: string;
  last_seen_at: number | null;
  version: string | null;
  hostname: string | null;
  /** Set when the agent is deleted: its token stops working, its row stays for the runs naming it. */
  deleted_at: number | null;
}
export type AgentRow = Selectable<AgentTable>;

/** A service a team notifies or drives (slack, pagerduty, webhook, partner-inspector). */
export interface IntegrationTable {
  id: string;
  team_id: string;
  integration_type: string;
  description: string;
  /** The type's settings as JSON, secrets included (URLs, keys); never shown whole. */
  config: string;
  created_at: number;
  created_by: string;
  /** A value of NOTIFY_ON, or null for the type's own rule (webhook: every run; Slack, PagerDuty: fails and recoveries). */
  notify_on: string | null;
  /** With notify_on `threshold`: the streak length (null counts as 1). */
  notify_threshold: number | null;
  /** The integration's own message, JSON `{subject?, body}`; null: the type's standard message. */
  template: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Pass and fail counts of a test's runs in one environment on one UTC day (Unix days). */
export interface TestDailyRollupTable {
  test_id: string;
  environment_id: string;
  day: number;
  passes: number;
  fails: number;
}
export type TestDailyRollupRow = Selectable<TestDailyRollupTable>;

/**
 * Finished pass/fail runs of a test in one hour or day (`grain` seconds; `slot` = Unix seconds ÷
 * grain), environment, region and response-time bucket (domain/metrics `latencyBucket`).
 */
export interface TestMetricRollupTable {
  test_id: string;
  grain: number;
  slot: number;
  environment_id: string;
  region: string;
  bucket: number;
  runs: number;
  passes: number;
  response_time_sum: number;
}

/** A bucket's public status page: tests under display names, grouped (`groups` is JSON). */
export interface StatusPageTable {
  id: string;
  bucket_key: string;
  slug: string;
  title: string;
  environment_id: string | null;
  groups: string;
  created_by: string;
  created_at: number;
  updated_at: number;
}
export type StatusPageRow = Selectable<StatusPageTable>;
export type IntegrationRow = Selectable<IntegrationTable>;

/** One message a finished run sends (DESIGN §5). */
/** A maintenance window of a bucket, or of one of its tests (docs/alerting.md). */
export interface MaintenanceWindowTable {
  id: string;
  bucket_key: string;
  /** null: every test of the bucket. */
  test_id: string | null;
  /** pause | mute */
  mode: string;
  note: string;
  /** One-off windows: Unix seconds; null for weekly ones. */
  starts_at: number | null;
  ends_at: number | null;
  /** Weekly windows: JSON {days, start_time, duration_minutes, time_zone}; null for one-off ones. */
  weekly: string | null;
  created_at: number;
}

/** A round decided under an alert quorum; the primary key makes the decision happen once. */
export interface AlertRoundTable {
  round_id: string;
  /** The run the round's notifications are attached to (the first failed one, else the first). */
  run_id: string;
  quorum: number;
  /** pass | fail: fail when at least `quorum` regions failed. */
  result: string;
  /** JSON arrays of region labels (agent names for remote agents). */
  failed_regions: string;
  passed_regions: string;
  decided_at: number;
}

export interface NotificationTable {
  id: string;
  run_id: string;
  /** webhook | email | slack | pagerduty | integration-webhook */
  channel: string;
  /** The URL (webhook), the addresses (email, comma separated) or the integration id. */
  target: string;
  /** pending | delivered | failed */
  status: string;
  attempts: number;
  created_at: number;
  delivered_at: number | null;
  last_error: string | null;
  /** Exactly what is sent: the JSON body, or the mail as JSON {from, to, subject, text, html}. */
  body: string;
}
export type NotificationRow = Selectable<NotificationTable>;
export type AlertRoundRow = Selectable<AlertRoundTable>;
export type MaintenanceWindowRow = Selectable<MaintenanceWindowTable>;

export interface NotificationAttemptTable {
  notification_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}
export type NotificationAttemptRow = Selectable<NotificationAttemptTable>;

/** Mails kept instead of sent, when no SMTP_URL is set. */
export interface OutboxTable {
  id: string;
  team_id: string;
  run_id: string | null;
  /** JSON array of {email, name}. */
  recipients: string;
  subject: string;
  text: string;
  html: string;
  created_at: number;
}
export type OutboxRow = Selectable<OutboxTable>;

/** A saved stream view of the dashboard: a named set of list filters of a bucket (docs/capture.md). */
export interface SavedViewTable {
  id: string;
  bucket_key: string;
  name: string;
  /** The name trimmed and in lower case: names are unique per bucket, case-insensitively. */
  name_key: string;
  /** messages | errors | shared | captures */
  stream: string;
  /** The filters as JSON. */
  filters: string;
  created_by: string;
  created_at: number;
  updated_at: number;
}
export type SavedViewRow = Selectable<SavedViewTable>;

/** The first answer to a request sent with an `Idempotency-Key`, replayed to its retries for 24 h. */
export interface IdempotencyKeyTable {
  /** What the key is unique within: the caller and the request path. */
  scope: string;
  key: string;
  /** A hash of the method, path and body, so a key reused for another request is refused. */
  fingerprint: string;
  created_at: number;
  /** null while the first request is still being answered. */
  status: number | null;
  content_type: string | null;
  body: string | null;
}
export type IdempotencyKeyRow = Selectable<IdempotencyKeyTable>;
