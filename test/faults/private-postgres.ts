import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/cli.js';

/**
 * A throw-away PostgreSQL cluster of this test alone, which it may stop and start at will (the
 * machine's shared server is never touched). Debian's server binaries run as the `postgres` user.
 */
export interface PrivatePostgres {
  url: string;
  stop(): void;
  start(): void;
  remove(): void;
}

function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

function asPostgres(args: string[]): { status: number | null; output: string } {
  const result = spawnSync('runuser', ['-u', 'postgres', '--', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return {
    status: result.status,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}`,
  };
}

/** Makes and starts the cluster; answers why it cannot when it cannot (no binaries, not root …). */
export async function privatePostgres(): Promise<PrivatePostgres | string> {
  const bin = binDir();
  if (!bin) return 'no PostgreSQL server binaries under /usr/lib/postgresql';
  if (process.getuid?.() !== 0)
    return 'running a private PostgreSQL needs root (to run it as the postgres user)';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-fault-pg-'));
  const remove = () => {
    asPostgres([path.join(bin, 'pg_ctl'), '-D', path.join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const chown = spawnSync('chown', ['postgres:postgres', dir]);
    if (chown.status !== 0) throw new Error('cannot hand the cluster directory to the postgres user');
    const port = await freePort();
    const init = asPostgres([
      path.join(bin, 'initdb'),
      '-D',
      path.join(dir, 'data'),
      '-A',
      'trust',
      '-U',
      'root',
      '--no-sync',
    ]);
    if (init.status !== 0) throw new Error(`initdb failed: ${init.output}`);
    const ctl = (action: 'start' | 'stop') => {
      const args =
        action === 'start'
          ? [
              '-o',
              `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
              '-l',
              path.join(dir, 'log'),
            ]
          : ['-m', 'fast'];
      const result = asPostgres([
        path.join(bin, 'pg_ctl'),
        '-D',
        path.join(dir, 'data'),
        ...args,
        '-w',
        action,
      ]);
      if (result.status !== 0) throw new Error(`pg_ctl ${action} failed: ${result.output}`);
    };
    ctl('start');
    return {
      url: `postgres://root@127.0.0.1:${port}/postgres`,
      stop: () => ctl('stop'),
      start: () => ctl('start'),
      remove,
    };
  } catch (error) {
    remove();
    return (error as Error).message;
  }
}
