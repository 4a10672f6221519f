import { parseArgs } from 'node:util';
import pino from 'pino';
import { LOG_REDACT, LOG_SERIALIZERS } from '../api/app.js';
import { type Config, REGION_PATTERN } from '../config/config.js';
import { createWorkerProcess } from '../main.js';
import { stopOnSignals } from './signals.js';

export const WORKER_USAGE = `Usage: vigil worker [--region R]… [--concurrency N] [--metrics-port N]

Runs queued test runs of its regions (default: REGION) and the region-less jobs (notifications,
retention), with no API. Any number of workers may share one PostgreSQL store.

  --region R        a region to serve; repeat it or separate codes with commas; * serves every region
  --concurrency N   runs executed at once (default WORKER_CONCURRENCY, 10)
  --metrics-port N  serve this worker's Prometheus metrics at http://HOST:N/metrics
                    (default METRICS_PORT; 0 or unset: none)
`;

/** `vigil worker`: runs jobs until SIGINT or SIGTERM. Answers an exit code on bad flags. */
export async function worker(config: Config, args: string[]): Promise<number | null> {
  let regions: string[] | null;
  let concurrency: number;
  let metricsPort = config.metricsPort;
  try {
    const { values } = parseArgs({
      args,
      options: {
        region: { type: 'string', multiple: true },
        concurrency: { type: 'string' },
        'metrics-port': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(WORKER_USAGE);
      return 0;
    }
    const given = (values.region ?? []).flatMap((r) => r.split(',')).map((r) => r.trim());
    if (given.includes('*')) regions = null;
    else {
      const bad = given.find((r) => !REGION_PATTERN.test(r));
      if (bad !== undefined)
        throw new Error(`--region must be a region code (lowercase letters, digits, dashes), got "${bad}"`);
      regions = given.length > 0 ? given : [config.region];
    }
    concurrency = config.workerConcurrency;
    if (values.concurrency !== undefined) {
      if (
        !/^\d+$/.test(values.concurrency) ||
        Number(values.concurrency) < 1 ||
        Number(values.concurrency) > 1000
      )
        throw new Error(`--concurrency must be a whole number from 1 to 1000, got "${values.concurrency}"`);
      concurrency = Number(values.concurrency);
    }
    const port = values['metrics-port'];
    if (port !== undefined) {
      if (!/^\d+$/.test(port) || Number(port) > 65535)
        throw new Error(`--metrics-port must be a port number from 0 to 65535, got "${port}"`);
      metricsPort = Number(port);
    }
    if (metricsPort !== 0 && !config.metricsEnabled)
      throw new Error('--metrics-port is set but METRICS_ENABLED=false switches metrics off');
  } catch (error) {
    process.stderr.write(`vigil worker: ${(error as Error).message}\n\n${WORKER_USAGE}`);
    return 2;
  }
  const log = pino({ level: config.logLevel, redact: LOG_REDACT, serializers: LOG_SERIALIZERS });
  const running = await createWorkerProcess(config, { regions, concurrency, log, metricsPort });
  log.info(
    {
      worker: running.worker.id,
      regions: regions ?? ['*'],
      concurrency,
      store: running.store.dialect,
      node: process.version,
      driver: running.store.driver,
      metricsPort: running.metricsListener?.port ?? null,
    },
    'Vigil worker started',
  );
  stopOnSignals(
    async (signal) => {
      log.info(
        { signal, running: running.worker.running, graceSeconds: config.shutdownGraceSeconds },
        'worker shutting down',
      );
      await running.close();
    },
    (signal) => {
      log.info({ signal }, 'stopping now: running tests are handed over to other workers');
      running.worker.abortRunning();
    },
  );
  return null;
}
