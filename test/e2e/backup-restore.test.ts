import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { bootstrapAccount, ROOT, startServe, vigil } from '../helpers/cli.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';
import { openSqlite } from '../../src/store/dialects/sqlite-drivers.js';

const DOC = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');

/** The commands of the `sh` blocks of one section of docs/operations.md, as the page writes them. */
function sectionCommands(heading: string, next: string): string[] {
  const section = DOC.slice(DOC.indexOf(heading), DOC.indexOf(next));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => (m[1] ?? '').split('\n'))
    .map((line) => line.replace(/\s+# .*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
const SQLITE_COMMANDS = sectionCommands('### SQLite', '### PostgreSQL');
const POSTGRES_COMMANDS = sectionCommands('### PostgreSQL', '## Upgrades');

/** A documented command with the page's paths replaced by the test's. */
function documented(commands: string[], prefix: string, paths: { data?: string; backups: string }): string {
  const command = commands.find((line) => line.startsWith(prefix));
  assert.ok(command !== undefined, `docs/operations.md has no command starting with ${prefix}`);
  return command
    .replaceAll('/var/lib/vigil', paths.data ?? '/nonexistent')
    .replaceAll('/backups', paths.backups);
}

function sh(command: string, env: Record<string, string> = {}): string {
  return execFileSync('sh', ['-c', command], { encoding: 'utf8', env: { ...process.env, ...env } });
}

function missingCommand(command: string, args: string[]): string | false {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return false;
  } catch {
    return `needs ${command}`;
  }
}

type Serve = Awaited<ReturnType<typeof startServe>>;

/** Posts batches of messages to `serve` until stopped; `acknowledged` holds the uuids answered 201. */
function writeMessages(serve: Serve, bucket: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const acknowledged: string[] = [];
  let writing = true;
  const done = (async () => {
    for (let batch = 0; writing; batch++) {
      const items = Array.from({ length: 10 }, (_, i) => ({
        request: {
          method: 'POST',
          url: `https://shop.example.com/orders/${batch}-${i}`,
          body: 'x'.repeat(500),
        },
        response: { status: 201, body: '{"ok":true}' },
      }));
      const response = await fetch(`${serve.url}/buckets/${bucket}/messages`, {
        method: 'POST',
        headers,
        body: JSON.stringify(items),
      });
      assert.equal(response.status, 201, await response.clone().text());
      const answer = (await response.json()) as { data: { uuid: string }[] };
      acknowledged.push(...answer.data.map((r) => r.uuid));
    }
  })();
  return {
    acknowledged,
    /** Resolves once `more` further messages were acknowledged. */
    async more(more: number): Promise<void> {
      const target = acknowledged.length + more;
      while (acknowledged.length < target) await new Promise((resolve) => setTimeout(resolve, 20));
    },
    async stop(): Promise<void> {
      writing = false;
      await done;
    },
  };
}

/** A store restored from a backup has the messages acknowledged before it, not the last one written. */
async function assertRestored(
  env: Record<string, string>,
  bucket: string,
  token: string,
  before: string[],
  last: string,
  servers: Serve[],
): Promise<void> {
  const serve = await startServe(env);
  servers.push(serve);
  const headers = { authorization: `Bearer ${token}` };
  for (const uuid of [before[0], before.at(-1)]) {
    const got = await fetch(`${serve.url}/buckets/${bucket}/messages/${uuid}`, { headers });
    assert.equal(got.status, 200, `message ${uuid} after the restore`);
  }
  const gone = await fetch(`${serve.url}/buckets/${bucket}/messages/${last}`, { headers });
  assert.equal(gone.status, 404, 'a message written after the backup is not in the restored store');
  await serve.stop();
}

/**
 * The backup and restore commands of docs/operations.md, run as written against a live
 * `vigil serve` while it takes writes: every message acknowledged before a backup started is in
 * the backup, and a store restored from it serves them.
 */
// Asked before any test starts: the SQLite test runs commands synchronously, which would hold up
// the connection check.
const postgres = (await dialects()).find((d) => d.fixture.name === 'postgres');
const postgresSkip = postgres?.skip || missingCommand('pg_dump', ['--version']) || !postgres;

describe('SQLite online backup and restore', { skip: missingCommand('sqlite3', ['-version']) }, () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-backup-'));
  const live = path.join(root, 'live');
  const servers: Serve[] = [];
  after(async () => {
    for (const server of servers) await server.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('backups of a store being written restore to a working service', async () => {
    fs.mkdirSync(live);
    const { token, bucket } = bootstrapAccount(live, 'backup@example.com');
    const serve = await startServe({ DATA_DIR: live, DATABASE_URL: '' });
    servers.push(serve);
    const writes = writeMessages(serve, bucket, token);

    const backups: { dir: string; before: string[] }[] = [];
    const takeBackup = async (run: (backups: string) => void) => {
      await writes.more(100);
      const dir = fs.mkdtempSync(path.join(root, 'backups-'));
      const before = writes.acknowledged.slice();
      run(dir);
      backups.push({ dir, before });
    };
    const paths = (dir: string) => ({ data: live, backups: dir });
    await takeBackup((dir) =>
      sh(documented(SQLITE_COMMANDS, 'sqlite3 /var/lib/vigil/vigil.db "VACUUM INTO', paths(dir))),
    );
    await takeBackup((dir) =>
      sh(documented(SQLITE_COMMANDS, `sqlite3 /var/lib/vigil/vigil.db ".backup`, paths(dir))),
    );
    // The same SQL through the SQLite driver this Node runs Vigil on.
    await takeBackup((dir) => {
      const db = openSqlite(path.join(live, 'vigil.db'));
      try {
        db.exec(`VACUUM INTO '${path.join(dir, 'vigil-2026-11-25.db')}'`);
      } finally {
        db.close();
      }
    });
    await writes.more(50);
    await writes.stop();
    await serve.stop();
    const last = writes.acknowledged.at(-1)!;

    for (const [index, backup] of backups.entries()) {
      const file = path.join(backup.dir, 'vigil-2026-11-25.db');
      const check = documented(
        SQLITE_COMMANDS,
        'sqlite3 /backups/vigil-2026-11-25.db "PRAGMA integrity_check"',
        {
          backups: backup.dir,
        },
      );
      assert.equal(sh(check).trim(), 'ok');
      assert.equal(fs.existsSync(`${file}-wal`), false, 'a backup is one file');
      const db = openSqlite(file, undefined, { readOnly: true });
      const stored = new Set(
        (db.prepare('SELECT id AS uuid FROM messages').all([]) as { uuid: string }[]).map((row) => row.uuid),
      );
      db.close();
      const missing = backup.before.filter((uuid) => !stored.has(uuid));
      assert.deepEqual(missing, [], `backup ${index + 1} lacks messages acknowledged before it started`);
      assert.ok(stored.size < writes.acknowledged.length, 'the backup was taken while writes went on');

      // Restore as the page says, into a data directory that held the newer store.
      const restored = path.join(root, `restored-${index}`);
      fs.cpSync(live, restored, { recursive: true });
      for (const prefix of ['rm -f', 'cp', 'chmod']) {
        sh(documented(SQLITE_COMMANDS, prefix, { data: restored, backups: backup.dir }));
      }
      assert.equal(fs.statSync(path.join(restored, 'vigil.db')).mode & 0o777, 0o600);
      await assertRestored(
        { DATA_DIR: restored, DATABASE_URL: '' },
        bucket,
        token,
        backup.before,
        last,
        servers,
      );
    }
  });
});

describe('PostgreSQL backup and restore', { skip: postgresSkip }, () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-pg-backup-'));
  const servers: Serve[] = [];
  let drop: (() => Promise<void>) | undefined;
  after(async () => {
    for (const server of servers) await server.stop();
    await drop?.();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('a pg_dump of a database being written restores over it', async () => {
    const database = await freshPostgresDatabase();
    drop = database.drop;
    const env = { DATA_DIR: root, DATABASE_URL: database.url };
    const boot = vigil(
      ['bootstrap', '--email', 'pg@example.com', '--name', 'P', '--password', 'a long passphrase', '--json'],
      env,
    );
    assert.equal(boot.status, 0, boot.stderr);
    const { access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout) as {
      access_token: string;
      bucket_key: string;
    };
    const serve = await startServe(env);
    servers.push(serve);
    const writes = writeMessages(serve, bucket, token);
    await writes.more(100);
    const before = writes.acknowledged.slice();
    const backups = fs.mkdtempSync(path.join(root, 'backups-'));
    sh(documented(POSTGRES_COMMANDS, 'pg_dump', { backups }), { DATABASE_URL: database.url });
    await writes.more(50);
    await writes.stop();
    await serve.stop();

    sh(documented(POSTGRES_COMMANDS, 'pg_restore', { backups }), { DATABASE_URL: database.url });
    await assertRestored(env, bucket, token, before, writes.acknowledged.at(-1)!, servers);
  });
});
