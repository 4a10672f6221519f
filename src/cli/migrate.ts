import type { Config } from '../config/config.js';
import { openStore } from '../main.js';

/** `vigil migrate`: brings the store's schema up to date and says what it applied. */
export async function migrate(config: Config): Promise<number> {
  const store = openStore(config);
  try {
    const applied = await store.migrate();
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Schema is up to date.\n');
    return 0;
  } finally {
    await store.close();
  }
}
