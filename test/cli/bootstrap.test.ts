import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, startServe, vigil } from '../helpers/cli.js';
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
          // The server answering at PUBLIC_URL serves this store: it takes the token.
          { ...env, PUBLIC_URL: server.url },
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

describe('vigil bootstrap beside a server of another store', () => {
  const serverDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-server-'));
  const cloneDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-clone-'));
  let server: Awaited<ReturnType<typeof startServe>>;
  before(async () => {
    server = await startServe({ DATA_DIR: serverDir, DATABASE_URL: '' });
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(serverDir, { recursive: true, force: true });
    fs.rmSync(cloneDir, { recursive: true, force: true });
  });

  test('without --url it says which store it wrote to and fails when the server refuses the token', () => {
    const result = vigil(['bootstrap', ...CREDENTIALS], {
      DATA_DIR: cloneDir,
      DATABASE_URL: '',
      PUBLIC_URL: server.url,
    });
    assert.equal(result.status, 4, result.stdout + result.stderr);
    assert.equal(result.stdout, '');
    assert.ok(result.stderr.includes(path.join(cloneDir, 'vigil.db')), result.stderr);
    assert.ok(result.stderr.includes(`vigil bootstrap --url ${server.url}`), result.stderr);
  });

  test('the text output names the store it wrote to', () => {
    const result = vigil(['bootstrap', ...CREDENTIALS], {
      DATA_DIR: cloneDir,
      DATABASE_URL: '',
      PUBLIC_URL: 'http://127.0.0.1:9',
    });
    assert.equal(result.status, 0, result.stderr);
    assert.ok(
      result.stdout.includes(`SQLite ${path.join(cloneDir, 'vigil.db')} (DATA_DIR=${cloneDir})`),
      result.stdout,
    );
  });

  test('--url creates the account through the server, whose API then takes the token', async () => {
    const env = { DATA_DIR: cloneDir, DATABASE_URL: '' };
    const made = vigil(['bootstrap', ...CREDENTIALS, '--url', server.url, '--json'], env);
    assert.equal(made.status, 0, made.stderr);
    const line = JSON.parse(made.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(line).sort(), [
      'access_token',
      'account_id',
      'bucket_key',
      'client_id',
      'client_secret',
    ]);
    const headers = { authorization: `Bearer ${line.access_token}` };
    const account = (await (await fetch(`${server.url}/account`, { headers })).json()) as {
      data: { id: string; email: string };
    };
    assert.equal(account.data.id, line.account_id);
    assert.equal(account.data.email, 'ops@example.com');
    const tests = await fetch(`${server.url}/buckets/${line.bucket_key}/tests`, { headers });
    assert.equal(tests.status, 200);
    // Only the application's token is left live: the sign-in's dashboard token was revoked.
    const tokens = (await (await fetch(`${server.url}/account/tokens`, { headers })).json()) as {
      data: { kind: string }[];
    };
    assert.deepEqual(
      tokens.data.map((t) => t.kind),
      ['personal'],
    );

    const again = vigil(['bootstrap', ...CREDENTIALS, '--url', server.url], env);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`Account Ops@Example.com exists in the server at ${server.url}`));
    assert.match(again.stdout, new RegExp(`Default bucket: +${line.bucket_key}`));

    const wrong = vigil(
      [
        'bootstrap',
        '--email',
        'ops@example.com',
        '--name',
        'Ops',
        '--password',
        'not the one',
        '--url',
        server.url,
      ],
      env,
    );
    assert.equal(wrong.status, 3, wrong.stdout + wrong.stderr);
    assert.match(wrong.stderr, /password does not match/);
  });

  test('--url with nothing listening says so', async () => {
    const result = vigil(['bootstrap', ...CREDENTIALS, '--url', `http://127.0.0.1:${await freePort()}`], {});
    assert.equal(result.status, 1);
    assert.match(result.stderr, /no server answers at/);
  });
});

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
