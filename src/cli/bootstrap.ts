import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';
import { AppError } from '../domain/errors.js';
import { createServices, openStore } from '../main.js';

export const BOOTSTRAP_USAGE = 'vigil bootstrap --email E --name N --password P [--json]';

/**
 * `vigil bootstrap`: the first account, straight against the store (no server needed). With --json
 * prints one line `{access_token, bucket_key, client_id, client_secret, account_id}`.
 */
export async function bootstrap(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.email || !values.name || !values.password) {
    process.stderr.write(`usage: ${BOOTSTRAP_USAGE}\n`);
    return 2;
  }
  const store = openStore(config);
  try {
    await store.migrate();
    const result = await createServices(store).accounts.bootstrap({
      email: values.email,
      name: values.name,
      password: values.password,
    });
    const { created, ...line } = result;
    if (values.json) {
      process.stdout.write(`${JSON.stringify(line)}\n`);
    } else {
      process.stdout.write(
        [
          created
            ? `Created account ${values.email} (${line.account_id}).`
            : `Account ${values.email} exists; password verified.`,
          `Default bucket:  ${line.bucket_key}`,
          `Client id:       ${line.client_id}`,
          `Client secret:   ${line.client_secret}   (shown once)`,
          `Access token:    ${line.access_token}   (shown once)`,
          '',
          `Try: curl -H "Authorization: Bearer ${line.access_token}" ${config.publicUrl}/buckets/${line.bucket_key}/tests`,
          '',
        ].join('\n'),
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof AppError) {
      process.stderr.write(`vigil bootstrap: ${error.message}\n`);
      return error.code === 'unauthorized' ? 3 : 2;
    }
    throw error;
  } finally {
    await store.close();
  }
}
