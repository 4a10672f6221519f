import type { Config } from '../config/config.js';
import { createServer } from '../main.js';

/** `vigil serve`: the API on PORT/HOST until SIGINT or SIGTERM. */
export async function serve(config: Config): Promise<void> {
  const server = await createServer(config);
  const shutdown = async (signal: string) => {
    server.app.log.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  await server.app.listen({ port: config.port, host: config.host });
  server.app.log.info(
    { store: server.store.dialect, publicUrl: config.publicUrl },
    `Vigil serving on ${config.publicUrl} (${server.store.dialect === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL'})`,
  );
}
