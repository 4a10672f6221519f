import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueStats } from '../jobs/queue.js';

/** Every metric of the service starts with this (docs/observability.md lists them). */
export const METRIC_PREFIX = 'vigil_';

/** The gauges read on scrape: the queue of this process, when it has one. */
export interface MetricsSources {
  queueStats?: () => Promise<QueueStats[]>;
}

/** Methods counted under their own name; any other method is counted as OTHER. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A request no route matched: counted under one label value, never its URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Request latencies: from a cached read to a slow import or gateway call. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Test runs: from a single fast request to the longest run (RUN_TIMEOUT, 900 s by default). */
const RUN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
/** How late a schedule's run was queued after its due time (ticks are 250 ms apart). */
const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * The Prometheus metrics of one process, in a registry of its own: nothing is registered globally,
 * so every server, worker or agent (and every test) counts apart. The services count through the
 * methods below and never see prom-client.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status_code'>;
  private readonly httpDuration: Histogram<'route' | 'method' | 'status_code'>;
  private readonly runsFinished: Counter<'result' | 'source'>;
  private readonly runDuration: Histogram<'result' | 'source'>;
  private readonly schedulerLag: Histogram;
  private readonly messagesIngested: Counter<'source'>;
  private readonly deliveries: Counter<'channel' | 'outcome'>;
  private readonly httpLabelSets = new Map<
    string,
    Map<string, Map<number, Readonly<Record<'route' | 'method' | 'status_code', string>>>>
  >();

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    this.httpRequests = new Counter({
      name: 'vigil_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status code',
      labelNames: ['route', 'method', 'status_code'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'vigil_http_request_duration_seconds',
      help: 'Time from receiving an HTTP request to sending its answer, by route pattern, method and status code',
      labelNames: ['route', 'method', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.runsFinished = new Counter({
      name: 'vigil_runs_finished_total',
      help: 'Test runs that ended, by result (pass, fail, canceled) and source (manual, scheduled, trigger_url, subtest)',
      labelNames: ['result', 'source'],
      registers,
    });
    this.runDuration = new Histogram({
      name: 'vigil_run_duration_seconds',
      help: 'Time from a run starting to its end, by result and source (runs that never started are left out)',
      labelNames: ['result', 'source'],
      buckets: RUN_BUCKETS,
      registers,
    });
    this.schedulerLag = new Histogram({
      name: 'vigil_scheduler_lag_seconds',
      help: "Seconds between a schedule's due time and the moment its run was queued",
      buckets: LAG_BUCKETS,
      registers,
    });
    this.messagesIngested = new Counter({
      name: 'vigil_messages_ingested_total',
      help: 'Captured HTTP exchanges stored, by how they arrived (api, capture, gateway, replay, har)',
      labelNames: ['source'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'vigil_notification_deliveries_total',
      help: 'Notification delivery attempts, by channel and outcome (delivered, failed)',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    const queueStats = sources.queueStats;
    if (queueStats) this.registerQueueGauges(queueStats);
  }

  /** One answered HTTP request; `route` is the route pattern (undefined when none matched). */
  httpRequest(route: string | undefined, method: string, statusCode: number, seconds: number): void {
    const labels = this.httpLabels(
      route ?? UNMATCHED_ROUTE,
      METHODS.has(method) ? method : 'OTHER',
      statusCode,
    );
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /**
   * The label set of a route, method and status, made on its first request and looked up after:
   * a request allocates no labels of its own. Route patterns, methods and statuses are few.
   */
  private httpLabels(route: string, method: string, statusCode: number) {
    let byMethod = this.httpLabelSets.get(route);
    if (!byMethod) this.httpLabelSets.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let labels = byStatus.get(statusCode);
    if (!labels) {
      labels = Object.freeze({ route, method, status_code: String(statusCode) });
      byStatus.set(statusCode, labels);
    }
    return labels;
  }

  /** A run ended; `seconds` is null for a run that never started (canceled while queued). */
  runFinished(result: string, source: string, seconds: number | null): void {
    this.runsFinished.inc({ result, source });
    if (seconds !== null && seconds >= 0) this.runDuration.observe({ result, source }, seconds);
  }

  /** A schedule's run was queued this many seconds after its due time. */
  scheduleFired(lagSeconds: number): void {
    this.schedulerLag.observe(Math.max(0, lagSeconds));
  }

  messagesStored(source: string, count = 1): void {
    if (count > 0) this.messagesIngested.inc({ source }, count);
  }

  deliveryAttempted(channel: string, delivered: boolean): void {
    this.deliveries.inc({ channel, outcome: delivered ? 'delivered' : 'failed' });
  }

  /** The text exposition of every metric of this process. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * Queue depth and the age of the oldest waiting job, read from the queue only when scraped: one
   * grouped query per scrape, nothing kept between scrapes.
   */
  private registerQueueGauges(queueStats: () => Promise<QueueStats[]>): void {
    // Both gauges come from one read; the first gauge collected in a scrape makes it.
    let pending: Promise<QueueStats[]> | null = null;
    const read = () => {
      // A store that does not answer leaves the gauges empty rather than failing the whole scrape.
      pending ??= queueStats()
        .catch(() => [])
        .finally(() => {
          pending = null;
        });
      return pending;
    };
    const fill = async (gauge: Gauge<'job'>, value: (stats: QueueStats) => number) => {
      const stats = await read();
      gauge.reset();
      for (const entry of stats) gauge.set({ job: entry.job }, value(entry));
    };
    new Gauge({
      name: 'vigil_queue_jobs_waiting',
      help: 'Jobs due now that no worker has taken yet, by job name',
      labelNames: ['job'],
      registers: [this.registry],
      async collect() {
        await fill(this, (stats) => stats.waiting);
      },
    });
    new Gauge({
      name: 'vigil_queue_oldest_job_age_seconds',
      help: 'Seconds since the oldest waiting job became due, by job name (0 when none waits)',
      labelNames: ['job'],
      registers: [this.registry],
      async collect() {
        await fill(this, (stats) => stats.oldestWaitingSeconds);
      },
    });
  }
}
