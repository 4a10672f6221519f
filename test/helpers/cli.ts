import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VIGIL = path.join(ROOT, 'bin/vigil.js');

/** Runs the `vigil` command (the built one, as `npx vigil` would) and waits for it. */
export function vigil(args: string[], env: Record<string, string | undefined>) {
  const result = spawnSync(process.execPath, [VIGIL, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Closes a local HTTP server (an upstream of the tests), its open connections included. */
export async function closeHttpServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * `vigil bootstrap` of an account in the store of `store` (a DATA_DIR, or the environment naming the
 * store, e.g. with DATABASE_URL): its personal token and its first bucket's key.
 */
export function bootstrapAccount(
  store: string | Record<string, string | undefined>,
  email: string,
): { token: string; bucket: string } {
  const boot = vigil(
    ['bootstrap', '--email', email, '--name', 'E2E', '--password', 'a long passphrase', '--json'],
    typeof store === 'string' ? { DATA_DIR: store } : store,
  );
  assert.equal(boot.status, 0, boot.stderr);
  const { access_token, bucket_key } = JSON.parse(boot.stdout) as {
    access_token: string;
    bucket_key: string;
  };
  return { token: access_token, bucket: bucket_key };
}

/** Starts `vigil serve` and resolves once /health answers. */
export async function startServe(
  env: Record<string, string | undefined>,
  args: string[] = [],
): Promise<{ url: string; child: ChildProcess; output(): string; stop(): Promise<void> }> {
  const port = await freePort();
  // The traffic listener gets a free port of its own: the default, PORT + 1, may be taken.
  const trafficPort = await freePort();
  const child = spawn(process.execPath, [VIGIL, 'serve', ...args], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      TRAFFIC_PORT: String(trafficPort),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vigil serve exited with ${child.exitCode}: ${output}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`vigil serve did not answer /health in 30 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Starts a long-running `vigil` command (worker, agent) with its output collected. */
export function startVigil(
  args: string[],
  env: Record<string, string | undefined>,
): { child: ChildProcess; output(): string; stop(): Promise<void> } {
  const child = spawn(process.execPath, [VIGIL, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return {
    child,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Starts `vigil worker` with these flags and waits until it has announced itself in the store that
 * `db` (a connected PostgreSQL client) reads.
 */
export async function startAnnouncedWorker(
  args: string[],
  env: Record<string, string | undefined>,
  db: { query(sql: string, values: unknown[]): Promise<{ rowCount: number | null }> },
): Promise<ReturnType<typeof startVigil>> {
  const worker = startVigil(['worker', ...args], env);
  const deadline = Date.now() + 30_000;
  while (!(await db.query('select 1 from workers where pid = $1', [worker.child.pid])).rowCount) {
    if (worker.child.exitCode !== null) throw new Error(`worker exited: ${worker.output()}`);
    if (Date.now() > deadline) {
      await worker.stop();
      throw new Error(`worker did not announce itself: ${worker.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return worker;
}

/** JSON calls to a running server with a bearer token: answers `data`, failing loudly otherwise. */
export function apiClient(base: () => string, token: () => string) {
  return async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${base()}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token()}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const json = (text ? JSON.parse(text) : { data: null, error: null }) as { data: any; error: unknown };
    assert.ok(response.ok, `${method} ${url} → ${response.status}: ${JSON.stringify(json.error)}`);
    return json.data;
  };
}
