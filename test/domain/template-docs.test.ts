import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { FORMAT_DIRECTIVES, renderTemplate, TEMPLATE_FUNCTIONS } from '../../src/domain/templates.js';

/**
 * docs/templates.md lists every template function with an example and its output; each example is
 * resolved here with the variables and the time the page states, and gives that output (random
 * ones: an output of the same shape).
 */
const DOC = readFileSync(new URL('../../docs/templates.md', import.meta.url), 'utf8');
const ROWS = [...DOC.matchAll(/^\| `(\w+)` \|.*\| `(\{\{.*\}\})` \| (e\.g\. )?`([^`]*)` \|$/gm)].map((m) => ({
  fn: m[1] ?? '',
  example: m[2] ?? '',
  random: m[3] !== undefined,
  output: m[4] ?? '',
}));

const CONTEXT = {
  variables: { user: 'alice', password: 'secret', ts: '1700000000' },
  now: () => 1_700_000_000_000,
};

/** The same length, letters and digits where the sample has them, every other character as is. */
function shapeOf(sample: string): RegExp {
  const parts = [...sample].map((c) =>
    /[A-Za-z0-9]/.test(c) ? '[A-Za-z0-9]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
  return new RegExp(`^${parts.join('')}$`);
}

describe('docs/templates.md', () => {
  test('states the variables and the time its examples use', () => {
    assert.match(DOC, /`user` = `alice`, `password` = `secret`,\s+`ts` = `1700000000`/);
    assert.match(DOC, /2023-11-14T22:13:20Z \(Unix time `1700000000`\)/);
  });

  test('has one example for every function', () => {
    assert.deepEqual(ROWS.map((r) => r.fn).sort(), [...TEMPLATE_FUNCTIONS].sort());
  });

  for (const row of ROWS) {
    test(`${row.example} gives ${row.random ? 'e.g. ' : ''}${row.output}`, () => {
      assert.ok(row.example.includes(row.fn));
      for (let i = 0; i < (row.random ? 20 : 1); i++) {
        const rendered = renderTemplate(row.example, CONTEXT);
        assert.ok(rendered.ok, rendered.ok ? '' : rendered.error);
        if (row.random) assert.match(rendered.value, shapeOf(row.output));
        else assert.equal(rendered.value, row.output);
      }
    });
  }

  test('random_int stays within the bounds of its example', () => {
    for (let i = 0; i < 100; i++) {
      const rendered = renderTemplate('{{random_int(1, 6)}}', CONTEXT);
      assert.ok(rendered.ok && Number(rendered.value) >= 1 && Number(rendered.value) <= 6);
    }
  });

  test('lists every format_timestamp directive', () => {
    for (const [directive, meaning] of Object.entries(FORMAT_DIRECTIVES)) {
      assert.ok(DOC.includes(`| \`%${directive}\` | ${meaning} |`), directive);
    }
  });

  test('the syntax examples hold', () => {
    const hashed = renderTemplate('{{md5({{user}}:{{password}})}}', CONTEXT);
    const direct = renderTemplate("{{md5('alice:secret')}}", CONTEXT);
    assert.ok(hashed.ok && direct.ok);
    assert.equal(hashed.value, direct.value);
    assert.deepEqual(renderTemplate('{{ user }}', CONTEXT), { ok: true, value: 'alice' });
    assert.deepEqual(renderTemplate('{{timestamp}}', CONTEXT), renderTemplate('{{timestamp()}}', CONTEXT));
    assert.deepEqual(renderTemplate('a {{ b', CONTEXT), { ok: true, value: 'a {{ b' });
    const missing = renderTemplate('{{user_id}}', CONTEXT);
    assert.equal(missing.ok ? '' : missing.error, 'variable "user_id" is not defined');
    assert.deepEqual(renderTemplate("{{encode_base64('{{user}}')}}", CONTEXT), {
      ok: true,
      value: Buffer.from('{{user}}').toString('base64'),
    });
    assert.equal(renderTemplate('{{md5(,)}}', CONTEXT).ok, false);
  });
});
