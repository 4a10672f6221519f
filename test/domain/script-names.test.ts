import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCRIPT_GLOBALS, SCRIPT_MEMBERS, TEMPLATE_FUNCTION_NAMES } from '../../src/domain/script-names.js';
import { renderTemplate, TEMPLATE_FUNCTIONS } from '../../src/domain/templates.js';
import { type ScriptJob, ScriptSandbox } from '../../src/runner/sandbox/sandbox.js';

const REQUEST: NonNullable<ScriptJob['request']> = {
  method: 'GET',
  url: 'https://api.example.test/items?page=2',
  host: 'api.example.test',
  path: '/items',
  scheme: 'https',
  params: { page: ['2'] },
  headers: { Accept: ['application/json'] },
  body: '',
  form: {},
};

const RESPONSE: NonNullable<ScriptJob['response']> = {
  status: 200,
  reason: 'OK',
  headers: {},
  body: '{}',
  response_time_ms: 1,
  size_bytes: 2,
};

/**
 * The names the editors offer must be the names scripts and templates have: every one is looked
 * up where it runs, and nothing the sandbox gives a script is missing from the list.
 */
describe('completion names', () => {
  let sandbox: ScriptSandbox;
  before(() => {
    sandbox = ScriptSandbox.start({ threads: 1 });
  });
  after(async () => {
    await sandbox.close();
  });

  /** `typeof` of each expression, evaluated in a post-response script with a request too. */
  async function typesOf(expressions: string[]): Promise<Record<string, string>> {
    const code = `for (const e of ${JSON.stringify(expressions)}) variables.set(e, eval('typeof ' + e));`;
    const outcome = await sandbox.run({ code, variables: {}, request: REQUEST, response: RESPONSE });
    assert.equal(outcome.error, null);
    return outcome.variables;
  }

  test('every script global exists in the sandbox, with its kind', async () => {
    const types = await typesOf(SCRIPT_GLOBALS.map((g) => g.name));
    for (const global of SCRIPT_GLOBALS) {
      // Chai's assert is a function with members; the other objects are plain objects.
      const expected = global.kind === 'function' ? ['function'] : ['object', 'function'];
      assert.ok(
        expected.includes(types[global.name] ?? 'undefined'),
        `${global.name}: ${types[global.name]}`,
      );
    }
  });

  test('every member exists on its global, with its kind', async () => {
    const expressions = Object.entries(SCRIPT_MEMBERS).flatMap(([owner, members]) =>
      members.map((m) => `${owner}.${m.name}`),
    );
    const types = await typesOf(expressions);
    for (const [owner, members] of Object.entries(SCRIPT_MEMBERS)) {
      assert.ok(
        SCRIPT_GLOBALS.some((g) => g.name === owner),
        owner,
      );
      for (const member of members) {
        const type = types[`${owner}.${member.name}`];
        if (member.kind === 'function') assert.equal(type, 'function', `${owner}.${member.name}`);
        else assert.notEqual(type, 'undefined', `${owner}.${member.name}`);
      }
    }
  });

  test('the request and response members are all their fields', () => {
    const names = (owner: string) => (SCRIPT_MEMBERS[owner] ?? []).map((m) => m.name).sort();
    assert.deepEqual(names('request'), Object.keys(REQUEST).sort());
    assert.deepEqual(names('response'), Object.keys(RESPONSE).sort());
  });

  test('the list names every global a script has beyond the language', async () => {
    const outcome = await sandbox.run({
      code: `log(Object.getOwnPropertyNames(globalThis).filter((n) => /^[a-z]/.test(n)).join(','));`,
      variables: {},
    });
    assert.equal(outcome.error, null);
    // Lower-case globals are the sandbox's own (built-ins are capitalised, or language functions).
    const language = new Set([
      'globalThis',
      'parseInt',
      'parseFloat',
      'isNaN',
      'isFinite',
      'decodeURI',
      'decodeURIComponent',
      'encodeURI',
      'encodeURIComponent',
      'escape',
      'unescape',
      'undefined',
      'eval',
    ]);
    const own = outcome.output.split(',').filter((n) => !language.has(n));
    const listed = new Set(SCRIPT_GLOBALS.map((g) => g.name));
    assert.ok(own.includes('encode_base64'), outcome.output);
    for (const name of own) assert.ok(listed.has(name), `${name} is a script global the list lacks`);
  });

  test('the template functions are exactly the engine’s, and each can be called', () => {
    assert.deepEqual(TEMPLATE_FUNCTION_NAMES.map((f) => f.name).sort(), [...TEMPLATE_FUNCTIONS].sort());
    for (const fn of TEMPLATE_FUNCTION_NAMES) {
      // A wrong arity names the function: proof the engine knows it as a function, not a variable.
      const rendered = renderTemplate(`{{${fn.name}('a', 'b', 'c')}}`, { variables: {} });
      assert.equal(rendered.ok, false);
      assert.match(rendered.ok ? '' : rendered.error, new RegExp(`function "${fn.name}" takes`));
    }
  });
});
