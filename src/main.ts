import type { FastifyInstance } from 'fastify';
import { buildApp, LOG_REDACT, LOG_SERIALIZERS } from './api/app.js';
import type { Services } from './api/context.js';
import { SessionService } from './auth/sessions.js';
import type { Config } from './config/config.js';
import { LocalJobQueue } from './jobs/local-queue.js';
import type { JobQueue } from './jobs/queue.js';
import { Worker } from './jobs/worker.js';
import { createEngine, type SubtestPort } from './runner/engine.js';
import { LazyScriptSandbox } from './runner/lazy-sandbox.js';
import { AccountService } from './services/accounts.js';
import { ApplicationService } from './services/applications.js';
import { BucketService } from './services/buckets.js';
import { EnvironmentService } from './services/environments.js';
import { MessageService } from './services/messages.js';
import { RunService } from './services/runs.js';
import { ScheduleService } from './services/schedules.js';
import { StepService } from './services/steps.js';
import { TestService } from './services/tests.js';
import { TokenService } from './services/tokens.js';
import { Store } from './store/store.js';

type RuntimeConfig = Pick<
  Config,
  | 'egressPolicy'
  | 'region'
  | 'responseBodyLimit'
  | 'runTimeoutSeconds'
  | 'resultsKeepFull'
  | 'resultsKeepSummary'
>;

const RUNTIME_DEFAULTS: RuntimeConfig = {
  egressPolicy: 'allow-all',
  region: 'local',
  responseBodyLimit: 1024 * 1024,
  runTimeoutSeconds: 900,
  resultsKeepFull: 100,
  resultsKeepSummary: 1000,
};

/** The parts that run tests: the queue, the script sandbox (threads start on first use) and the engine. */
export interface Runtime {
  queue: JobQueue;
  scripts: LazyScriptSandbox;
}

/** The one place that wires config → store → services → API. */
export function createServices(
  store: Store,
  config: RuntimeConfig = RUNTIME_DEFAULTS,
  runtime: Runtime = { queue: new LocalJobQueue(store), scripts: new LazyScriptSandbox() },
): Services {
  const tokens = new TokenService({ store });
  const buckets = new BucketService({ store });
  const accounts = new AccountService({ store, tokens, buckets });
  const applications = new ApplicationService({ store, tokens });
  const tests = new TestService({ store, buckets });
  const steps = new StepService({ tests });
  const environments = new EnvironmentService({ store, buckets, tests });
  const schedules = new ScheduleService({ tests });
  // Subtests resolve through the run service, which itself drives the engine.
  const subtests: SubtestPort = {
    resolve: (step, parent, variables) => runs.subtestPort().resolve(step, parent, variables),
    record: (child, outcome, parent) => runs.recordSubtest(child, outcome, parent),
  };
  const engine = createEngine({
    scripts: runtime.scripts,
    egress: config.egressPolicy,
    limits: { maxBodyBytes: config.responseBodyLimit, runTimeoutMs: config.runTimeoutSeconds * 1000 },
    subtests,
  });
  const runs: RunService = new RunService({
    store,
    queue: runtime.queue,
    buckets,
    tests,
    engine,
    settings: {
      region: config.region,
      runTimeoutSeconds: config.runTimeoutSeconds,
      resultsKeepFull: config.resultsKeepFull,
      resultsKeepSummary: config.resultsKeepSummary,
    },
  });
  const messages = new MessageService({ store, buckets });
  return { tokens, accounts, applications, buckets, tests, steps, environments, schedules, runs, messages };
}

export function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'sqliteSynchronous'>): Store {
  return Store.open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
  });
}

/** A worker executing queued runs in this process. */
export function createWorker(
  services: Services,
  runtime: Runtime,
  options: { concurrency: number; regions: readonly string[] | null; log?: FastifyInstance['log'] },
): Worker {
  return new Worker({
    queue: runtime.queue,
    concurrency: options.concurrency,
    regions: options.regions,
    handlers: {
      'run-test': (payload, ctx) => services.runs.execute(payload.runId, ctx.signal),
    },
    onGiveUp: async (job, reason) => {
      if (job.name === 'run-test') await services.runs.abandon(job.payload.runId, reason);
    },
    ...(options.log && { log: options.log }),
  });
}

const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

export interface Server {
  app: FastifyInstance;
  store: Store;
  services: Services;
  worker: Worker | null;
  /** Stops the worker, the sandbox and the API; the store stays open. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the store, brings its schema up to date, builds the API (not yet listening) and, unless
 * `worker: false`, starts an in-process worker that runs queued tests of every region.
 */
export async function createServer(
  config: Config,
  options: { store?: Store; worker?: boolean; logStream?: NodeJS.WritableStream } = {},
): Promise<Server> {
  const store = options.store ?? openStore(config);
  await store.migrate();
  const runtime: Runtime = { queue: new LocalJobQueue(store), scripts: new LazyScriptSandbox() };
  const services = createServices(store, config, runtime);
  const app = await buildApp(
    {
      services,
      store,
      publicUrl: config.publicUrl,
      egressPolicy: config.egressPolicy,
      responseBodyLimit: config.responseBodyLimit,
      sessions: new SessionService({ store, secureCookies: config.publicUrl.startsWith('https:') }),
      signup: config.signup,
    },
    {
      bodyLimit: config.bodyLimit,
      logger:
        config.logLevel === 'silent'
          ? false
          : {
              level: config.logLevel,
              redact: LOG_REDACT,
              serializers: LOG_SERIALIZERS,
              ...(options.logStream && { stream: options.logStream }),
            },
    },
  );
  const worker =
    options.worker === false
      ? null
      : createWorker(services, runtime, {
          concurrency: config.workerConcurrency,
          regions: null,
          log: app.log,
        });
  worker?.start();
  // Message retention: once shortly after start, then every hour.
  const applyRetention = () =>
    void services.messages.applyRetention().then(
      (deleted) => deleted > 0 && app.log.info({ deleted }, 'deleted messages past their bucket retention'),
      (err: unknown) => app.log.error({ err }, 'message retention failed'),
    );
  const retentionStart = setTimeout(applyRetention, 60_000);
  const retentionTimer = setInterval(applyRetention, RETENTION_INTERVAL_MS);
  retentionStart.unref();
  retentionTimer.unref();
  const stop = async () => {
    clearTimeout(retentionStart);
    clearInterval(retentionTimer);
    await worker?.stop();
    await runtime.scripts.close();
    await app.close();
  };
  return {
    app,
    store,
    services,
    worker,
    stop,
    async close() {
      await stop();
      await store.close();
    },
  };
}
