import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  FORMAT_DIRECTIVES,
  renderTemplate,
  TEMPLATE_FUNCTIONS,
  TEMPLATE_LIMITS,
  templateBudget,
  type TemplateContext,
} from '../../src/domain/templates.js';

/** 2026-11-22T10:39:15.678Z, a Sunday, day 326 of the year. */
const NOW_MS = Date.UTC(2026, 10, 22, 10, 39, 15, 678);
const NOW_S = Math.floor(NOW_MS / 1000);

function ctx(variables: Record<string, string> = {}, extra: Partial<TemplateContext> = {}): TemplateContext {
  return { variables, now: () => NOW_MS, random: () => 0.5, ...extra };
}

/** Renders and expects success. */
function render(text: string, context: TemplateContext = ctx()): string {
  const result = renderTemplate(text, context);
  assert.equal(result.ok, true, result.ok ? '' : result.error);
  return result.ok ? result.value : '';
}

/** Renders and expects failure; returns the error. */
function failure(text: string, context: TemplateContext = ctx()) {
  const result = renderTemplate(text, context);
  assert.equal(result.ok, false, `expected failure, got ${JSON.stringify(result)}`);
  if (result.ok) throw new Error('unreachable');
  return result;
}

/** A random source that replays the given values, then repeats the last. */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)] ?? 0;
}

describe('renderTemplate: variables and literal text', () => {
  test('text without templates is returned unchanged', () => {
    const text = 'plain {"a":{"b":1}} } { ü 😀 \r\n\t\0 end';
    assert.equal(render(text), text);
    assert.equal(render(''), '');
  });

  test('substitutes variables, with whitespace inside the braces', () => {
    const vars = { user_id: '42', 'a.b-c': 'x', _x9: 'y' };
    assert.equal(render('/users/{{user_id}}/{{ a.b-c }}/{{\n\t_x9 \r\n}}', ctx(vars)), '/users/42/x/y');
  });

  test('values are inserted as they are: no escaping, no re-rendering', () => {
    const vars = { v: '<a href="x">&amp;</a>', t: '{{v}}' };
    assert.equal(render('{{v}}|{{t}}', ctx(vars)), '<a href="x">&amp;</a>|{{v}}');
  });

  test('empty values are fine', () => {
    assert.equal(render('[{{e}}]', ctx({ e: '' })), '[]');
  });

  test('an undefined variable fails and names it', () => {
    const result = failure('id={{user_id}}', ctx({ other: '1' }));
    assert.equal(result.error, 'variable "user_id" is not defined');
    assert.equal(result.variable, 'user_id');
  });

  test('names from Object.prototype are not variables', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      assert.equal(failure(`{{${name}}}`).variable, name);
    }
  });

  test('text around templates is kept byte for byte', () => {
    const vars = { a: 'A' };
    assert.equal(render(' \t{ "k": "{{a}}" }}\n{{a}}{{a}}😀', ctx(vars)), ' \t{ "k": "A" }}\nAA😀');
    assert.equal(render('{"x":{{a}}}', ctx(vars)), '{"x":A}');
  });

  test('a {{ without a closing }} after it is kept literally', () => {
    assert.equal(render('a {{ b'), 'a {{ b');
    assert.equal(render('{{'), '{{');
    assert.equal(render('{{a}} then {{ never closed', ctx({ a: '1' })), '1 then {{ never closed');
    assert.equal(render('}} before {{', ctx()), '}} before {{');
  });

  test('malformed expressions fail instead of being kept', () => {
    assert.match(failure('{{}}').error, /expected a variable or function name/);
    assert.match(failure('{{ }}').error, /expected a variable or function name/);
    assert.match(failure('{{1abc}}').error, /expected a variable or function name/);
    assert.match(failure('{{a b}}', ctx({ a: '1' })).error, /expected "}}" after "a"/);
    assert.match(failure('{{a} }}').error, /expected "}}"/);
    assert.match(failure('{{{a}}}').error, /expected a variable or function name/);
    assert.match(failure('x {{ a {{b}}').error, /expected "}}" after "a"/);
  });
});

describe('renderTemplate: function syntax', () => {
  test('TEMPLATE_FUNCTIONS lists exactly the functions of DESIGN §4', () => {
    assert.deepEqual([...TEMPLATE_FUNCTIONS].sort(), [
      'decode_base64',
      'encode_base64',
      'format_timestamp',
      'hmac_sha1',
      'hmac_sha256',
      'md5',
      'random_int',
      'random_string',
      'sha1',
      'sha256',
      'timestamp',
      'timestamp_offset',
      'url_encode',
      'utc_datetime',
      'uuid',
    ]);
  });

  test('every listed function is callable', () => {
    const calls: Record<(typeof TEMPLATE_FUNCTIONS)[number], string> = {
      timestamp: '{{timestamp}}',
      utc_datetime: '{{utc_datetime}}',
      format_timestamp: "{{format_timestamp(0, '%Y')}}",
      timestamp_offset: '{{timestamp_offset(1)}}',
      random_int: '{{random_int}}',
      random_string: '{{random_string(3)}}',
      uuid: '{{uuid}}',
      encode_base64: '{{encode_base64(a)}}',
      decode_base64: "{{decode_base64('YQ==')}}",
      md5: "{{md5('')}}",
      sha1: "{{sha1('')}}",
      sha256: "{{sha256('')}}",
      hmac_sha1: "{{hmac_sha1('', '')}}",
      hmac_sha256: "{{hmac_sha256('', '')}}",
      url_encode: "{{url_encode(' ')}}",
    };
    for (const name of TEMPLATE_FUNCTIONS) {
      assert.ok(render(calls[name], ctx({ a: 'a' })).length > 0, name);
    }
  });

  test('zero-argument functions work bare and with empty parentheses', () => {
    assert.equal(render('{{timestamp}}'), String(NOW_S));
    assert.equal(render('{{ timestamp() }}'), String(NOW_S));
    assert.equal(render('{{timestamp ( ) }}'), String(NOW_S));
  });

  test('function names take precedence over variables of the same name', () => {
    assert.equal(render('{{timestamp}}', ctx({ timestamp: 'mine' })), String(NOW_S));
  });

  test('an unknown function fails and names it', () => {
    assert.equal(failure('{{nope(1)}}').error, 'unknown function "nope"');
    assert.equal(failure('{{md5(nope(1))}}', ctx({ nope: 'x' })).error.includes('md5'), true);
  });

  test('wrong arity fails and names the function', () => {
    assert.equal(failure('{{md5}}').error, 'function "md5" takes 1 argument, got 0');
    assert.equal(failure("{{md5('a','b')}}").error, 'function "md5" takes 1 argument, got 2');
    assert.equal(failure('{{timestamp(1)}}').error, 'function "timestamp" takes 0 arguments, got 1');
    assert.equal(failure('{{random_int(1)}}').error, 'function "random_int" takes 0 or 2 arguments, got 1');
    assert.equal(failure("{{hmac_sha256('a')}}").error, 'function "hmac_sha256" takes 2 arguments, got 1');
    assert.equal(
      failure('{{format_timestamp(1)}}').error,
      'function "format_timestamp" takes 2 arguments, got 1',
    );
  });

  test('quoted arguments: both quote styles, escapes, literal braces and separators', () => {
    assert.equal(render('{{encode_base64("a,b)c")}}'), Buffer.from('a,b)c').toString('base64'));
    assert.equal(
      render("{{url_encode('it\\'s \\\"q\\\" \\\\ \\n\\t\\r \\x')}}"),
      encodeURIComponent('it\'s "q" \\ \n\t\r x'),
    );
    assert.equal(render('{{url_encode("{{a}}}}")}}'), encodeURIComponent('{{a}}}}'));
    assert.equal(render("{{url_encode('')}}"), '');
    assert.equal(render("{{ url_encode (  ' a '  ) }}"), '%20a%20');
  });

  test('unquoted arguments: a whole name is evaluated, anything else is literal text', () => {
    const vars = { user: 'alice', password: 'secret' };
    assert.equal(render('{{url_encode(user)}}', ctx(vars)), 'alice');
    assert.equal(render('{{url_encode(  user  )}}', ctx(vars)), 'alice');
    assert.equal(render('{{url_encode(hello world)}}', ctx(vars)), 'hello%20world');
    assert.equal(render('{{url_encode(-1.5)}}', ctx(vars)), '-1.5');
    assert.equal(render("{{url_encode(it's)}}", ctx(vars)), "it's");
    assert.equal(render('{{url_encode(a+b)}}', ctx(vars)), 'a%2Bb');
    assert.equal(render('{{url_encode(timestamp)}}', ctx(vars)), String(NOW_S));
    assert.equal(failure('{{url_encode(missing)}}', ctx(vars)).variable, 'missing');
  });

  test('nested templates inside unquoted arguments are rendered first, the rest kept', () => {
    const vars = { user: 'alice', password: 'secret' };
    assert.equal(render('{{md5({{user}}:{{password}})}}', ctx(vars)), render("{{md5('alice:secret')}}"));
    assert.equal(render('{{url_encode( pre {{user}} post )}}', ctx(vars)), 'pre%20alice%20post');
    assert.equal(render('{{url_encode({{ user }})}}', ctx(vars)), 'alice');
    // whitespace from a nested value is kept; only the argument's own surrounding whitespace is trimmed
    assert.equal(render('{{url_encode({{sp}})}}', ctx({ sp: ' x ' })), '%20x%20');
    assert.match(
      failure('{{url_encode({{a}},)}}', ctx({ a: 'x' })).error,
      /empty argument in call to url_encode/,
    );
  });

  test('functions nest inside functions', () => {
    assert.equal(render("{{sha1({{md5('abc')}})}}"), render("{{sha1('900150983cd24fb0d6963f7d28e17f72')}}"));
    assert.equal(render("{{decode_base64({{encode_base64('héllo, wörld')}})}}"), 'héllo, wörld');
    assert.equal(
      render('{{hmac_sha256({{user}}, {{key}})}}', ctx({ user: 'u', key: 'k' })),
      render("{{hmac_sha256('u','k')}}"),
    );
    assert.equal(render("{{format_timestamp({{timestamp_offset(60)}}, '%H:%M:%S')}}"), '10:40:15');
  });

  test('an error inside a nested template propagates', () => {
    const result = failure('{{md5({{user}}:{{password}})}}', ctx({ user: 'alice' }));
    assert.equal(result.variable, 'password');
    assert.equal(result.error, 'variable "password" is not defined');
  });

  test('malformed calls fail', () => {
    assert.match(failure('{{md5(a}}').error, /expected "," or "\)" in call to md5/);
    assert.equal(render('{{md5(a'), '{{md5(a');
    assert.match(failure("{{md5('a}}").error, /unterminated string in call to md5/);
    assert.match(failure("{{md5('a' 'b')}}").error, /expected "," or "\)" in call to md5/);
    assert.match(failure("{{md5('a') x}}").error, /expected "}}" after "md5"/);
    assert.match(failure("{{md5('a'),}}").error, /expected "}}"/);
    assert.match(failure('{{md5(,)}}').error, /empty argument in call to md5/);
    assert.match(failure("{{hmac_sha1('a', )}}").error, /empty argument in call to hmac_sha1/);
    assert.match(failure('{{md5(sha1(x))}}', ctx({ x: '1' })).error, /md5/);
  });
});

describe('renderTemplate: time functions', () => {
  test('timestamp is whole Unix seconds from ctx.now', () => {
    assert.equal(render('{{timestamp}}'), '1795343955');
    assert.equal(NOW_S, 1795343955);
  });

  test('utc_datetime is ISO 8601 UTC without fractions', () => {
    assert.equal(render('{{utc_datetime}}'), '2026-11-22T10:39:15Z');
    assert.equal(render('{{utc_datetime}}', ctx({}, { now: () => 0 })), '1970-01-01T00:00:00Z');
  });

  test('timestamp_offset adds whole seconds to now', () => {
    assert.equal(render('{{timestamp_offset(3600)}}'), String(NOW_S + 3600));
    assert.equal(render('{{timestamp_offset(-60)}}'), String(NOW_S - 60));
    assert.equal(render("{{timestamp_offset('+0')}}"), String(NOW_S));
    assert.equal(render('{{timestamp_offset(n)}}', ctx({ n: ' 5 ' })), String(NOW_S + 5));
    assert.match(failure('{{timestamp_offset(1.5)}}').error, /^timestamp_offset: /);
    assert.match(failure('{{timestamp_offset(abc def)}}').error, /^timestamp_offset: /);
    assert.match(failure('{{timestamp_offset(99999999999999999999)}}').error, /^timestamp_offset: /);
  });

  test('format_timestamp supports every documented directive, in UTC', () => {
    const format = Object.keys(FORMAT_DIRECTIVES)
      .map((d) => `%${d}`)
      .join('|');
    assert.equal(
      render(`{{format_timestamp(${NOW_S}, '${format}')}}`),
      `2026|26|11|22|10|10|AM|39|15|326|Nov|November|Sun|Sunday|${NOW_S}|+0000|UTC|%`,
    );
  });

  test('format_timestamp examples', () => {
    assert.equal(render("{{format_timestamp(0, '%Y-%m-%dT%H:%M:%SZ')}}"), '1970-01-01T00:00:00Z');
    assert.equal(
      render("{{format_timestamp(0, '%a, %d %b %Y %H:%M:%S %Z')}}"),
      'Thu, 01 Jan 1970 00:00:00 UTC',
    );
    assert.equal(render("{{format_timestamp(1709251199.9, '%j %I%p')}}"), '060 11PM');
    assert.equal(render("{{format_timestamp(1735689599, '%j')}}"), '366');
    assert.equal(render("{{format_timestamp(-1, '%Y-%m-%d %H:%M:%S')}}"), '1969-12-31 23:59:59');
    assert.equal(render("{{format_timestamp(-62135596800, '%Y %y %j')}}"), '0001 01 001');
    assert.equal(render("{{format_timestamp(0, 'no directives')}}"), 'no directives');
    assert.equal(render("{{format_timestamp(0, '')}}"), '');
    assert.equal(render("{{format_timestamp({{timestamp}}, '%Y')}}"), '2026');
    assert.equal(render("{{format_timestamp(timestamp, '%d/%m/%y')}}"), '22/11/26');
  });

  test('format_timestamp rejects bad values and directives', () => {
    assert.equal(
      failure("{{format_timestamp(abc def, '%Y')}}").error,
      'format_timestamp: "abc def" is not a Unix timestamp in seconds',
    );
    assert.match(failure("{{format_timestamp('', '%Y')}}").error, /^format_timestamp: /);
    assert.match(failure("{{format_timestamp(1e3, '%Y')}}").error, /^format_timestamp: /);
    assert.match(failure("{{format_timestamp(99999999999999, '%Y')}}").error, /^format_timestamp: /);
    assert.equal(
      failure("{{format_timestamp(0, '%Q')}}").error,
      'format_timestamp: unsupported directive "%Q"',
    );
    assert.equal(
      failure("{{format_timestamp(0, 'x%')}}").error,
      'format_timestamp: format ends with a lone "%"',
    );
  });

  test('without ctx.now the real clock is used', () => {
    const before = Math.floor(Date.now() / 1000);
    const value = Number(render('{{timestamp}}', { variables: {} }));
    const after = Math.floor(Date.now() / 1000);
    assert.ok(value >= before && value <= after);
  });
});

describe('renderTemplate: random functions', () => {
  test('random_int without arguments spans 0..2^31-1', () => {
    assert.equal(render('{{random_int}}', ctx({}, { random: () => 0 })), '0');
    assert.equal(render('{{random_int}}', ctx({}, { random: () => 0.5 })), String(2 ** 30));
    assert.equal(render('{{random_int}}', ctx({}, { random: () => 1 - 2 ** -53 })), String(2 ** 31 - 1));
  });

  test('random_int(a,b) is inclusive at both ends', () => {
    assert.equal(render('{{random_int(1, 6)}}', ctx({}, { random: () => 0 })), '1');
    assert.equal(render('{{random_int(1, 6)}}', ctx({}, { random: () => 0.999999 })), '6');
    assert.equal(render('{{random_int(-5, -5)}}'), '-5');
    assert.equal(render('{{random_int(-10, 10)}}', ctx({}, { random: () => 0.5 })), '0');
    assert.equal(render('{{random_int(lo, hi)}}', ctx({ lo: '3', hi: '3' })), '3');
  });

  test('random_int tolerates a random source outside [0, 1)', () => {
    assert.equal(render('{{random_int(1, 6)}}', ctx({}, { random: () => 1 })), '6');
    assert.equal(render('{{random_int(1, 6)}}', ctx({}, { random: () => -3 })), '1');
    assert.equal(render('{{random_int(1, 6)}}', ctx({}, { random: () => Number.NaN })), '1');
  });

  test('random_int rejects bad bounds', () => {
    assert.equal(
      failure('{{random_int(6, 1)}}').error,
      'random_int: lower bound 6 is greater than upper bound 1',
    );
    assert.equal(failure('{{random_int(1.5, 2)}}').error, 'random_int: bounds must be whole numbers');
    assert.match(failure("{{random_int('a', 2)}}").error, /^random_int: /);
  });

  test('random_int with the default source stays in range', () => {
    for (let i = 0; i < 200; i += 1) {
      const n = Number(render('{{random_int(0, 9)}}', { variables: {} }));
      assert.ok(Number.isInteger(n) && n >= 0 && n <= 9, String(n));
      const m = Number(render('{{random_int}}', { variables: {} }));
      assert.ok(Number.isInteger(m) && m >= 0 && m <= 2 ** 31 - 1, String(m));
    }
  });

  test('random_string(n) is n alphanumeric characters', () => {
    assert.equal(
      render('{{random_string(4)}}', ctx({}, { random: sequence(0, 0.5, 0.99, 26.5 / 62) })),
      'Af9a',
    );
    assert.equal(render('{{random_string(0)}}'), '');
    const long = render(`{{random_string(${TEMPLATE_LIMITS.randomStringLength})}}`, { variables: {} });
    assert.equal(long.length, 10_000);
    assert.match(long, /^[A-Za-z0-9]+$/);
  });

  test('random_string rejects bad lengths', () => {
    assert.match(
      failure('{{random_string(10001)}}').error,
      /^random_string: length must be a whole number from 0 to 10000/,
    );
    assert.match(failure('{{random_string(-1)}}').error, /^random_string: /);
    assert.match(failure('{{random_string(abc def)}}').error, /^random_string: /);
  });

  test('uuid is a version 4 UUID built from the random source', () => {
    assert.equal(render('{{uuid}}', ctx({}, { random: () => 0 })), '00000000-0000-4000-8000-000000000000');
    assert.equal(
      render('{{uuid}}', ctx({}, { random: () => 0.9999999 })),
      'ffffffff-ffff-4fff-bfff-ffffffffffff',
    );
    const pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const seen = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      const id = render('{{uuid}}', { variables: {} });
      assert.match(id, pattern);
      seen.add(id);
    }
    assert.equal(seen.size, 50);
  });
});

describe('renderTemplate: encoding and hashing', () => {
  test('encode_base64 / decode_base64 use UTF-8', () => {
    assert.equal(render("{{encode_base64('hello')}}"), 'aGVsbG8=');
    assert.equal(render("{{encode_base64('ü😀')}}"), Buffer.from('ü😀', 'utf8').toString('base64'));
    assert.equal(render("{{encode_base64('')}}"), '');
    assert.equal(render("{{decode_base64('aGVsbG8=')}}"), 'hello');
    assert.equal(render("{{decode_base64('aGVsbG8')}}"), 'hello');
    assert.equal(render("{{decode_base64('aGVs\nbG8=')}}"), 'hello');
    assert.equal(render("{{decode_base64('w7zwn5iA')}}"), 'ü😀');
    assert.equal(render("{{decode_base64('fn5-')}}"), '~~~');
    assert.equal(render("{{decode_base64('fn5+')}}"), '~~~');
    assert.equal(render("{{decode_base64('')}}"), '');
  });

  test('decode_base64 rejects invalid input and non-UTF-8 bytes', () => {
    assert.equal(failure("{{decode_base64('a$b=')}}").error, 'decode_base64: value is not valid base64');
    assert.equal(failure("{{decode_base64('a')}}").error, 'decode_base64: value is not valid base64');
    assert.equal(failure("{{decode_base64('aGVsbG8==')}}").error, 'decode_base64: value is not valid base64');
    assert.equal(
      failure("{{decode_base64('//8=')}}").error,
      'decode_base64: decoded bytes are not valid UTF-8',
    );
  });

  test('hash vectors', () => {
    assert.equal(render("{{md5('abc')}}"), '900150983cd24fb0d6963f7d28e17f72');
    assert.equal(render("{{md5('')}}"), 'd41d8cd98f00b204e9800998ecf8427e');
    assert.equal(render("{{sha1('abc')}}"), 'a9993e364706816aba3e25717850c26c9cd0d89d');
    assert.equal(
      render("{{sha256('abc')}}"),
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    assert.equal(render('{{md5(v)}}', ctx({ v: 'abc' })), '900150983cd24fb0d6963f7d28e17f72');
    assert.equal(render('{{sha256(abc def)}}'), render("{{sha256('abc def')}}"));
  });

  test('HMAC vectors (RFC 4231 case 2, RFC 2202 case 2)', () => {
    const data = 'what do ya want for nothing?';
    assert.equal(
      render(`{{hmac_sha256('${data}', 'Jefe')}}`),
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
    assert.equal(render(`{{hmac_sha1('${data}', 'Jefe')}}`), 'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79');
    assert.equal(
      render('{{hmac_sha256(data, key)}}', ctx({ data, key: 'Jefe' })),
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  test('url_encode is encodeURIComponent', () => {
    const value = "a b&c=d/é?#+!'()*~";
    assert.equal(render('{{url_encode(v)}}', ctx({ v: value })), encodeURIComponent(value));
    assert.equal(
      failure('{{url_encode(v)}}', ctx({ v: '\ud800' })).error,
      'url_encode: value contains an unpaired surrogate',
    );
  });
});

describe('renderTemplate: bounds', () => {
  test('nesting up to the limit works, one more level fails without overflowing the stack', () => {
    const nest = (levels: number) => '{{url_encode('.repeat(levels - 1) + '{{v}}' + ')}}'.repeat(levels - 1);
    assert.equal(render(nest(TEMPLATE_LIMITS.depth), ctx({ v: 'x' })), 'x');
    assert.equal(
      failure(nest(TEMPLATE_LIMITS.depth + 1), ctx({ v: 'x' })).error,
      `templates are nested more than ${TEMPLATE_LIMITS.depth} levels deep`,
    );
    assert.match(failure(nest(50_000), ctx({ v: 'x' })).error, /nested more than/);
  });

  test('templates longer than the input limit fail', () => {
    assert.equal(render('a'.repeat(TEMPLATE_LIMITS.inputLength)).length, TEMPLATE_LIMITS.inputLength);
    assert.equal(
      failure('a'.repeat(TEMPLATE_LIMITS.inputLength + 1)).error,
      `template is longer than ${TEMPLATE_LIMITS.inputLength} characters`,
    );
  });

  test('output beyond the limit fails', () => {
    const big = 'x'.repeat(1_000_000);
    assert.equal(render('{{b}}'.repeat(4), ctx({ b: big })).length, 4_000_000);
    assert.equal(
      failure('{{b}}'.repeat(5), ctx({ b: big })).error,
      `template output exceeds ${TEMPLATE_LIMITS.outputLength} characters`,
    );
    // intermediate arguments count too, even when the output itself is small
    assert.match(failure('{{md5({{b}})}}'.repeat(5), ctx({ b: big })).error, /output exceeds/);
    // random_string is refused before it is made when it would not fit
    const almost = 'x'.repeat(TEMPLATE_LIMITS.outputLength - 5);
    assert.match(failure('{{b}}{{random_string(10)}}', ctx({ b: almost })).error, /output exceeds/);
  });

  test('expressions and function calls beyond their limits fail', () => {
    const { expressions, calls } = TEMPLATE_LIMITS;
    assert.equal(render('{{v}}'.repeat(expressions), ctx({ v: 'a' })).length, expressions);
    assert.equal(
      failure('{{v}}'.repeat(expressions + 1), ctx({ v: 'a' })).error,
      `templates hold more than ${expressions} expressions`,
    );
    assert.equal(render('{{uuid}}'.repeat(calls)).length, 36 * calls);
    assert.equal(
      failure('{{uuid}}'.repeat(calls + 1)).error,
      `templates call functions more than ${calls} times`,
    );
    // 1,000 random strings of 10,000 characters would be 10,000,000: refused at the output limit
    assert.equal(
      failure('{{random_string(10000)}}'.repeat(calls)).error,
      `template output exceeds ${TEMPLATE_LIMITS.outputLength} characters`,
    );
  });

  test('renderings sharing a budget share its counts', () => {
    const budget = templateBudget();
    const half = '{{uuid}}'.repeat(TEMPLATE_LIMITS.calls / 2);
    assert.equal(render(half, { variables: {}, budget }).length, (36 * TEMPLATE_LIMITS.calls) / 2);
    assert.equal(render(half, { variables: {}, budget }).length, (36 * TEMPLATE_LIMITS.calls) / 2);
    assert.equal(
      failure('{{uuid}}', { variables: {}, budget }).error,
      `templates call functions more than ${TEMPLATE_LIMITS.calls} times`,
    );
    // text without templates spends nothing
    assert.equal(render('plain', { variables: {}, budget }), 'plain');
    const chars = templateBudget();
    const big = 'x'.repeat(TEMPLATE_LIMITS.outputLength / 2);
    render('{{b}}', { variables: { b: big }, budget: chars });
    render('{{b}}', { variables: { b: big }, budget: chars });
    assert.match(failure('{{b}}', { variables: { b: 'y' }, budget: chars }).error, /output exceeds/);
  });

  test('format_timestamp formats longer than the limit fail', () => {
    const format = '%Y'.repeat(TEMPLATE_LIMITS.formatLength / 2);
    assert.equal(render(`{{format_timestamp(0, '${format}')}}`), '1970'.repeat(format.length / 2));
    assert.equal(
      failure(`{{format_timestamp(0, '${format}x')}}`).error,
      `format_timestamp: the format is longer than ${TEMPLATE_LIMITS.formatLength} characters`,
    );
  });

  test('long quoted arguments with escapes are read whole', () => {
    const text = '\\a'.repeat(100_000) + "\\'";
    assert.equal(render(`{{url_encode('${text}')}}`), encodeURIComponent('a'.repeat(100_000) + "'"));
    assert.equal(render("{{url_encode('x\\n\\t\\\\y')}}"), encodeURIComponent('x\n\t\\y'));
    assert.match(failure("{{url_encode('ends with \\')}}").error, /unterminated string/);
  });

  test('many {{ without a closing }} stay linear and literal', () => {
    const text = '{{'.repeat(200_000);
    assert.equal(render(text), text);
  });
});
