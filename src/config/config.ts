import path from 'node:path';

export type EgressPolicy = 'allow-all' | 'public-only';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const SQLITE_SYNCHRONOUS = ['NORMAL', 'FULL'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  /** `postgres://…` selects PostgreSQL; undefined means the embedded SQLite store under dataDir. */
  databaseUrl: string | undefined;
  /** SQLite's `synchronous` pragma: NORMAL survives a process crash, FULL also a power cut. */
  sqliteSynchronous: SqliteSynchronous;
  smtpUrl: string | undefined;
  egressPolicy: EgressPolicy;
  logLevel: LogLevel;
  /** Largest request body the API accepts, in bytes. */
  bodyLimit: number;
  /** Region this process's worker serves, and the region of runs whose environment names none. */
  region: string;
  /** Test runs one worker executes at the same time. */
  workerConcurrency: number;
  /** Regions the in-process worker of `vigil serve` serves; null for every region (WORKER_REGIONS=*). */
  workerRegions: string[] | null;
  /** A queued run that no live worker of its region could take for this long ends canceled (s). */
  queueTimeoutSeconds: number;
  /** A worker, serve process or agent silent for this long counts as gone (s); its runs are handed over. */
  workerDeadAfterSeconds: number;
  /** Divides every schedule interval; tests only (NODE_ENV=test), 1 otherwise. */
  scheduleTimeScale: number;
  /** Response bytes a test step reads and keeps; beyond it the body is cut (and the cut noted). */
  responseBodyLimit: number;
  /** Longest a whole test run may take, in seconds. */
  runTimeoutSeconds: number;
  /** Newest passing and newest failing runs per test kept with full step details. */
  resultsKeepFull: number;
  /** Newest runs per test kept at all (older ones are deleted). */
  resultsKeepSummary: number;
  /** Whether the web sign-up page accepts new accounts. */
  signup: 'open' | 'closed';
  /** Retries of a failed notification delivery (webhook, e-mail, Slack, PagerDuty). */
  notifyRetries: number;
  /** Seconds before the first retry of a notification; doubled for each further one. */
  notifyRetryDelay: number;
  /** Sender of notification e-mails. */
  mailFrom: string;
  /** Where PagerDuty integrations send Events API v2 events. */
  pagerdutyEventsUrl: string;
}

export class ConfigError extends Error {}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function intSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

function regionSetting(env: NodeJS.ProcessEnv): string {
  const region = env.REGION || 'local';
  if (!REGION_PATTERN.test(region)) {
    throw new ConfigError(`REGION must be lowercase letters, digits and dashes, got "${region}"`);
  }
  return region;
}

/** Reads and validates the settings of DESIGN §1 from the environment. Throws ConfigError on bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intSetting(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const dataDir = path.resolve(env.DATA_DIR || './data');

  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    const parsed = new URL(publicUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
  }

  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }

  const synchronous = (env.SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase() as SqliteSynchronous;
  if (!SQLITE_SYNCHRONOUS.includes(synchronous)) {
    throw new ConfigError(
      `SQLITE_SYNCHRONOUS must be ${SQLITE_SYNCHRONOUS.join(' or ')}, got "${env.SQLITE_SYNCHRONOUS}"`,
    );
  }

  const egress = env.EGRESS_POLICY || 'allow-all';
  if (egress !== 'allow-all' && egress !== 'public-only') {
    throw new ConfigError(`EGRESS_POLICY must be allow-all or public-only, got "${egress}"`);
  }

  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const region = regionSetting(env);
  let workerRegions: string[] | null = [region];
  if (env.WORKER_REGIONS === '*') workerRegions = null;
  else if (env.WORKER_REGIONS) {
    workerRegions = env.WORKER_REGIONS.split(',').map((r) => r.trim());
    const bad = workerRegions.find((r) => !REGION_PATTERN.test(r));
    if (bad !== undefined)
      throw new ConfigError(`WORKER_REGIONS must be * or region codes separated by commas, got "${bad}"`);
  }

  let scheduleTimeScale = 1;
  if (env.SCHEDULE_TIME_SCALE !== undefined && env.SCHEDULE_TIME_SCALE !== '') {
    if (env.NODE_ENV !== 'test') {
      throw new ConfigError(
        'SCHEDULE_TIME_SCALE shortens schedules for tests and is refused unless NODE_ENV=test',
      );
    }
    scheduleTimeScale = intSetting(env, 'SCHEDULE_TIME_SCALE', 1, 1, 3_600);
  }

  const signup = env.SIGNUP || 'open';
  if (signup !== 'open' && signup !== 'closed') {
    throw new ConfigError(`SIGNUP must be open or closed, got "${signup}"`);
  }

  const pagerdutyEventsUrl = env.PAGERDUTY_EVENTS_URL || 'https://events.pagerduty.com/v2/enqueue';
  if (!/^https?:\/\/\S+$/i.test(pagerdutyEventsUrl)) {
    throw new ConfigError(`PAGERDUTY_EVENTS_URL must be an http(s) URL, got "${pagerdutyEventsUrl}"`);
  }
  const mailFrom = env.MAIL_FROM || 'Vigil <vigil@localhost>';
  if (!/^[^\r\n]*@[^\r\n]*$/.test(mailFrom)) {
    throw new ConfigError(
      `MAIL_FROM must be an e-mail address (optionally "Name <address>"), got "${mailFrom}"`,
    );
  }

  return {
    port,
    host,
    dataDir,
    publicUrl,
    databaseUrl,
    sqliteSynchronous: synchronous,
    smtpUrl: env.SMTP_URL || undefined,
    egressPolicy: egress,
    logLevel,
    bodyLimit: intSetting(env, 'BODY_LIMIT', 1024 * 1024, 1024, 256 * 1024 * 1024),
    region,
    workerConcurrency: intSetting(env, 'WORKER_CONCURRENCY', 10, 1, 1000),
    workerRegions,
    queueTimeoutSeconds: intSetting(env, 'QUEUE_TIMEOUT', 120, 1, 86_400),
    workerDeadAfterSeconds: intSetting(env, 'WORKER_DEAD_AFTER', 20, 2, 3_600),
    scheduleTimeScale,
    responseBodyLimit: intSetting(env, 'RESPONSE_BODY_LIMIT', 1024 * 1024, 1024, 256 * 1024 * 1024),
    runTimeoutSeconds: intSetting(env, 'RUN_TIMEOUT', 900, 1, 86_400),
    resultsKeepFull: intSetting(env, 'RESULTS_KEEP_FULL', 100, 1, 100_000),
    resultsKeepSummary: intSetting(env, 'RESULTS_KEEP_SUMMARY', 1000, 1, 1_000_000),
    signup,
    notifyRetries: intSetting(env, 'NOTIFY_RETRIES', 5, 0, 20),
    notifyRetryDelay: intSetting(env, 'NOTIFY_RETRY_DELAY', 30, 1, 86_400),
    mailFrom,
    pagerdutyEventsUrl,
  };
}
