import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { createServer, type Server } from '../../src/main.js';
import type { Store } from '../../src/store/store.js';
import { type DialectFixture, dialects } from './dialects.js';

export interface Account {
  token: string;
  bucketKey: string;
  accountId: string;
  email: string;
}

export interface ApiHarness {
  dialect: DialectFixture['name'];
  /** The PostgreSQL database of the suite (undefined on SQLite). */
  databaseUrl: string | undefined;
  app: FastifyInstance;
  /** The traffic origin: capture and gateway URLs. */
  traffic: FastifyInstance;
  store: Store;
  server: Server;
  /** The first account, made with bootstrap; its token has every scope. */
  alice: Account;
  /** A second, unrelated account, for checks that foreign resources stay invisible. */
  bob: Account;
  /** A JSON request as `who` (default alice); `body` is sent as JSON with the right header. */
  call(options: {
    method: InjectOptions['method'];
    url: string;
    body?: unknown;
    as?: Account | string | null;
    headers?: Record<string, string>;
    /** Which listener answers: the API's (default) or the traffic origin's. */
    on?: 'api' | 'traffic';
  }): Promise<LightMyRequestResponse & { json<T = any>(): T }>;
  /** The `data` of a successful call, failing loudly with the error envelope otherwise. */
  data<T = any>(method: InjectOptions['method'], url: string, body?: unknown, expected?: number): Promise<T>;
  /** Mints a token with only these scopes for alice. */
  tokenWith(scopes: string[]): Promise<string>;
  /** Sends the request, asserts the error envelope with this status, code and field, and answers its error. */
  expectError(
    request: Parameters<ApiHarness['call']>[0],
    status: number,
    code: string,
    field?: string,
  ): Promise<{ status: number; code: string; message: string; more_info: string; field?: string }>;
}

export const PUBLIC_URL = 'http://vigil.test';
/** The traffic origin of the server under test: capture and gateway URLs. */
export const TRAFFIC_URL = 'http://traffic.vigil.test';

/** Settings of the server under test beyond the defaults (e.g. `{ NOTIFY_RETRY_DELAY: '1' }`). */
export interface ApiOptions {
  env?: Record<string, string>;
  /**
   * The built dashboard to serve at /app/. By default none (a directory that does not exist), so
   * results do not depend on whether the SPA has been built.
   */
  dashboardDir?: string;
}

async function harness(
  fixture: DialectFixture,
  options: ApiOptions = {},
): Promise<ApiHarness & { cleanup(): Promise<void> }> {
  const db = await fixture.create();
  const config = {
    ...loadConfig({
      PUBLIC_URL,
      TRAFFIC_PUBLIC_URL: TRAFFIC_URL,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'silent',
      DATA_DIR: db.dataDir,
      WORKER_REGIONS: '*',
      // A run still going when a suite ends is handed over at once instead of finishing first.
      SHUTDOWN_GRACE: '0',
      ...options.env,
    }),
    databaseUrl: db.databaseUrl,
  };
  // No live scheduler: a schedule firing in the middle of a test would change results and
  // last_run under its feet. The scheduler's tests drive it by hand (test/api/scale-out.test.ts).
  const server = await createServer(config, {
    store: db.store,
    scheduler: false,
    dashboardDir: options.dashboardDir ?? `${db.dataDir}/no-dashboard`,
  });
  const services = (await import('../../src/main.js')).createServices(db.store);
  const make = async (email: string, name: string): Promise<Account> => {
    const r = await services.accounts.bootstrap({ email, name, password: 'correct horse battery' });
    return { token: r.access_token, bucketKey: r.bucket_key, accountId: r.account_id, email };
  };
  const alice = await make('alice@example.com', 'Alice');
  const bob = await make('bob@example.com', 'Bob');

  const call: ApiHarness['call'] = async ({ method, url, body, as = alice, headers = {}, on = 'api' }) => {
    const token = as === null ? undefined : typeof as === 'string' ? as : as.token;
    const response = await (on === 'traffic' ? server.traffic : server.app).inject({
      method,
      url,
      headers: {
        ...(token && { authorization: `Bearer ${token}` }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return response as LightMyRequestResponse & { json<T = any>(): T };
  };

  const data: ApiHarness['data'] = async (method, url, body, expected) => {
    const response = await call({ method, url, body });
    const want = expected ?? (method === 'POST' ? 201 : 200);
    if (response.statusCode !== want) {
      throw new Error(`${method} ${url} answered ${response.statusCode}, expected ${want}: ${response.body}`);
    }
    return response.json().data;
  };

  const tokenWith = async (scopes: string[]) => {
    const { token } = await services.tokens.issue(db.store.db, {
      accountId: alice.accountId,
      clientId: null,
      scopes: scopes as never,
      kind: 'oauth',
    });
    return token;
  };

  const expectError: ApiHarness['expectError'] = async (request, status, code, field) => {
    const response = await call(request);
    assert.equal(response.statusCode, status, `${request.method} ${request.url}: ${response.body}`);
    const body = response.json();
    assert.equal(body.data, null);
    assert.deepEqual(body.meta, { status: 'error' });
    assert.equal(body.error.status, status);
    assert.equal(body.error.code, code);
    assert.equal(typeof body.error.message, 'string');
    assert.equal(typeof body.error.more_info, 'string');
    if (field !== undefined) {
      assert.equal(body.error.field, field, body.error.message);
      assert.ok(body.error.message.includes(field), `message names ${field}: ${body.error.message}`);
    }
    return body.error;
  };

  return {
    dialect: fixture.name,
    databaseUrl: db.databaseUrl,
    expectError,
    app: server.app,
    traffic: server.traffic,
    store: db.store,
    server,
    alice,
    bob,
    call,
    data,
    tokenWith,
    async cleanup() {
      await server.stop();
      await db.cleanup();
    },
  };
}

/**
 * Declares `suite` once per dialect; `get()` inside tests returns that dialect's running API with
 * two bootstrapped accounts.
 */
export async function describeApi(
  title: string,
  suite: (get: () => ApiHarness) => void,
  options: ApiOptions = {},
): Promise<void> {
  for (const { fixture, skip } of await dialects()) {
    describe(`${title} [${fixture.name}]`, { skip }, () => {
      let h: (ApiHarness & { cleanup(): Promise<void> }) | undefined;
      before(async () => {
        h = await harness(fixture, options);
      });
      after(async () => {
        await h?.cleanup();
      });
      suite(() => {
        if (!h) throw new Error('harness not ready');
        return h;
      });
    });
  }
}
