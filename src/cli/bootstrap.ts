import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';
import { AppError } from '../domain/errors.js';
import { createServices, openStore } from '../main.js';
import { type BootstrapLine, bootstrapRemote, RemoteBootstrapError } from './bootstrap-remote.js';

export const BOOTSTRAP_USAGE = 'vigil bootstrap --email E --name N --password P [--url URL] [--json]';

/** The store a command opens, said so a person can compare it with the server's settings. */
export function storeDescription(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl)
    return `SQLite ${path.join(config.dataDir, 'vigil.db')} (DATA_DIR=${config.dataDir})`;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = '***';
  return `PostgreSQL ${url.toString()} (DATABASE_URL)`;
}

/** How a server at `url` takes `token`: no server there, accepted, or refused. */
async function serverVerdict(url: string, token: string): Promise<'none' | 'accepted' | 'refused'> {
  const signal = AbortSignal.timeout(3000);
  try {
    const health = await fetch(`${url}/health`, { signal });
    // Vigil's /health, not another service's: it names its store and driver.
    const body = (await health.json().catch(() => ({}))) as { store?: unknown; driver?: unknown };
    if (typeof body.store !== 'string' || typeof body.driver !== 'string') return 'none';
    const account = await fetch(`${url}/account`, { headers: { authorization: `Bearer ${token}` }, signal });
    return account.status === 401 ? 'refused' : 'accepted';
  } catch {
    return 'none';
  }
}

/**
 * `vigil bootstrap`: the first account with its team, default bucket and a personal token. With
 * --url, through the running server at that address (its sign-up page and API); without, straight
 * into the store this command's settings name, after which a server answering at PUBLIC_URL must
 * accept the token or the command fails saying why. With --json prints one line
 * `{access_token, bucket_key, client_id, client_secret, account_id}`.
 */
export async function bootstrap(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
      url: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.email || !values.name || !values.password) {
    process.stderr.write(`usage: ${BOOTSTRAP_USAGE}\n`);
    return 2;
  }
  const account = { email: values.email, name: values.name, password: values.password };
  const remote = values.url?.replace(/\/+$/, '');
  let result: BootstrapLine & { created: boolean };
  let where: string;
  try {
    if (remote) {
      if (!/^https?:\/\/[^/]/.test(remote)) {
        process.stderr.write(`vigil bootstrap: --url must be an http(s) address, not "${remote}"\n`);
        return 2;
      }
      result = await bootstrapRemote(remote, account);
      where = `the server at ${remote}`;
    } else {
      result = await bootstrapStore(config, account);
      where = storeDescription(config);
    }
  } catch (error) {
    if (error instanceof AppError) {
      process.stderr.write(`vigil bootstrap: ${error.message}\n`);
      return error.code === 'unauthorized' ? 3 : 2;
    }
    if (error instanceof RemoteBootstrapError) {
      process.stderr.write(`vigil bootstrap: ${error.message}\n`);
      return error.unauthorized ? 3 : 1;
    }
    if (remote && error instanceof TypeError) {
      process.stderr.write(
        `vigil bootstrap: no server answers at ${remote} (${String(error.cause ?? error)})\n`,
      );
      return 1;
    }
    throw error;
  }
  const { created, ...line } = result;
  const server = remote ?? config.publicUrl;

  if (!remote) {
    const verdict = await serverVerdict(config.publicUrl, line.access_token);
    if (verdict === 'refused') {
      process.stderr.write(
        [
          `vigil bootstrap: wrote the account to ${where},`,
          `but the server answering at ${config.publicUrl} refuses its token: it serves another store.`,
          `Run it against that server instead:  vigil bootstrap --url ${config.publicUrl} …`,
          'or start the server with the same DATA_DIR / DATABASE_URL as this command.',
          '',
        ].join('\n'),
      );
      return 4;
    }
  }

  if (values.json) {
    process.stdout.write(`${JSON.stringify(line)}\n`);
    return 0;
  }
  process.stdout.write(
    [
      created
        ? `Created account ${values.email} (${line.account_id}) in ${where}.`
        : `Account ${values.email} exists in ${where}; password verified.`,
      `Default bucket:  ${line.bucket_key}`,
      `Client id:       ${line.client_id}`,
      `Client secret:   ${line.client_secret}   (shown once)`,
      `Access token:    ${line.access_token}   (shown once)`,
      '',
      ...(remote
        ? []
        : [
            `A server takes this token only if it uses this store: start it with the same ${
              config.databaseUrl ? 'DATABASE_URL' : 'DATA_DIR'
            }, or use --url to create the account on a running server.`,
          ]),
      `Try: curl -H "Authorization: Bearer ${line.access_token}" ${server}/buckets/${line.bucket_key}/tests`,
      '',
    ].join('\n'),
  );
  return 0;
}

async function bootstrapStore(
  config: Config,
  account: { email: string; name: string; password: string },
): Promise<BootstrapLine & { created: boolean }> {
  const store = openStore(config);
  try {
    await store.migrate();
    return await createServices(store).accounts.bootstrap(account);
  } finally {
    await store.close();
  }
}
