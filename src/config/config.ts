import path from 'node:path';
import {
  SQLITE_DRIVERS,
  type SqliteDriverName,
  sqliteDriverUnavailable,
} from '../store/dialects/sqlite-drivers.js';

export type EgressPolicy = 'allow-all' | 'public-only';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const SQLITE_SYNCHRONOUS = ['NORMAL', 'FULL'] as const;
/** Where the specification and the original Runscope service answer differently, which one the API follows. */
export const API_COMPAT_MODES = ['spec', 'runscope'] as const;
export type ApiCompat = (typeof API_COMPAT_MODES)[number];
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  /** `postgres://…` selects PostgreSQL; undefined means the embedded SQLite store under dataDir. */
  databaseUrl: string | undefined;
  /**
   * DATABASE_PREPARED_STATEMENTS: PostgreSQL keeps the statements of every request and of message
   * ingest prepared per connection. False for a connection pooler in transaction mode that does not
   * carry prepared statements.
   */
  databasePreparedStatements: boolean;
  /** SQLite's `synchronous` pragma: NORMAL survives a process crash, FULL also a power cut. */
  sqliteSynchronous: SqliteSynchronous;
  /** SQLITE_DRIVER: the SQLite binding; undefined picks node:sqlite where this Node has it. */
  sqliteDriver: SqliteDriverName | undefined;
  smtpUrl: string | undefined;
  /** Which addresses test runs may reach (EGRESS_POLICY). */
  egressPolicy: EgressPolicy;
  /** Which addresses the gateway and replay may reach (GATEWAY_EGRESS_POLICY): public-only by default. */
  gatewayEgressPolicy: EgressPolicy;
  /** Port of the traffic listener: capture and gateway, on an origin of their own. */
  trafficPort: number;
  /** Base of every capture and gateway URL the service prints; another origin than publicUrl. */
  trafficPublicUrl: string;
  /** With it, `<host-with-dashes>-<bucket_key>.<domain>` forwards to the host (host-based gateway URLs). */
  gatewayDomain: string | undefined;
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
  /** Longest the checks of one step may take in a check thread (XPath, large bodies), in ms. */
  checkTimeoutMs: number;
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
  /** Seconds a stopping process lets its runs finish before handing the rest to other workers. */
  shutdownGraceSeconds: number;
  /** Bytes of disk the SQLite store keeps free: below it, writes that add data answer 507. */
  minFreeDisk: number;
  /** `runscope` answers as the original service where it and the specification differ (docs/runscope-compat.md). */
  apiCompat: ApiCompat;
  /** Whether the process serves Prometheus metrics (METRICS_ENABLED, on by default). */
  metricsEnabled: boolean;
  /** With it, a scrape must send `Authorization: Bearer <token>` (METRICS_TOKEN). */
  metricsToken: string | undefined;
  /** A port of its own for /metrics on HOST; 0 serves it on the API origin (METRICS_PORT). */
  metricsPort: number;
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

function egressSetting(env: NodeJS.ProcessEnv, name: string, fallback: EgressPolicy): EgressPolicy {
  const value = env[name] || fallback;
  if (value !== 'allow-all' && value !== 'public-only') {
    throw new ConfigError(`${name} must be allow-all or public-only, got "${value}"`);
  }
  return value;
}

/** A lower-case DNS name of at least two labels, without a trailing dot. */
const DOMAIN_PATTERN =
  /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The traffic origin: its port (the next one after PORT by default), its public base and the
 * optional domain of host-based gateway URLs. It must be another origin than the API's, so that
 * what an upstream answers can never act as the dashboard.
 */
function trafficSettings(
  env: NodeJS.ProcessEnv,
  port: number,
  publicUrl: string,
): Pick<Config, 'trafficPort' | 'trafficPublicUrl' | 'gatewayDomain'> {
  const trafficPort = intSetting(env, 'TRAFFIC_PORT', port === 0 ? 0 : port + 1, 0, 65535);
  if (trafficPort !== 0 && trafficPort === port) {
    throw new ConfigError(`TRAFFIC_PORT must differ from PORT (${port}): traffic has an origin of its own`);
  }
  const api = new URL(publicUrl);
  const fallback = env.PUBLIC_URL
    ? `${api.protocol}//${api.hostname.includes(':') ? `[${api.hostname}]` : api.hostname}:${trafficPort}`
    : `http://localhost:${trafficPort}`;
  const trafficPublicUrl = (env.TRAFFIC_PUBLIC_URL || fallback).replace(/\/+$/, '');
  let origin: string;
  try {
    const parsed = new URL(trafficPublicUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    origin = parsed.origin;
  } catch {
    throw new ConfigError(`TRAFFIC_PUBLIC_URL must be an http(s) URL, got "${trafficPublicUrl}"`);
  }
  // Two ephemeral ports (PORT=0, tests) are told apart only once listening.
  const ephemeral = trafficPort === 0 && !env.TRAFFIC_PUBLIC_URL;
  if (origin === api.origin && !ephemeral) {
    throw new ConfigError(
      `TRAFFIC_PUBLIC_URL must be another origin than PUBLIC_URL (${api.origin}): relayed answers may not share the dashboard's origin`,
    );
  }
  const gatewayDomain = env.GATEWAY_DOMAIN ? env.GATEWAY_DOMAIN.toLowerCase().replace(/\.$/, '') : undefined;
  if (gatewayDomain !== undefined && !DOMAIN_PATTERN.test(gatewayDomain)) {
    throw new ConfigError(
      `GATEWAY_DOMAIN must be a domain name such as gw.example.com, got "${env.GATEWAY_DOMAIN}"`,
    );
  }
  return { trafficPort, trafficPublicUrl, gatewayDomain };
}

const SIZE_UNITS: Record<string, number> = { '': 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

/** A byte size: a whole number of bytes, or with a unit (`100MB`, `2 GB`, `512KB`). */
function sizeSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+)\s*(KB|MB|GB)?$/i.exec(raw.trim());
  if (!match) throw new ConfigError(`${name} must be a size in bytes or with KB, MB or GB, got "${raw}"`);
  const value = Number(match[1]) * SIZE_UNITS[(match[2] ?? '').toUpperCase()]!;
  if (value > max) throw new ConfigError(`${name} must be at most ${max} bytes, got ${value}`);
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

/** METRICS_ENABLED, METRICS_TOKEN and METRICS_PORT: where /metrics is served, and to whom. */
function metricsSettings(
  env: NodeJS.ProcessEnv,
  ports: { port: number; trafficPort: number },
): Pick<Config, 'metricsEnabled' | 'metricsToken' | 'metricsPort'> {
  const enabled = (env.METRICS_ENABLED || 'true').toLowerCase();
  if (enabled !== 'true' && enabled !== 'false') {
    throw new ConfigError(`METRICS_ENABLED must be true or false, got "${env.METRICS_ENABLED}"`);
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN must be 16 to 512 printable characters without spaces');
  }
  const metricsPort = intSetting(env, 'METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== 0 && (metricsPort === ports.port || metricsPort === ports.trafficPort)) {
    throw new ConfigError(`METRICS_PORT must differ from PORT and TRAFFIC_PORT, got ${metricsPort}`);
  }
  return { metricsEnabled: enabled === 'true', metricsToken, metricsPort };
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

  const preparedStatements = (env.DATABASE_PREPARED_STATEMENTS || 'true').toLowerCase();
  if (preparedStatements !== 'true' && preparedStatements !== 'false') {
    throw new ConfigError(
      `DATABASE_PREPARED_STATEMENTS must be true or false, got "${env.DATABASE_PREPARED_STATEMENTS}"`,
    );
  }

  const synchronous = (env.SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase() as SqliteSynchronous;
  if (!SQLITE_SYNCHRONOUS.includes(synchronous)) {
    throw new ConfigError(
      `SQLITE_SYNCHRONOUS must be ${SQLITE_SYNCHRONOUS.join(' or ')}, got "${env.SQLITE_SYNCHRONOUS}"`,
    );
  }

  const sqliteDriver = (env.SQLITE_DRIVER || undefined) as SqliteDriverName | undefined;
  if (sqliteDriver !== undefined && !SQLITE_DRIVERS.includes(sqliteDriver)) {
    throw new ConfigError(`SQLITE_DRIVER must be ${SQLITE_DRIVERS.join(' or ')}, got "${env.SQLITE_DRIVER}"`);
  }
  const driverUnavailable = sqliteDriver && !databaseUrl ? sqliteDriverUnavailable(sqliteDriver) : null;
  if (driverUnavailable)
    throw new ConfigError(`SQLITE_DRIVER=${sqliteDriver} cannot run here: ${driverUnavailable}`);

  const egress = egressSetting(env, 'EGRESS_POLICY', 'allow-all');
  // The gateway and replay are reached with a bucket key alone, which sign-up hands anyone: they
  // may not reach the server's own network unless the operator says so.
  const gatewayEgress = egressSetting(env, 'GATEWAY_EGRESS_POLICY', 'public-only');
  const traffic = trafficSettings(env, port, publicUrl);

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

  const apiCompat = (env.API_COMPAT || 'spec') as ApiCompat;
  if (!API_COMPAT_MODES.includes(apiCompat)) {
    throw new ConfigError(`API_COMPAT must be ${API_COMPAT_MODES.join(' or ')}, got "${env.API_COMPAT}"`);
  }

  return {
    port,
    host,
    dataDir,
    publicUrl,
    databaseUrl,
    databasePreparedStatements: preparedStatements === 'true',
    sqliteSynchronous: synchronous,
    sqliteDriver,
    smtpUrl: env.SMTP_URL || undefined,
    egressPolicy: egress,
    gatewayEgressPolicy: gatewayEgress,
    ...traffic,
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
    checkTimeoutMs: intSetting(env, 'CHECK_TIMEOUT_MS', 1_000, 10, 60_000),
    resultsKeepFull: intSetting(env, 'RESULTS_KEEP_FULL', 100, 1, 100_000),
    resultsKeepSummary: intSetting(env, 'RESULTS_KEEP_SUMMARY', 1000, 1, 1_000_000),
    signup,
    notifyRetries: intSetting(env, 'NOTIFY_RETRIES', 5, 0, 20),
    notifyRetryDelay: intSetting(env, 'NOTIFY_RETRY_DELAY', 30, 1, 86_400),
    mailFrom,
    pagerdutyEventsUrl,
    shutdownGraceSeconds: intSetting(env, 'SHUTDOWN_GRACE', 30, 0, 3_600),
    minFreeDisk: sizeSetting(env, 'MIN_FREE_DISK', 100 * 1024 ** 2, 1024 ** 4),
    apiCompat,
    ...metricsSettings(env, { port, trafficPort: traffic.trafficPort }),
  };
}
