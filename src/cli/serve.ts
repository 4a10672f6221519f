import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';
import { createServer } from '../main.js';
import { stopOnSignals } from './signals.js';

export const SERVE_USAGE = `Usage: vigil serve [--no-worker] [--no-scheduler]

  --no-worker      serve only: queued runs are left to \`vigil worker\` processes
  --no-scheduler   do not fire schedules from this process (another serve process does)
`;

/** `vigil serve`: the API on PORT/HOST until SIGINT or SIGTERM. Answers an exit code on bad flags. */
export async function serve(config: Config, args: string[] = []): Promise<number | null> {
  let flags: { worker: boolean; scheduler: boolean };
  try {
    const { values } = parseArgs({
      args,
      options: {
        'no-worker': { type: 'boolean', default: false },
        'no-scheduler': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(SERVE_USAGE);
      return 0;
    }
    flags = { worker: !values['no-worker'], scheduler: !values['no-scheduler'] };
  } catch (error) {
    process.stderr.write(`vigil serve: ${(error as Error).message}\n\n${SERVE_USAGE}`);
    return 2;
  }
  const server = await createServer(config, flags);
  stopOnSignals(
    async (signal) => {
      server.app.log.info(
        { signal, running: server.worker?.running ?? 0, graceSeconds: config.shutdownGraceSeconds },
        'shutting down',
      );
      await server.close();
    },
    (signal) => {
      server.app.log.info({ signal }, 'stopping now: running tests are handed over to other workers');
      server.worker?.abortRunning();
    },
  );
  await server.app.listen({ port: config.port, host: config.host });
  await server.traffic.listen({ port: config.trafficPort, host: config.host });
  server.app.log.info(
    {
      store: server.store.dialect,
      node: process.version,
      driver: server.store.driver,
      publicUrl: config.publicUrl,
      trafficUrl: config.trafficPublicUrl,
      worker: flags.worker ? (config.workerRegions ?? ['*']) : null,
      scheduler: flags.scheduler,
      metrics: !server.runtime.metrics
        ? null
        : server.metricsListener
          ? `http://${config.host}:${server.metricsListener.port}/metrics`
          : `${config.publicUrl}/metrics`,
    },
    `Vigil serving on ${config.publicUrl}, traffic on ${config.trafficPublicUrl} (${server.store.dialect === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL'}, Node ${process.version}, driver ${server.store.driver})`,
  );
  return null;
}
