/**
 * Starting a worker thread from a module of this package, the same way whether the process runs the
 * built code (dist/, `.js`) or the TypeScript sources through tsx (tests, benchmarks): loader hooks
 * of the parent do not reach worker threads, so from the sources the thread first registers tsx.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker running the module `name` (without extension) next to `base` (the caller's
 * `import.meta.url`).
 */
export function startModuleWorker(
  base: string,
  name: string,
  options: Omit<WorkerOptions, 'eval'> = {},
): Worker {
  const fromSource = base.endsWith('.ts');
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, base);
  if (!fromSource) return new Worker(url, options);
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
