import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openSqlite } from '../../src/store/dialects/sqlite-drivers.js';
import { startServe, vigil } from '../helpers/cli.js';

const MB = 1024 * 1024;
/** The filesystem the store lives on, and the room the store keeps free on it. */
const DISK = '48m';
const MIN_FREE = '12MB';

/** Mounts a small tmpfs of its own; answers why it cannot when mounting is not permitted. */
function mountSmallDisk(): { dir: string; unmount(): void } | string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-fault-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return `mounting a tmpfs is not permitted here (${(mounted.stderr || String(mounted.error)).trim()}); it needs root`;
  }
  return {
    dir,
    unmount() {
      spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A SQLite data directory on a 48 MB filesystem, filled by ingest: writes answer 507 before SQLite
 * runs out of room, reads and deletes keep working, /health says degraded, ingest resumes after
 * messages are deleted through the API, a restart on a completely full disk still serves, and the
 * database passes PRAGMA integrity_check.
 */
const disk = mountSmallDisk();
const skip = typeof disk === 'string' ? disk : false;
describe('a full disk under the SQLite store', { skip }, () => {
  const { dir } = disk as Exclude<typeof disk, string>;
  const env = { DATA_DIR: dir, MIN_FREE_DISK: MIN_FREE };
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  let token = '';
  let bucket = '';

  before(() => {
    const boot = vigil(
      ['bootstrap', '--email', 'f@example.com', '--name', 'F', '--password', 'a long passphrase', '--json'],
      env,
    );
    assert.equal(boot.status, 0, boot.stderr);
    ({ access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout));
  });
  after(async () => {
    await serve?.stop();
    (disk as Exclude<typeof disk, string>).unmount();
  });

  const api = (method: string, url: string, body?: unknown) =>
    fetch(`${serve!.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const batch = (n: number) =>
    Array.from({ length: 10 }, (_, i) => ({
      request: { method: 'POST', url: `https://fill.test/${n}/${i}`, body: `${n}-${i}-`.padEnd(50_000, 'x') },
    }));
  const health = async () =>
    (await (await fetch(`${serve!.url}/health`)).json()) as { status: string; reason?: string };

  test('507 before SQLite fails; reads, deletes and /health keep working; ingest resumes after deleting', async () => {
    serve = await startServe(env);
    let refused: Response | null = null;
    let stored = 0;
    for (let n = 0; n < 200 && !refused; n++) {
      const response = await api('POST', `/buckets/${bucket}/messages`, batch(n));
      if (response.status === 201) stored += 10;
      else refused = response;
    }
    assert.ok(refused, 'the disk filled up');
    assert.equal(refused.status, 507, await refused.clone().text());
    const error = (await refused.json()).error;
    assert.equal(error.code, 'storage_full');
    assert.match(error.message, /MIN_FREE_DISK/);
    assert.ok(stored >= 200, `messages stored before the disk filled: ${stored}`);
    const free = fs.statfsSync(dir);
    assert.ok(free.bavail * free.bsize > 4 * MB, 'SQLite never ran out: the room kept is still there');

    assert.equal((await health()).status, 'degraded');
    assert.match((await health()).reason ?? '', /MIN_FREE_DISK/);
    const trigger = await api('POST', `/buckets/${bucket}/tests`, { name: 'No room' });
    assert.equal(trigger.status, 507);

    const listed = await api('GET', `/buckets/${bucket}/messages?count=5`);
    assert.equal(listed.status, 200);
    const [first] = (await listed.json()).data as { uuid: string }[];
    assert.equal((await api('DELETE', `/buckets/${bucket}/messages/${first!.uuid}`)).status, 204);
    assert.equal((await api('DELETE', `/buckets/${bucket}/messages`)).status, 204);

    const again = await api('POST', `/buckets/${bucket}/messages`, batch(1_000));
    assert.equal(again.status, 201, await again.clone().text());
    assert.equal((await health()).status, 'ok');
    await serve.stop();
    serve = undefined;
  });

  test('a restart on a completely full disk serves reads and answers 507 to writes', async () => {
    // Something else fills the filesystem to the last byte while the service is down.
    const filler = path.join(dir, 'filler');
    const fd = fs.openSync(filler, 'w');
    const block = Buffer.alloc(MB);
    try {
      for (;;) fs.writeSync(fd, block);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
    } finally {
      fs.closeSync(fd);
    }
    try {
      serve = await startServe(env);
      assert.equal((await health()).status, 'degraded');
      assert.equal((await api('GET', `/buckets/${bucket}/messages`)).status, 200);
      const refused = await api('POST', `/buckets/${bucket}/messages`, batch(2_000));
      assert.equal(refused.status, 507);
      await serve.stop();
      serve = undefined;
    } finally {
      fs.rmSync(filler, { force: true });
    }
    const db = openSqlite(path.join(dir, 'vigil.db'), undefined, { readOnly: true });
    try {
      assert.deepEqual(db.prepare('pragma integrity_check').all([]), [{ integrity_check: 'ok' }]);
    } finally {
      db.close();
    }
  });
});
