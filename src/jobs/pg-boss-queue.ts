import { EventEmitter } from 'node:events';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Executor } from '../store/store.js';
import { type ClaimedJob, JOB_NAMES, type JobName, type JobOptions, type JobPayloads } from './jobs.js';
import { AGENT_REGION_PREFIX, type JobQueue, type QueueStats } from './queue.js';

/** The channel on which enqueuers wake the workers of every process. */
const CHANNEL = 'vigil_jobs';
/** How long the list of queues (one per job name and region) is trusted before it is read again. */
const QUEUE_LIST_TTL_MS = 5_000;
const ANY_REGION = 'any';
/** The notification payload that tells other processes to read the list of queues again. */
const NEW_QUEUE = 'new-queue';

export interface PgBossQueueOptions {
  connectionString: string;
  /** A job not completed within this many seconds is expired by pg-boss (and retried when it may). */
  expireInSeconds: number;
  /** pg-boss's own schema. */
  schema?: string;
  log?: {
    error(obj: object, msg: string): void;
    warn?(obj: object, msg: string): void;
    info?(obj: object, msg: string): void;
  };
}

interface Active {
  queue: string;
  retryCount: number;
  retryLimit: number;
}

/** The pg-boss queue that carries jobs of `name` for `region` (null: any worker). */
export function queueName(name: JobName, region: string | null): string {
  return `${name}__${region ?? ANY_REGION}`;
}

function parseQueueName(queue: string): { name: JobName; region: string | null } | null {
  const at = queue.indexOf('__');
  if (at < 0) return null;
  const name = queue.slice(0, at) as JobName;
  if (!(JOB_NAMES as readonly string[]).includes(name)) return null;
  const region = queue.slice(at + 2);
  return { name, region: region === ANY_REGION ? null : region };
}

/**
 * The job queue on PostgreSQL, carried by pg-boss: one pg-boss queue per job name and region, jobs
 * inserted inside the caller's transaction, retries with backoff and expiry by pg-boss. Workers in
 * every process are woken through LISTEN/NOTIFY instead of waiting for their next poll.
 */
export class PgBossJobQueue implements JobQueue {
  private readonly boss: PgBoss;
  private readonly events = new EventEmitter();
  private readonly active = new Map<string, Active>();
  private readonly created = new Set<string>();
  private queues: { names: string[]; at: number } = { names: [], at: 0 };
  private listener: pg.Client | null = null;
  private relistening = false;
  private closed = false;

  constructor(private readonly options: PgBossQueueOptions) {
    this.events.setMaxListeners(0);
    this.boss = new PgBoss({
      connectionString: options.connectionString,
      schema: options.schema ?? 'pgboss',
      max: 4,
      // Schedules are the service's own (see the scheduler); pg-boss only expires and archives.
      schedule: false,
      supervise: true,
    });
    this.boss.on('error', (err) => options.log?.error({ err }, 'the pg-boss job engine reported an error'));
  }

  async start(): Promise<void> {
    await this.boss.start();
    await this.connectListener();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    await this.boss.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
  }

  async enqueue<N extends JobName>(
    db: Executor,
    name: N,
    payload: JobPayloads[N],
    options: JobOptions = {},
  ): Promise<string> {
    const queue = queueName(name, options.region ?? null);
    await this.ensureQueue(queue);
    const retry = options.retry;
    const id = await this.boss.send(queue, payload as object, {
      db: {
        executeSql: (text: string, values: unknown[]) => db.executeQuery(CompiledQuery.raw(text, values)),
      },
      retryLimit: retry?.limit ?? 0,
      retryDelay: retry ? Math.round(retry.delaySeconds) : 0,
      retryBackoff: retry?.backoff ?? false,
      expireInSeconds: this.options.expireInSeconds,
      ...(options.runAfter !== undefined && { startAfter: new Date(options.runAfter * 1000) }),
    });
    if (!id) throw new Error(`pg-boss did not accept a ${name} job`);
    return id;
  }

  async claim(
    workerId: string,
    names: readonly JobName[],
    regions: readonly string[] | null,
    leaseMs: number,
  ): Promise<ClaimedJob | null> {
    return (await this.claimMany(workerId, names, regions, leaseMs, 1))[0] ?? null;
  }

  /** One fetch per queue for up to `max` jobs: with a backlog, pg-boss's scan is paid once per batch. */
  async claimMany(
    _workerId: string,
    names: readonly JobName[],
    regions: readonly string[] | null,
    _leaseMs: number,
    max: number,
  ): Promise<ClaimedJob[]> {
    const claimed: ClaimedJob[] = [];
    for (const queue of await this.queuesFor(names, regions)) {
      if (claimed.length >= max) break;
      const jobs = await this.boss.fetch<JobPayloads[JobName]>(queue, {
        batchSize: max - claimed.length,
        includeMetadata: true,
      });
      const parsed = parseQueueName(queue)!;
      for (const job of jobs) {
        this.active.set(job.id, { queue, retryCount: job.retryCount, retryLimit: job.retryLimit });
        claimed.push({
          id: job.id,
          name: parsed.name,
          payload: job.data,
          region: parsed.region,
          attempt: job.retryCount + 1,
          maxAttempts: job.retryLimit + 1,
        });
      }
    }
    return claimed;
  }

  /** pg-boss has no lease to extend: a job lives until it completes, fails or expires. */
  async renew(jobId: string): Promise<boolean> {
    return this.active.has(jobId);
  }

  async complete(jobId: string): Promise<void> {
    const active = this.active.get(jobId);
    if (!active) return;
    this.active.delete(jobId);
    await this.boss.complete(active.queue, jobId);
  }

  async fail(jobId: string, _workerId: string, error: string): Promise<'retrying' | 'dropped'> {
    const active = this.active.get(jobId);
    if (!active) return 'dropped';
    this.active.delete(jobId);
    await this.boss.fail(active.queue, jobId, { error: error.slice(0, 2000) });
    return active.retryCount < active.retryLimit ? 'retrying' : 'dropped';
  }

  /** pg-boss's supervisor expires jobs whose worker went away (and retries them when they may). */
  async reclaimExpired(): Promise<ClaimedJob[]> {
    return [];
  }

  /**
   * Jobs pg-boss holds as created or retrying and due now, grouped by queue in one query, then
   * summed per job name (the region part of a queue's name is left out: agents' queues are many).
   */
  async stats(): Promise<QueueStats[]> {
    const schema = this.options.schema ?? 'pgboss';
    const result = (await this.boss.getDb().executeSql(
      `select name, count(*)::int as waiting,
              coalesce(extract(epoch from now() - min(start_after)), 0)::float8 as oldest
         from ${schema}.job
        where state < 'active' and start_after <= now()
        group by name`,
      [],
    )) as { rows: { name: string; waiting: number; oldest: number }[] };
    const byJob = new Map<JobName, QueueStats>();
    for (const row of result.rows) {
      const parsed = parseQueueName(row.name);
      if (!parsed) continue;
      const entry = byJob.get(parsed.name) ?? { job: parsed.name, waiting: 0, oldestWaitingSeconds: 0 };
      entry.waiting += Number(row.waiting);
      entry.oldestWaitingSeconds = Math.max(entry.oldestWaitingSeconds, Number(row.oldest));
      byJob.set(parsed.name, entry);
    }
    return [...byJob.values()];
  }

  notify(): void {
    this.events.emit('ready');
    if (this.closed) return;
    void this.boss
      .getDb()
      .executeSql(`select pg_notify('${CHANNEL}', '')`, [])
      .catch(() => undefined);
  }

  onNotify(listener: () => void): () => void {
    this.events.on('ready', listener);
    return () => this.events.off('ready', listener);
  }

  private async ensureQueue(queue: string): Promise<void> {
    if (this.created.has(queue)) return;
    try {
      await this.boss.createQueue(queue);
    } catch (err) {
      // Another process may create it at the same moment; it only matters that it exists.
      if (!(await this.boss.getQueue(queue))) throw err;
    }
    this.created.add(queue);
    this.queues.at = 0;
    await this.boss
      .getDb()
      .executeSql(`select pg_notify('${CHANNEL}', '${NEW_QUEUE}')`, [])
      .catch(() => undefined);
  }

  private async queuesFor(names: readonly JobName[], regions: readonly string[] | null): Promise<string[]> {
    if (regions !== null) {
      const wanted = names.flatMap((name) => [null, ...regions].map((region) => queueName(name, region)));
      const existing = new Set(await this.allQueues());
      return wanted.filter((queue) => existing.has(queue));
    }
    return (await this.allQueues()).filter((queue) => {
      const parsed = parseQueueName(queue);
      return (
        parsed !== null &&
        names.includes(parsed.name) &&
        !(parsed.region ?? '').startsWith(AGENT_REGION_PREFIX)
      );
    });
  }

  private async allQueues(): Promise<string[]> {
    if (Date.now() - this.queues.at > QUEUE_LIST_TTL_MS) {
      const rows = (await this.boss.getQueues()) as { name: string }[];
      this.queues = { names: rows.map((row) => row.name), at: Date.now() };
    }
    return this.queues.names;
  }

  /**
   * One connection per process listens for enqueues elsewhere. When it drops it is made again, with
   * a backoff of 250 ms doubling to at most 2 s, until it succeeds; the workers' poll finds the work
   * meanwhile. The log says when it is lost and when it is back.
   */
  private async relisten(): Promise<void> {
    if (this.relistening || this.closed) return;
    this.relistening = true;
    const since = Date.now();
    this.options.log?.warn?.(
      { channel: CHANNEL },
      'lost the PostgreSQL LISTEN connection; reconnecting (jobs are found by polling meanwhile)',
    );
    let delay = 250;
    try {
      while (!this.closed) {
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        if (this.closed) return;
        try {
          await this.connectListener();
          this.options.log?.info?.(
            { channel: CHANNEL, downMs: Date.now() - since },
            'the PostgreSQL LISTEN connection is back',
          );
          // Jobs queued while nobody heard them are due now.
          this.queues.at = 0;
          this.events.emit('ready');
          return;
        } catch {
          delay = Math.min(delay * 2, 2_000);
        }
      }
    } finally {
      this.relistening = false;
    }
  }

  private async connectListener(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.connectionString });
    const lost = () => {
      if (this.listener !== client || this.closed) return;
      this.listener = null;
      client.end().catch(() => undefined);
      void this.relisten();
    };
    // Errors before the connection is made reject connect() below; later ones mean it was lost.
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.payload === NEW_QUEUE) this.queues.at = 0;
      this.events.emit('ready');
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
  }
}
