/**
 * undici, loaded on the first outbound connection: a server that has not yet run a test, sent a
 * notification or forwarded through the gateway does not hold it.
 */
import { createRequire } from 'node:module';
import type * as UndiciModule from 'undici';

type Undici = typeof UndiciModule;

const require = createRequire(import.meta.url);
let loaded: Undici | null = null;

export function undici(): Undici {
  loaded ??= require('undici') as Undici;
  return loaded;
}
