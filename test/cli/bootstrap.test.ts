import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { startServe, vigil } from '../helpers/cli.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';

const CREDENTIALS = ['--email', 'Ops@Example.com', '--name', 'Ops', '--password', 'a long passphrase'];

for (const { fixture, skip } of await dialects()) {
  describe(`vigil bootstrap and serve [${fixture.name}]`, { skip }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-'));
    const database = fixture.name === 'postgres' ? await freshPostgresDatabase() : undefined;
    const env = { DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '' };
    after(async () => {
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    let first: Record<string, string>;

    test('--json prints exactly one line with the five fields, and the store is ready', () => {
      const result = vigil(['bootstrap', ...CREDENTIALS, '--json'], env);
      assert.equal(result.status, 0, result.stderr);
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 1);
      first = JSON.parse(lines[0]!);
      assert.deepEqual(Object.keys(first).sort(), [
        'access_token',
        'account_id',
        'bucket_key',
        'client_id',
        'client_secret',
      ]);
      assert.match(first.bucket_key!, /^[a-z0-9]{12}$/);
      assert.ok(first.access_token!.length >= 30);
    });

    test('again with the right password: same account and bucket, a new token; wrong password fails', () => {
      const again = vigil(['bootstrap', ...CREDENTIALS, '--json'], env);
      assert.equal(again.status, 0, again.stderr);
      const second = JSON.parse(again.stdout);
      assert.equal(second.account_id, first.account_id);
      assert.equal(second.bucket_key, first.bucket_key);
      assert.notEqual(second.access_token, first.access_token);

      const wrong = vigil(
        ['bootstrap', '--email', 'ops@example.com', '--name', 'Ops', '--password', 'not the one', '--json'],
        env,
      );
      assert.notEqual(wrong.status, 0);
      assert.equal(wrong.stdout, '');
      assert.match(wrong.stderr, /password does not match/);
      assert.doesNotMatch(wrong.stderr, /not the one/);
    });

    test('missing options print usage and exit 2', () => {
      const result = vigil(['bootstrap', '--email', 'x@example.com'], env);
      assert.equal(result.status, 2);
      assert.match(result.stderr, /usage: vigil bootstrap/);
    });

    test('a running server accepts the printed token; bootstrap works beside it', async () => {
      const server = await startServe(env);
      try {
        const headers = { authorization: `Bearer ${first.access_token}`, 'content-type': 'application/json' };
        const created = await fetch(`${server.url}/buckets/${first.bucket_key}/tests`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'From the CLI', description: 'created over HTTP' }),
        });
        assert.equal(created.status, 201);
        const list = await fetch(`${server.url}/buckets/${first.bucket_key}/tests`, { headers });
        const body = (await list.json()) as any;
        assert.equal(body.meta.status, 'success');
        assert.deepEqual(
          body.data.map((t: any) => t.name),
          ['From the CLI'],
        );

        const beside = vigil(
          [
            'bootstrap',
            '--email',
            'second@example.com',
            '--name',
            'Second',
            '--password',
            'another passphrase',
            '--json',
          ],
          env,
        );
        assert.equal(beside.status, 0, beside.stderr);
        const token = JSON.parse(beside.stdout).access_token;
        const account = await fetch(`${server.url}/account`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(((await account.json()) as any).data.email, 'second@example.com');
      } finally {
        await server.stop();
      }
    });
  });
}

describe('vigil command', () => {
  test('unknown commands and bad settings exit 2 with a message', () => {
    const unknown = vigil(['frobnicate'], {});
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    const badPort = vigil(['migrate'], { PORT: 'eighty' });
    assert.equal(badPort.status, 2);
    assert.match(badPort.stderr, /PORT must be a whole number/);
  });
});
