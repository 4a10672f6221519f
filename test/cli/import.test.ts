import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { importCommand, type ImportIo } from '../../src/cli/import.js';
import { describeApi } from '../helpers/api.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/import/${name}`, import.meta.url));

await describeApi('vigil import', (get) => {
  /** Runs the command with its requests answered by the API under test. */
  async function vigilImport(args: string[], env: Record<string, string> = {}) {
    let out = '';
    let err = '';
    const requests: { url: string; body: any }[] = [];
    const io: ImportIo = {
      env,
      out: (t) => (out += t),
      err: (t) => (err += t),
      fetch: (async (input: URL, init: RequestInit) => {
        const url = new URL(input);
        requests.push({ url: url.toString(), body: JSON.parse(String(init.body)) });
        const response = await get().app.inject({
          method: 'POST',
          url: url.pathname,
          headers: init.headers as Record<string, string>,
          payload: String(init.body),
        });
        return new Response(response.body, { status: response.statusCode });
      }) as typeof fetch,
    };
    const code = await importCommand(args, { publicUrl: 'http://vigil.test' }, io);
    return { code, out, err, requests };
  }

  test('dry run of a Postman collection with its environment prints the preview', async () => {
    const { alice } = get();
    const r = await vigilImport([
      fixture('bookshop.postman_collection.json'),
      '--bucket',
      alice.bucketKey,
      '--token',
      alice.token,
      '--environment',
      fixture('bookshop.postman_environment.json'),
      '--split',
      'request',
      '--dry-run',
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Would create 10 tests from postman:/);
    assert.match(r.out, /Bookshop API \/ Books \/ List books \(1 step\)/);
    assert.equal(r.requests[0]!.url, `http://vigil.test/buckets/${alice.bucketKey}/imports`);
    assert.equal(r.requests[0]!.body.environment.name, 'Bookshop staging');
    assert.deepEqual(r.requests[0]!.body.options, { split: 'request' });
    const tests = await get().data('GET', `/buckets/${alice.bucketKey}/tests`);
    assert.equal(tests.length, 0);
  });

  test('creates the tests; token and URL from the environment; --json', async () => {
    const { alice } = get();
    const r = await vigilImport(
      [
        fixture('petstore-swagger2.json'),
        '--bucket',
        alice.bucketKey,
        '--base-url',
        'http://127.0.0.1:9/v2',
        '--json',
      ],
      { VIGIL_TOKEN: alice.token, VIGIL_URL: 'http://elsewhere.test' },
    );
    assert.equal(r.code, 0, r.err);
    assert.ok(r.requests[0]!.url.startsWith('http://elsewhere.test/'));
    const data = JSON.parse(r.out);
    assert.equal(data.dry_run, false);
    assert.equal(data.tests.length, 3);
    assert.ok(data.tests.every((t: { id?: string }) => typeof t.id === 'string'));
  });

  test('usage errors exit 2, refusals of the server exit 1 with its message', async () => {
    const { alice } = get();
    assert.equal((await vigilImport([fixture('chromium-bash.curl'), '--token', 'x'])).code, 2);
    assert.equal((await vigilImport([fixture('chromium-bash.curl'), '--bucket', 'b'])).code, 2);
    const badSplit = await vigilImport([
      fixture('chromium-bash.curl'),
      '--bucket',
      'b',
      '--token',
      't',
      '--split',
      'x',
    ]);
    assert.equal(badSplit.code, 2);
    const missing = await vigilImport(['/nonexistent/file.json', '--bucket', 'b', '--token', 't']);
    assert.equal(missing.code, 2);
    const refused = await vigilImport([
      fixture('chromium-bash.curl'),
      '--bucket',
      alice.bucketKey,
      '--token',
      alice.token,
      '--format',
      'openapi',
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /answered 400: \/content/);
  });
});
