import type { FastifyInstance } from 'fastify';
import { buildApp, LOG_REDACT } from './api/app.js';
import type { Services } from './api/context.js';
import type { Config } from './config/config.js';
import { AccountService } from './services/accounts.js';
import { BucketService } from './services/buckets.js';
import { EnvironmentService } from './services/environments.js';
import { ScheduleService } from './services/schedules.js';
import { StepService } from './services/steps.js';
import { TestService } from './services/tests.js';
import { TokenService } from './services/tokens.js';
import { Store } from './store/store.js';

/** The one place that wires config → store → services → API. */
export function createServices(store: Store): Services {
  const tokens = new TokenService({ store });
  const buckets = new BucketService({ store });
  const accounts = new AccountService({ store, tokens, buckets });
  const tests = new TestService({ store, buckets });
  const steps = new StepService({ tests });
  const environments = new EnvironmentService({ store, buckets, tests });
  const schedules = new ScheduleService({ tests });
  return { tokens, accounts, buckets, tests, steps, environments, schedules };
}

export function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Store {
  return Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
}

export interface Server {
  app: FastifyInstance;
  store: Store;
  close(): Promise<void>;
}

/** Opens the store, brings its schema up to date and builds the API (not yet listening). */
export async function createServer(config: Config, options: { store?: Store } = {}): Promise<Server> {
  const store = options.store ?? openStore(config);
  await store.migrate();
  const services = createServices(store);
  const app = await buildApp(
    { services, store, publicUrl: config.publicUrl },
    {
      bodyLimit: config.bodyLimit,
      logger: config.logLevel === 'silent' ? false : { level: config.logLevel, redact: LOG_REDACT },
    },
  );
  return {
    app,
    store,
    async close() {
      await app.close();
      await store.close();
    },
  };
}
