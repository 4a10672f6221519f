import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
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

/** Starts `vigil serve` and resolves once /health answers. */
export async function startServe(
  env: Record<string, string | undefined>,
  args: string[] = [],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [VIGIL, 'serve', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), ...env },
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
