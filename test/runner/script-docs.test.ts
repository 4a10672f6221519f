import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  type ScriptJob,
  type ScriptRequest,
  type ScriptResponse,
  ScriptSandbox,
} from '../../src/runner/sandbox/sandbox.js';

/**
 * Every JavaScript example in docs/scripts.md runs, as written, in the sandbox, as the kind of
 * script its first line names, and passes. Examples check themselves with `assert`; what a
 * pre-request example does to the request is checked here too.
 */
const DOC = readFileSync(new URL('../../docs/scripts.md', import.meta.url), 'utf8');
const EXAMPLES = [...DOC.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

const REQUEST: ScriptRequest = {
  method: 'POST',
  url: 'https://api.example.test/v1/items?page=2',
  host: 'api.example.test',
  path: '/v1/items',
  scheme: 'https',
  params: { page: ['2'] },
  headers: { Accept: ['application/json'], 'X-Debug': ['1'] },
  body: '{"name":"a"}',
  form: {},
};

const RESPONSE: ScriptResponse = {
  status: 200,
  reason: 'OK',
  headers: { 'content-type': ['application/json; charset=utf-8'] },
  body: '{"token":"abc123","items":[{"id":1},{"id":2}]}',
  response_time_ms: 84.2,
  size_bytes: 47,
};

function jobFor(code: string): ScriptJob {
  const kind = /^\/\/ (pre-request|post-response|environment) script\n/.exec(code)?.[1];
  const variables = { user: 'alice', password: 's3cret' };
  switch (kind) {
    case 'pre-request':
      return { code, variables, request: structuredClone(REQUEST), requestWritable: true };
    case 'post-response':
      return { code, variables, request: REQUEST, response: RESPONSE };
    case 'environment':
      return { code, variables };
    default:
      throw new Error(`an example must start with its kind of script:\n${code}`);
  }
}

describe('docs/scripts.md examples', () => {
  let sandbox: ScriptSandbox;
  before(() => {
    sandbox = ScriptSandbox.start({ threads: 1 });
  });
  after(async () => {
    await sandbox.close();
  });

  test('the page has examples of every kind of script', () => {
    for (const kind of ['pre-request', 'post-response', 'environment']) {
      assert.ok(
        EXAMPLES.some((code) => code.startsWith(`// ${kind} script\n`)),
        kind,
      );
    }
  });

  for (const [index, code] of EXAMPLES.entries()) {
    test(`example ${index + 1}: ${code.split('\n')[1] ?? ''}`, async () => {
      const outcome = await sandbox.run(jobFor(code));
      assert.equal(outcome.error, null, code);
      assert.equal(outcome.ok, true);
    });
  }

  test('the pre-request example changes what is sent', async () => {
    const code = EXAMPLES.find((c) => c.includes("request.url = request.url.replace('/v1/', '/v2/')"));
    assert.ok(code !== undefined);
    const outcome = await sandbox.run(jobFor(code));
    assert.equal(outcome.request?.url, 'https://api.example.test/v2/items?page=2');
    assert.deepEqual(outcome.request?.headers, {
      Accept: ['application/json'],
      'X-Request-Id': ['local'],
      'X-Client': ['vigil'],
    });
    assert.deepEqual(JSON.parse(outcome.request?.body ?? '').item, { name: 'a' });
  });

  test('variables set by the examples are strings, for the steps after them', async () => {
    const code = EXAMPLES.find((c) => c.includes("variables.set('token', body.token)"));
    assert.ok(code !== undefined);
    const outcome = await sandbox.run(jobFor(code));
    assert.equal(outcome.variables.token, 'abc123');
    assert.equal(outcome.variables.item_count, '2');
    const environment = EXAMPLES.find((c) => c.startsWith('// environment script'));
    assert.ok(environment !== undefined);
    const env = await sandbox.run(jobFor(environment));
    assert.equal(env.variables.run_label, 'monitor-1970-01-01');
    assert.equal(env.variables.auth_header, 'Basic YWxpY2U6czNjcmV0');
    assert.equal(env.output, 'environment ready for alice');
  });

  test('the log example writes the lines the page describes', async () => {
    const code = EXAMPLES.find((c) => c.includes("log('status'"));
    assert.ok(code !== undefined);
    const outcome = await sandbox.run(jobFor(code));
    assert.equal(outcome.output, 'status 200 took 84.2 ms\n{"token":"abc123"}');
  });

  test('the limits are the ones the page states', async () => {
    const slow = await sandbox.run({ code: 'for (;;) {}', variables: {} });
    assert.equal(slow.error, 'script exceeded its 1000 ms time limit');
    assert.ok(DOC.includes('`script exceeded its 1000 ms time limit`'));
    const loud = await sandbox.run({
      code: "for (let i = 0; i < 10000; i++) log('x'.repeat(100));",
      variables: {},
    });
    assert.equal(loud.ok, true);
    assert.ok(loud.output.endsWith('… output cut at 65536 bytes'));
    assert.ok(DOC.includes('`… output cut at 65536 bytes`'));
    const network = await sandbox.run({
      code: "assert.equal(typeof fetch, 'undefined'); assert.equal(typeof require, 'undefined');",
      variables: {},
    });
    assert.equal(network.error, null);
  });
});
