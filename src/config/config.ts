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

  const signup = env.SIGNUP || 'open';
  if (signup !== 'open' && signup !== 'closed') {
    throw new ConfigError(`SIGNUP must be open or closed, got "${signup}"`);
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
    region: regionSetting(env),
    workerConcurrency: intSetting(env, 'WORKER_CONCURRENCY', 10, 1, 1000),
    responseBodyLimit: intSetting(env, 'RESPONSE_BODY_LIMIT', 1024 * 1024, 1024, 256 * 1024 * 1024),
    runTimeoutSeconds: intSetting(env, 'RUN_TIMEOUT', 900, 1, 86_400),
    resultsKeepFull: intSetting(env, 'RESULTS_KEEP_FULL', 100, 1, 100_000),
    resultsKeepSummary: intSetting(env, 'RESULTS_KEEP_SUMMARY', 1000, 1, 1_000_000),
    signup,
  };
}
