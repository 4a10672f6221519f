import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';
import { createServer } from '../main.js';

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
  const shutdown = async (signal: string) => {
    server.app.log.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  await server.app.listen({ port: config.port, host: config.host });
  server.app.log.info(
    {
      store: server.store.dialect,
      publicUrl: config.publicUrl,
      worker: flags.worker ? (config.workerRegions ?? ['*']) : null,
      scheduler: flags.scheduler,
    },
    `Vigil serving on ${config.publicUrl} (${server.store.dialect === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL'})`,
  );
  return null;
}
