/**
 * Child processes of the ingest benchmark: starting and stopping them (nothing is left running,
 * also on failure or Ctrl-C), waiting for /health, and reading their CPU time and RSS from /proc.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const MB = 1024 * 1024;

export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** The last 200 lines of stdout and stderr together. */
  output: string[];
  stdout: string[];
  exited: Promise<number | null>;
  /** The highest RSS sampled, every 200 ms from start to exit, in bytes. */
  peakRss(): number;
}

const children = new Set<Child>();
const tempDirs = new Set<string>();

/** A temporary directory, removed at exit. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Resident set size of a process in bytes, from /proc/<pid>/status. */
export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system, all threads) a process has used, in ms, from /proc/<pid>/stat. */
export function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Starts `node <args>` in the project root; its RSS is sampled every 200 ms while it lives. */
export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`${name} did not start`);
  const pid = proc.pid;
  const output: string[] = [];
  const stdout: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  let pending = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    keep(chunk);
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    stdout.push(...lines);
  });
  proc.stderr?.on('data', keep);
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // gone
    }
  };
  const sampler = setInterval(sample, 200);
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      clearInterval(sampler);
      if (pending) stdout.push(pending);
      resolve(code);
    }),
  );
  const child: Child = { name, process: proc, pid, output, stdout, exited, peakRss: () => peak };
  children.add(child);
  void exited.then(() => children.delete(child));
  sample();
  return child;
}

export function isRunning(child: Child): boolean {
  return child.process.exitCode === null && child.process.signalCode === null;
}

/** SIGTERM, then SIGKILL after 5 s; resolves when the process has exited. */
export async function stopChild(child: Child): Promise<void> {
  if (!isRunning(child)) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 5_000);
  await child.exited;
  clearTimeout(timer);
}

/** Runs `node <args>` to its end; answers its stdout lines, or throws with its output. */
export async function runChild(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const child = startChild(name, args, env);
  const code = await child.exited;
  if (code !== 0) throw new Error(`${name} exited with ${code}:\n${child.output.slice(-30).join('\n')}`);
  return child.stdout;
}

/** Stops every child and removes every temporary directory. */
export async function cleanup(): Promise<void> {
  await Promise.all([...children].map(stopChild));
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

// Last resort when the process ends another way: nothing is left running or on disk.
process.on('exit', () => {
  for (const child of children) child.process.kill('SIGKILL');
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function waitForHealth(child: Child, baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!isRunning(child)) {
      throw new Error(
        `${child.name} exited with ${child.process.exitCode}:\n${child.output.slice(-30).join('\n')}`,
      );
    }
    try {
      const response = await fetch(`${baseUrl}/health`);
      // Vigil's answer names its Node and SQLite driver, the figures' context.
      if (response.ok) return void process.stderr.write(`${child.name} /health: ${await response.text()}\n`);
    } catch {
      // not listening yet
    }
    await delay(50);
  }
  throw new Error(`${child.name} did not answer ${baseUrl}/health within 60 s`);
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** Vigil runs from dist/, as `npm start` does: it must exist, and should not be older than src/. */
export function checkBuild(): void {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first');
  }
  if (newestMtime(path.join(ROOT, 'src')) > newestMtime(path.join(ROOT, 'dist'))) {
    log('warning: src/ has changes newer than dist/; run `npm run build` to benchmark them');
  }
}
