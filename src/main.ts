import type { FastifyInstance } from 'fastify';
import { buildApp, LOG_REDACT, LOG_SERIALIZERS } from './api/app.js';
import type { ApiContext, StoragePort } from './api/context.js';
import { buildTrafficApp } from './api/traffic/app.js';
import { SessionService } from './auth/sessions.js';
import type { Config } from './config/config.js';
import { LocalJobQueue } from './jobs/local-queue.js';
import type { JobQueue } from './jobs/queue.js';
import { Worker } from './jobs/worker.js';
import { createPoster } from './notify/http.js';
import { smtpMailer } from './notify/mail.js';
import type { Metrics } from './observability/metrics.js';
import { listenForMetrics, type MetricsListener } from './observability/scrape.js';
import { createEngine } from './runner/engine.js';
import { LazyScriptSandbox } from './runner/lazy-sandbox.js';
import { AccountService } from './services/accounts.js';
import { AgentService } from './services/agents.js';
import { ApplicationService } from './services/applications.js';
import { BucketService } from './services/buckets.js';
import { EnvironmentService } from './services/environments.js';
import { IdempotencyService } from './services/idempotency.js';
import { IntegrationService } from './services/integrations.js';
import { MessageService } from './services/messages.js';
import { ImportService } from './services/imports.js';
import { NotificationService } from './services/notifications.js';
import { OAuthService } from './services/oauth.js';
import { RestoreService } from './services/restore.js';
import { RunDefinitions } from './services/runs/definitions.js';
import { RunLifecycle } from './services/runs/events.js';
import { RunExecutor } from './services/runs/executor.js';
import { RunLauncher } from './services/runs/launcher.js';
import { RunRecorder } from './services/runs/recorder.js';
import { RunResults } from './services/runs/results.js';
import { MaintenanceService } from './services/maintenance.js';
import { ScheduleService } from './services/schedules.js';
import { StepService } from './services/steps.js';
import { TestService } from './services/tests.js';
import { RunReaper } from './services/run-reaper.js';
import { Scheduler } from './services/scheduler.js';
import { TeamService } from './services/teams.js';
import { WorkerRegistry } from './services/workers.js';
import { TokenService } from './services/tokens.js';
import { TrafficService } from './services/traffic.js';
import { StatusPageService } from './services/status-pages.js';
import { ViewService } from './services/views.js';
import type { Services } from './services/index.js';
import { Store } from './store/store.js';

type RuntimeConfig = Pick<
  Config,
  | 'egressPolicy'
  | 'gatewayEgressPolicy'
  | 'region'
  | 'responseBodyLimit'
  | 'runTimeoutSeconds'
  | 'checkTimeoutMs'
  | 'resultsKeepFull'
  | 'resultsKeepSummary'
  | 'publicUrl'
  | 'smtpUrl'
  | 'mailFrom'
  | 'notifyRetries'
  | 'notifyRetryDelay'
  | 'pagerdutyEventsUrl'
>;

const RUNTIME_DEFAULTS: RuntimeConfig = {
  egressPolicy: 'allow-all',
  gatewayEgressPolicy: 'public-only',
  region: 'local',
  responseBodyLimit: 1024 * 1024,
  runTimeoutSeconds: 900,
  checkTimeoutMs: 1_000,
  resultsKeepFull: 100,
  resultsKeepSummary: 1000,
  publicUrl: 'http://localhost:8080',
  smtpUrl: undefined,
  mailFrom: 'Vigil <vigil@localhost>',
  notifyRetries: 5,
  notifyRetryDelay: 30,
  pagerdutyEventsUrl: 'https://events.pagerduty.com/v2/enqueue',
};

/** The routes' view of storage: whether it answers (the health check), whether it takes writes, whether it changed. */
export function storagePort(store: Store): StoragePort {
  return {
    async ping() {
      const reachable = await store.ping();
      return {
        dialect: store.dialect,
        driver: store.driver,
        reachable,
        writeBlocker: reachable ? await store.writeBlocker() : null,
      };
    },
    writeBlocker: () => store.writeBlocker(),
    generation: (tables) => store.generation(tables),
  };
}

/** The parts that run tests: the queue, the script sandbox (threads start on first use), the process registry. */
export interface Runtime {
  queue: JobQueue;
  scripts: LazyScriptSandbox;
  registry: WorkerRegistry;
  /** This process's Prometheus metrics; absent when METRICS_ENABLED=false. */
  metrics?: Metrics;
}

/** The one place that wires config → store → services → API. */
export function createServices(
  store: Store,
  config: RuntimeConfig = RUNTIME_DEFAULTS,
  runtime: Runtime = {
    queue: new LocalJobQueue(store),
    scripts: new LazyScriptSandbox(),
    registry: new WorkerRegistry({ store }),
  },
): Services {
  const tokens = new TokenService({ store });
  const buckets = new BucketService({ store });
  const accounts = new AccountService({ store, tokens, buckets });
  const applications = new ApplicationService({ store, tokens });
  const tests = new TestService({ store, buckets });
  const steps = new StepService({ tests });
  const environments = new EnvironmentService({ store, buckets, tests });
  const schedules = new ScheduleService({ tests });
  const maintenance = new MaintenanceService({ store, buckets });
  const mailer = config.smtpUrl ? smtpMailer(config.smtpUrl) : null;
  const teams = new TeamService({ store, mailer, mailFrom: config.mailFrom, publicUrl: config.publicUrl });
  const integrations = new IntegrationService({ store, teams });
  // Webhooks, Slack, PagerDuty and the browser-test partner go out through the egress policy.
  const poster = createPoster({ egress: config.egressPolicy });
  // The run side, in dependency order: definitions (test, resolved environment, bucket) first,
  // then the recorder, the engine that runs subtests through both, and the starters and readers.
  const definitions = new RunDefinitions({ store });
  const lifecycle = new RunLifecycle();
  const recorder = new RunRecorder({
    store,
    lifecycle,
    settings: { resultsKeepFull: config.resultsKeepFull, resultsKeepSummary: config.resultsKeepSummary },
  });
  const engine = createEngine({
    scripts: runtime.scripts,
    egress: config.egressPolicy,
    limits: {
      maxBodyBytes: config.responseBodyLimit,
      runTimeoutMs: config.runTimeoutSeconds * 1000,
      checkTimeMs: config.checkTimeoutMs,
    },
    subtests: { resolve: definitions.forSubtest, record: recorder.recordSubtest },
    partner: integrations.partnerPort(poster),
  });
  const notifications = new NotificationService({
    store,
    queue: runtime.queue,
    buckets,
    tests,
    teams,
    integrations,
    definitions,
    poster,
    mailer,
    settings: {
      publicUrl: config.publicUrl,
      retries: config.notifyRetries,
      retryDelaySeconds: config.notifyRetryDelay,
      mailFrom: config.mailFrom,
      pagerdutyEventsUrl: config.pagerdutyEventsUrl,
    },
    ...(runtime.metrics && { metrics: runtime.metrics }),
  });
  // Awaited inside the transaction that ends each run: the notify-run job commits with the outcome.
  lifecycle.on('finished', notifications.onFinished);
  const { metrics } = runtime;
  if (metrics) {
    lifecycle.on('ended', (run) =>
      metrics.runFinished(
        run.result,
        run.source,
        run.startedAt === null ? null : run.finishedAt - run.startedAt,
      ),
    );
  }
  const launcher = new RunLauncher({
    store,
    queue: runtime.queue,
    tests,
    definitions,
    region: config.region,
  });
  const executor = new RunExecutor({ store, queue: runtime.queue, engine, definitions, recorder, lifecycle });
  const results = new RunResults({ store, tests, lifecycle, executor });
  const messages = new MessageService({
    store,
    buckets,
    ...(runtime.metrics && { metrics: runtime.metrics }),
  });
  return {
    tokens,
    accounts,
    applications,
    buckets,
    tests,
    imports: new ImportService({ buckets, tests, messages }),
    steps,
    environments,
    schedules,
    maintenance,
    launcher,
    results,
    executor,
    messages,
    teams,
    integrations,
    notifications,
    workers: runtime.registry,
    agents: new AgentService({
      store,
      teams,
      executor,
      definitions,
      recorder,
      queue: runtime.queue,
      registry: runtime.registry,
    }),
    restore: new RestoreService({ store, tests }),
    views: new ViewService({ store, buckets }),
    statusPages: new StatusPageService({ store, buckets }),
    idempotency: new IdempotencyService({ store }),
    oauth: new OAuthService({ store, tokens, publicUrl: config.publicUrl }),
    traffic: new TrafficService({
      buckets,
      messages,
      egress: config.gatewayEgressPolicy,
      maxBodyBytes: config.responseBodyLimit,
    }),
  };
}

export function openStore(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'sqliteSynchronous' | 'minFreeDisk'> &
    Partial<Pick<Config, 'sqliteDriver' | 'databasePreparedStatements'>>,
): Store {
  return Store.open({
    databaseUrl: config.databaseUrl,
    databasePreparedStatements: config.databasePreparedStatements,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    minFreeDisk: config.minFreeDisk,
    sqliteDriver: config.sqliteDriver,
  });
}

/** A worker executing queued runs in this process. */
export function createWorker(
  services: Services,
  runtime: Runtime,
  options: {
    concurrency: number;
    regions: readonly string[] | null;
    /** SHUTDOWN_GRACE: how long a stop lets runs finish before handing them over. */
    graceSeconds?: number;
    log?: FastifyInstance['log'];
  },
): Worker {
  return new Worker({
    queue: runtime.queue,
    concurrency: options.concurrency,
    regions: options.regions,
    ...(options.graceSeconds !== undefined && { graceMs: options.graceSeconds * 1000 }),
    handlers: {
      'run-test': (payload, ctx) => services.executor.execute(payload.runId, ctx.signal, ctx.workerId),
      'notify-run': async (payload) => {
        await services.notifications.planRun(payload.runId);
      },
      'deliver-notification': (payload) =>
        services.notifications.deliver(payload.notificationId, options.log),
      'apply-retention': async () => {
        await services.messages.applyRetention();
        await services.idempotency.purge();
      },
    },
    onGiveUp: async (job, reason, workerId) => {
      // A run whose job failed on a live worker is handed over once; a run whose worker died is
      // handed over by the run reaper, which sees the worker fall silent. (A worker that stops
      // cleanly hands its runs over itself, without using this up.)
      if (job.name === 'run-test')
        await services.executor.handOver((job.payload as { runId: string }).runId, workerId, reason);
      // A notification whose last delivery attempt failed is given up.
      if (job.name === 'deliver-notification')
        await services.notifications.markFailed(
          (job.payload as { notificationId: string }).notificationId,
          reason,
        );
    },
    ...(options.log && { log: options.log }),
  });
}

const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/** What the runtime logs through. */
interface RuntimeLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

type ProcessConfig = Pick<
  Config,
  'databaseUrl' | 'runTimeoutSeconds' | 'workerDeadAfterSeconds' | 'workerConcurrency'
> &
  Partial<Pick<Config, 'metricsEnabled'>>;

/**
 * The queue for the store: pg-boss on PostgreSQL, the embedded table queue on SQLite; and the
 * registry of live processes.
 */
export async function createRuntime(
  store: Store,
  config: ProcessConfig,
  log?: RuntimeLog,
): Promise<Runtime & { close(): Promise<void> }> {
  let queue: JobQueue;
  let closeQueue = async () => {};
  if (store.dialect === 'postgres' && config.databaseUrl) {
    // pg-boss is loaded only for a PostgreSQL store; on SQLite the process never holds it.
    const { PgBossJobQueue } = await import('./jobs/pg-boss-queue.js');
    const boss = new PgBossJobQueue({
      connectionString: config.databaseUrl,
      // A job outlives the longest run; a run whose worker dies is handed over sooner by the reaper.
      expireInSeconds: config.runTimeoutSeconds + 120,
      ...(log && { log }),
    });
    await boss.start();
    queue = boss;
    closeQueue = () => boss.close();
  } else {
    queue = new LocalJobQueue(store);
  }
  const deadAfterMs = config.workerDeadAfterSeconds * 1000;
  const registry = new WorkerRegistry({
    store,
    liveness: { deadAfterMs, heartbeatMs: Math.max(500, Math.floor(deadAfterMs / 4)) },
  });
  const scripts = new LazyScriptSandbox();
  // prom-client is loaded only by a process that counts.
  let metrics: Metrics | undefined;
  if (config.metricsEnabled) {
    const { Metrics } = await import('./observability/metrics.js');
    metrics = new Metrics({ queueStats: () => queue.stats() });
  }
  return {
    queue,
    scripts,
    registry,
    ...(metrics && { metrics }),
    async close() {
      await scripts.close();
      await closeQueue();
    },
  };
}

/** Announces a worker in the registry now and every heartbeat until the answered stop is called. */
export function announceWorker(
  runtime: Runtime,
  worker: Worker,
  kind: 'serve' | 'worker',
  regions: readonly string[] | null,
  concurrency: number,
  log?: { warn(obj: object, msg: string): void },
): () => Promise<void> {
  const announce = () =>
    runtime.registry
      .announce({ id: worker.id, kind, regions, concurrency })
      .catch((err: unknown) => log?.warn({ err }, 'could not announce this worker'));
  void announce();
  const timer = setInterval(() => void announce(), runtime.registry.liveness.heartbeatMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await runtime.registry.withdraw(worker.id).catch(() => undefined);
  };
}

/** The run reaper of this process, passing as often as processes announce themselves (at most every 5 s). */
function startReaper(
  store: Store,
  services: Services,
  runtime: Runtime,
  config: Pick<Config, 'queueTimeoutSeconds'>,
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void },
): RunReaper {
  const reaper = new RunReaper({
    store,
    executor: services.executor,
    registry: runtime.registry,
    queueTimeoutSeconds: config.queueTimeoutSeconds,
    intervalMs: Math.min(5_000, runtime.registry.liveness.heartbeatMs),
    log,
  });
  reaper.start();
  return reaper;
}

export interface Server {
  /** The API, the dashboard and the web pages. */
  app: FastifyInstance;
  /** Capture and gateway URLs, on their own origin (TRAFFIC_PORT). */
  traffic: FastifyInstance;
  store: Store;
  services: Services;
  runtime: Runtime;
  worker: Worker | null;
  scheduler: Scheduler | null;
  reaper: RunReaper;
  /** The /metrics listener of METRICS_PORT, when it has one (else /metrics is on the API origin). */
  metricsListener: MetricsListener | null;
  /** Stops the in-process worker and withdraws its announcement (the API keeps serving). */
  stopWorker(): Promise<void>;
  /** Stops the scheduler, the worker, the sandbox, the queue and the API; the store stays open. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the store, brings its schema up to date, builds the API (not yet listening), and starts
 * the scheduler, the run reaper, message retention and, unless `worker: false`, an in-process
 * worker for `config.workerRegions`.
 */
export async function createServer(
  config: Config,
  options: {
    store?: Store;
    worker?: boolean;
    scheduler?: boolean;
    logStream?: NodeJS.WritableStream;
    /** Where the built dashboard is (default: the package's `dist/dashboard/`). */
    dashboardDir?: string;
  } = {},
): Promise<Server> {
  const store = options.store ?? openStore(config);
  await store.migrate();
  const app = await buildLoggedApp(config, store, options, async (log) => {
    const runtime = await createRuntime(store, config, log);
    return { runtime, services: createServices(store, config, runtime) };
  });
  const { runtime, services } = app;
  const log = app.app.log;
  const worker =
    options.worker === false
      ? null
      : createWorker(services, runtime, {
          concurrency: config.workerConcurrency,
          regions: config.workerRegions,
          graceSeconds: config.shutdownGraceSeconds,
          log,
        });
  worker?.start();
  const withdraw = worker
    ? announceWorker(runtime, worker, 'serve', config.workerRegions, config.workerConcurrency, log)
    : null;
  const scheduler =
    options.scheduler === false
      ? null
      : new Scheduler({
          store,
          launcher: services.launcher,
          timeScale: config.scheduleTimeScale,
          log,
          ...(runtime.metrics && { metrics: runtime.metrics }),
        });
  scheduler?.start();
  const reaper = startReaper(store, services, runtime, config, log);
  const metricsListener = await metricsListenerOf(runtime, config, config.metricsPort);
  // Message retention through the queue: shortly after start, then every hour.
  const queueRetention = () =>
    void store
      .transaction((trx) => runtime.queue.enqueue(trx, 'apply-retention', {}))
      .then(
        () => runtime.queue.notify(),
        (err: unknown) => log.error({ err }, 'could not queue message retention'),
      );
  const retentionStart = setTimeout(queueRetention, 60_000);
  const retentionTimer = setInterval(queueRetention, RETENTION_INTERVAL_MS);
  retentionStart.unref();
  retentionTimer.unref();
  const stopWorker = async () => {
    await worker?.stop();
    await withdraw?.();
  };
  const stop = async () => {
    clearTimeout(retentionStart);
    clearInterval(retentionTimer);
    await scheduler?.stop();
    await reaper.stop();
    await stopWorker();
    await metricsListener?.close();
    await app.app.close();
    await app.traffic.close();
    await services.notifications.close();
    await runtime.close();
  };
  return {
    app: app.app,
    traffic: app.traffic,
    store,
    services,
    runtime,
    worker,
    scheduler,
    reaper,
    metricsListener,
    stopWorker,
    stop,
    async close() {
      await stop();
      await store.close();
    },
  };
}

/** The listener of `port` serving this process's metrics; null when metrics are off or the port is 0. */
async function metricsListenerOf(
  runtime: Runtime,
  config: Pick<Config, 'metricsToken' | 'host'>,
  port: number,
): Promise<MetricsListener | null> {
  if (!runtime.metrics || port === 0) return null;
  return listenForMetrics(
    { metrics: runtime.metrics, token: config.metricsToken },
    { port, host: config.host },
  );
}

/** Builds the API with the service's logger; `wire` makes the runtime and services with that logger. */
async function buildLoggedApp(
  config: Config,
  store: Store,
  { logStream, dashboardDir }: { logStream?: NodeJS.WritableStream; dashboardDir?: string },
  wire: (log: RuntimeLog) => Promise<{ runtime: Runtime & { close(): Promise<void> }; services: Services }>,
): Promise<{
  app: FastifyInstance;
  traffic: FastifyInstance;
  runtime: Runtime & { close(): Promise<void> };
  services: Services;
}> {
  // The runtime logs through the app's logger, which exists only once the app is built: it gets a
  // forwarding logger bound below.
  let target: RuntimeLog | null = null;
  const { runtime, services } = await wire({
    error: (obj, msg) => target?.error(obj, msg),
    warn: (obj, msg) => target?.warn(obj, msg),
    info: (obj, msg) => target?.info(obj, msg),
  });
  const ctx: ApiContext = {
    services,
    storage: storagePort(store),
    publicUrl: config.publicUrl,
    trafficUrl: config.trafficPublicUrl,
    gatewayDomain: config.gatewayDomain,
    responseBodyLimit: config.responseBodyLimit,
    runTimeoutSeconds: config.runTimeoutSeconds,
    checkTimeoutMs: config.checkTimeoutMs,
    apiCompat: config.apiCompat,
    sessions: new SessionService({ store, secureCookies: config.publicUrl.startsWith('https:') }),
    ...(runtime.metrics && {
      metrics: { metrics: runtime.metrics, token: config.metricsToken, route: config.metricsPort === 0 },
    }),
    signup: config.signup,
    ...(dashboardDir !== undefined && { dashboardDir }),
  };
  const appOptions = {
    bodyLimit: config.bodyLimit,
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            redact: LOG_REDACT,
            serializers: LOG_SERIALIZERS,
            ...(logStream && { stream: logStream }),
          },
  };
  const app = await buildApp(ctx, appOptions);
  const traffic = await buildTrafficApp(ctx, appOptions);
  target = app.log;
  return { app, traffic, runtime, services };
}

export interface WorkerProcess {
  worker: Worker;
  reaper: RunReaper;
  store: Store;
  /** Serves this worker's metrics when a metrics port was given. */
  metricsListener: MetricsListener | null;
  close(): Promise<void>;
}

/** `vigil worker`: runs queued jobs of its regions (and region-less jobs), with no API. */
export async function createWorkerProcess(
  config: Config,
  options: {
    regions: readonly string[] | null;
    concurrency: number;
    log: {
      info(obj: object, msg: string): void;
      warn(obj: object, msg: string): void;
      error(obj: object, msg: string): void;
    };
    store?: Store;
    /** `--metrics-port` or METRICS_PORT: a listener for this worker's metrics; 0 or absent: none. */
    metricsPort?: number;
  },
): Promise<WorkerProcess> {
  const store = options.store ?? openStore(config);
  await store.migrate();
  const metricsPort = options.metricsPort ?? 0;
  // A worker has no API origin: it counts only when it has a listener to serve the counts.
  const runtime = await createRuntime(
    store,
    { ...config, metricsEnabled: config.metricsEnabled && metricsPort !== 0 },
    options.log,
  );
  const services = createServices(store, config, runtime);
  const worker = createWorker(services, runtime, {
    concurrency: options.concurrency,
    regions: options.regions,
    graceSeconds: config.shutdownGraceSeconds,
    log: options.log as FastifyInstance['log'],
  });
  worker.start();
  const withdraw = announceWorker(
    runtime,
    worker,
    'worker',
    options.regions,
    options.concurrency,
    options.log,
  );
  // Workers reap too, so that runs end even while no serve process is up.
  const reaper = startReaper(store, services, runtime, config, options.log);
  const metricsListener = await metricsListenerOf(runtime, config, metricsPort);
  return {
    worker,
    reaper,
    store,
    metricsListener,
    async close() {
      await metricsListener?.close();
      await reaper.stop();
      await worker.stop();
      await withdraw();
      await services.notifications.close();
      await runtime.close();
      await store.close();
    },
  };
}
