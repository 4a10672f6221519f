import { ConfigError, loadConfig } from '../config/config.js';
import { bootstrap } from './bootstrap.js';
import { migrate } from './migrate.js';
import { run } from './run.js';
import { serve } from './serve.js';

const USAGE = `Usage: vigil <command> [options]

Commands:
  serve                 the API (SQLite under DATA_DIR unless DATABASE_URL names PostgreSQL)
  bootstrap --email E --name N --password P [--json]
                        create the first account, its bucket and a personal token
  migrate               bring the store's schema up to date
  run [options] FILE…   run exported test files here, without a server (vigil run --help)

Settings come from the environment: PORT, HOST, DATA_DIR, PUBLIC_URL, DATABASE_URL, SMTP_URL,
EGRESS_POLICY, LOG_LEVEL, BODY_LIMIT (see docs/configuration.md).
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`vigil: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  switch (command) {
    case 'serve':
      await serve(config);
      return -1;
    case 'bootstrap':
      return bootstrap(config, rest);
    case 'migrate':
      return migrate(config);
    case 'run':
      return run(rest, config.egressPolicy);
    default:
      process.stderr.write(`vigil: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}
