import { ConfigError, loadConfig } from '../config/config.js';

// Each command loads its own modules when it is the one asked for: a server holds no code of
// `vigil run`, `import` or `agent` (their reporters, parsers and clients) in memory.

const USAGE = `Usage: vigil <command> [options]

Commands:
  serve [--no-worker] [--no-scheduler]
                        the API, scheduler and a worker (SQLite under DATA_DIR unless
                        DATABASE_URL names PostgreSQL)
  worker [--region R]… [--concurrency N]
                        run queued test runs of its regions, without the API
  bootstrap --email E --name N --password P [--url URL] [--json]
                        create the first account, its bucket and a personal token: on
                        the running server at URL, else in the store of DATA_DIR /
                        DATABASE_URL (it names the store it wrote to)
  migrate               bring the store's schema up to date
  run [options] FILE…   run exported test files here, without a server (vigil run --help)
  import FILE --bucket KEY [--format F] [--environment ENVFILE] [--split S] [--dry-run]
                        create tests on a running server from a Postman collection, an
                        OpenAPI/Swagger document, curl lines or a HAR file (vigil import --help)
  agent --url U --token T [--concurrency N]
                        a remote agent: runs the tests meant for it, reports to the server
                        at U over HTTP(S); needs no store (vigil agent --help)

Settings come from the environment: PORT, HOST, DATA_DIR, PUBLIC_URL, DATABASE_URL, SMTP_URL,
EGRESS_POLICY, LOG_LEVEL, BODY_LIMIT, REGION, WORKER_REGIONS, QUEUE_TIMEOUT … (see
docs/configuration.md).
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  // A remote agent has no store and no server settings: it reads only its flags and EGRESS_POLICY.
  if (command === 'agent') return (await import('./agent.js')).agent(rest);
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
      return (await (await import('./serve.js')).serve(config, rest)) ?? -1;
    case 'worker':
      return (await (await import('./worker.js')).worker(config, rest)) ?? -1;
    case 'bootstrap':
      return (await import('./bootstrap.js')).bootstrap(config, rest);
    case 'migrate':
      return (await import('./migrate.js')).migrate(config);
    case 'run':
      return (await import('./run.js')).run(rest, config.egressPolicy);
    case 'import':
      return (await import('./import.js')).importCommand(rest, { publicUrl: config.publicUrl });
    default:
      process.stderr.write(`vigil: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}
