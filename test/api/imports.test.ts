import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { describeApi } from '../helpers/api.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/import/${name}`, import.meta.url), 'utf8');

await describeApi('imports', (get) => {
  async function bucket(): Promise<string> {
    const created = await get().data('POST', '/buckets', {
      name: `imports ${randomBytes(4).toString('hex')}`,
    });
    return created.key;
  }
  const importsOf = (key: string) => `/buckets/${key}/imports`;
  const testCount = async (key: string) => (await get().data('GET', `/buckets/${key}/tests`)).length;

  test('dry run: the preview of a Postman collection with its environment, nothing created', async () => {
    const key = await bucket();
    const response = await get().call({
      method: 'POST',
      url: importsOf(key),
      body: {
        content: fixture('bookshop.postman_collection.json'),
        environment: JSON.parse(fixture('bookshop.postman_environment.json')),
        dry_run: true,
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    const data = response.json().data;
    assert.equal(data.dry_run, true);
    assert.equal(data.format, 'postman');
    assert.deepEqual(
      data.tests.map((t: { name: string; step_count: number }) => [t.name, t.step_count]),
      [
        ['Bookshop API / Auth', 2],
        ['Bookshop API / Books', 4],
        ['Bookshop API / Partners', 3],
        ['Bookshop API', 1],
      ],
    );
    assert.equal(data.tests[0].steps[0].variables, 2);
    assert.ok(data.notes.length > 0);
    assert.equal(await testCount(key), 0);
  });

  test('create: OpenAPI tests with environment, revisions, and delete works like any test', async () => {
    const key = await bucket();
    const created = await get().data('POST', importsOf(key), {
      content: fixture('petstore-openapi.yaml'),
      options: { base_url: 'http://127.0.0.1:9/v3' },
    });
    assert.equal(created.dry_run, false);
    assert.equal(created.tests.length, 3);
    assert.equal(await testCount(key), 3);
    const pet = await get().data('GET', `/buckets/${key}/tests/${created.tests[0].id}`);
    assert.equal(pet.name, 'Swagger Petstore - OpenAPI 3.0 / pet');
    assert.equal(pet.steps.length, 8);
    assert.equal(pet.steps[0].url, '{{base_url}}/pet');
    const envs = await get().data('GET', `/buckets/${key}/tests/${pet.id}/environments`);
    assert.equal(envs[0].initial_variables.base_url, 'http://127.0.0.1:9/v3');
    const revisions = await get().call({ method: 'GET', url: `/buckets/${key}/tests/${pet.id}/revisions` });
    assert.match(revisions.body, /"action":"create"/);
    const gone = await get().call({ method: 'DELETE', url: `/buckets/${key}/tests/${pet.id}` });
    assert.equal(gone.statusCode, 204);
  });

  test('curl text and Vigil exports are recognised', async () => {
    const key = await bucket();
    const curl = await get().data('POST', importsOf(key), { content: fixture('chromium-cmd.curl') });
    assert.equal(curl.format, 'curl');
    assert.equal(curl.tests[0].steps[0].method, 'POST');
    const exported = (
      await get().call({ method: 'GET', url: `/buckets/${key}/tests/${curl.tests[0].id}/export` })
    ).json();
    const again = await get().data('POST', importsOf(key), { content: JSON.stringify(exported) });
    assert.equal(again.format, 'runscope');
    assert.equal(again.tests[0].name, exported.name);
  });

  test('captured messages become a test, values chained; foreign messages are not found', async () => {
    const key = await bucket();
    const ingest = await get().call({
      method: 'POST',
      url: `/buckets/${key}/messages`,
      body: [
        {
          request: { method: 'POST', url: 'https://api.example.com/login', body: '{"user":"alice"}' },
          response: { status: 200, body: '{"token":"tok_1234567890"}' },
        },
        {
          request: {
            method: 'GET',
            url: 'https://api.example.com/me',
            headers: { Authorization: ['Bearer tok_1234567890'] },
          },
          response: { status: 200, body: '{"name":"alice"}' },
        },
      ],
    });
    assert.equal(ingest.statusCode, 201, ingest.body);
    const ids = ingest.json().data.map((m: { uuid: string }) => m.uuid);
    const made = await get().data('POST', importsOf(key), {
      format: 'messages',
      message_ids: ids,
      chain: true,
    });
    assert.equal(made.tests.length, 1);
    const detail = await get().data('GET', `/buckets/${key}/tests/${made.tests[0].id}`);
    assert.deepEqual(detail.steps[0].variables, [
      { name: 'token', source: 'response_json', property: 'token' },
    ]);
    assert.deepEqual(detail.steps[1].headers.Authorization, ['Bearer {{token}}']);

    await get().expectError(
      { method: 'POST', url: importsOf(get().bob.bucketKey), body: { format: 'messages', message_ids: ids } },
      404,
      'not_found',
    );
    const other = await bucket();
    await get().expectError(
      {
        method: 'POST',
        url: importsOf(other),
        body: { format: 'messages', message_ids: ids, dry_run: true },
      },
      404,
      'not_found',
    );
  });

  test('bad input: 400 naming the field; scopes; foreign bucket', async () => {
    const key = await bucket();
    const url = importsOf(key);
    const bad: [unknown, string][] = [
      [{}, '/content'],
      [{ content: '' }, '/content'],
      [{ content: '{"info": ' }, '/content'],
      [{ content: 'hello' }, '/content'],
      [{ content: 'x', format: 'word' }, '/format'],
      [{ content: fixture('petstore-swagger2.json'), options: { split: 'folder' } }, '/options/split'],
      [{ content: fixture('petstore-swagger2.json'), options: { surprise: 1 } }, '/options'],
      [{ format: 'messages', message_ids: [] }, '/message_ids'],
      [{ format: 'messages', message_ids: Array.from({ length: 51 }, (_, i) => `m${i}`) }, '/message_ids'],
      [
        {
          content: {
            info: { _postman_id: 'x' },
            item: [{ request: { url: 'https://x.test', header: [{ key: 'X', value: 'v'.repeat(20_000) }] } }],
          },
        },
        '/content',
      ],
    ];
    // Sent as text: the test's own JSON.stringify could not write it.
    const deep = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    bad.push(
      [`{"content":${deep},"dry_run":true}`, '/content'],
      [`{"content":"{}","environment":{"a":${deep}}}`, '/environment'],
    );
    for (const [body, field] of bad) {
      const response = await get().call({ method: 'POST', url, body });
      assert.equal(response.statusCode, 400, `${JSON.stringify(body).slice(0, 80)}: ${response.body}`);
      const error = response.json().error;
      assert.ok(
        String(error.field ?? '').startsWith(field) && error.message.includes(field),
        `${JSON.stringify(body).slice(0, 80)}: ${error.field} ${error.message}`,
      );
    }
    const readOnly = await get().tokenWith(['api:read']);
    await get().expectError(
      { method: 'POST', url, body: { content: fixture('chromium-bash.curl') }, as: readOnly },
      403,
      'forbidden',
    );
    await get().expectError(
      { method: 'POST', url, body: { content: fixture('chromium-bash.curl') }, as: get().bob },
      404,
      'not_found',
    );
    assert.equal(await testCount(key), 0);
  });

  test('mangled files never answer 5xx', async () => {
    const key = await bucket();
    const sources = [
      fixture('bookshop.postman_collection.json'),
      fixture('petstore-swagger2.json'),
      fixture('petstore-openapi.yaml'),
      fixture('chromium-bash.curl'),
      fixture('chromium-cmd.curl'),
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let round = 0; round < 30; round += 1) {
      const source = sources[round % sources.length]!;
      const chars = [...source];
      for (let n = 0; n < 5; n += 1) {
        const at = Math.floor(random() * chars.length);
        const pick = ['', '{', '"', '$ref', '\\', '\u0000', '^', "'", '[', '{{x}}'][
          Math.floor(random() * 10)
        ]!;
        chars.splice(at, Math.floor(random() * 40), pick);
      }
      const response = await get().call({
        method: 'POST',
        url: importsOf(key),
        body: { content: chars.join(''), dry_run: true },
      });
      assert.ok(
        [200, 400].includes(response.statusCode),
        `round ${round}: ${response.statusCode} ${response.body}`,
      );
    }
  });
});
