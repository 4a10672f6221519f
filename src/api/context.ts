import type { ApiCompat } from '../config/config.js';
import type { SessionService } from '../auth/sessions.js';
import type { MetricsEndpoint } from '../observability/scrape.js';
import type { Services } from '../services/index.js';

/** What the health check reports of storage. */
export interface StoreHealth {
  dialect: 'sqlite' | 'postgres';
  /** The database client library the store runs on. */
  driver: 'node:sqlite' | 'better-sqlite3' | 'pg';
  /** Whether storage answered a trivial query. */
  reachable: boolean;
  /** Why a write that adds data cannot succeed now (null when it can, or when storage is unreachable). */
  writeBlocker: string | null;
}

/** The routes' view of storage: no queries, only whether it answers, whether it takes writes, and whether it changed. */
export interface StoragePort {
  ping(): Promise<StoreHealth>;
  writeBlocker(): Promise<string | null>;
  /**
   * A value that changes whenever rows of any of `tables` change, or undefined when there is none to
   * be had now: answers read from them after taking it may be served again while it is unchanged
   * (answer-cache.ts). The services name the tables their reads use.
   */
  generation(tables: readonly string[]): string | undefined;
}

/** What the routes need: the services, the base of every URL they print, and outbound settings. */
export interface ApiContext {
  services: Services;
  /** Storage as the health check and the full-disk guard see it (built from the store in main.ts). */
  storage: StoragePort;
  publicUrl: string;
  /** Base of the capture and gateway URLs: the traffic origin (TRAFFIC_PUBLIC_URL). */
  trafficUrl: string;
  /** The domain of host-form gateway URLs (GATEWAY_DOMAIN), if any. */
  gatewayDomain?: string | undefined;
  /** Response body bytes kept in a stored message (RESPONSE_BODY_LIMIT); remote agents are told it. */
  responseBodyLimit: number;
  /** Longest a whole test run may take, in seconds (RUN_TIMEOUT); remote agents are told it. */
  runTimeoutSeconds?: number;
  /** Time limit of a step's checks in a check thread, in ms (CHECK_TIMEOUT_MS); agents are told it. */
  checkTimeoutMs?: number;
  /** Browser sessions of the web pages (sign-in, account, OAuth consent). */
  sessions: SessionService;
  /** Whether the sign-up page accepts new accounts (SIGNUP). */
  signup: 'open' | 'closed';
  /** API_COMPAT: `runscope` answers as the original service where it and the specification differ. */
  apiCompat: ApiCompat;
  /** The built dashboard (default: the package's `dist/dashboard/`); tests point it elsewhere. */
  dashboardDir?: string;
  /**
   * Prometheus metrics: requests are counted on both origins; `route` serves GET /metrics on the
   * API origin (false when METRICS_PORT gives it a listener of its own). Absent: metrics are off.
   */
  metrics?: MetricsEndpoint & { route: boolean };
}
