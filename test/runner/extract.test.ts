import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import type { Source } from '../../src/domain/assertions.js';
import {
  createParseCache,
  MAX_XML_BYTES,
  type ParseCache,
  parseJsonPath,
  readSource,
  type ResponseSubject,
} from '../../src/runner/extract.js';

function subject(body: Buffer | string, extra: Partial<ResponseSubject> = {}): ResponseSubject {
  return {
    status: 201,
    headers: { 'content-type': ['application/json'], 'set-cookie': ['a=1', 'b=2'] },
    body,
    timeMs: 123.5,
    sizeBytes: typeof body === 'string' ? Buffer.byteLength(body) : body.length,
    ...extra,
  };
}

function read(source: Source, property: string, subj: ResponseSubject, cache?: ParseCache): unknown {
  const result = readSource(source, property, subj, cache);
  assert.equal(result.ok, true, result.ok ? '' : result.error);
  return result.ok ? result.value : undefined;
}

function readError(source: Source, property: string, subj: ResponseSubject): string {
  const result = readSource(source, property, subj);
  assert.equal(result.ok, false, `expected an error, got ${JSON.stringify(result)}`);
  return result.ok ? '' : result.error;
}

const DOC = {
  data: { items: [{ id: 7, name: 'first' }, { id: 8 }, { id: 9, tags: ['x', 'y'] }] },
  'key.with.dots': 'dotted',
  'br[ack]et': 1,
  "it's": 'quoted',
  $schema: 'v1',
  none: null,
  flag: false,
  list: [1, 2, 3],
};
const json = subject(JSON.stringify(DOC));

describe('readSource: numbers and text', () => {
  test('response_status, response_time and response_size are numbers; the property is ignored', () => {
    assert.equal(read('response_status', 'anything', json), 201);
    assert.equal(read('response_time', '', json), 123.5);
    assert.equal(read('response_size', '', subject('héllo')), 6);
  });

  test('response_text decodes a Buffer as UTF-8 and keeps a string as it is', () => {
    assert.equal(read('response_text', '', subject(Buffer.from('héllo wörld', 'utf8'))), 'héllo wörld');
    assert.equal(read('response_text', '', subject('plain')), 'plain');
    assert.equal(read('response_text', '', subject(Buffer.alloc(0))), '');
  });
});

describe('readSource: response_headers', () => {
  const subj = subject('', { headers: { 'content-type': ['text/plain'], 'x-multi': ['a', 'b', 'c'] } });

  test('matches the header name case-insensitively and ignores surrounding spaces', () => {
    assert.equal(read('response_headers', 'Content-Type', subj), 'text/plain');
    assert.equal(read('response_headers', ' CONTENT-TYPE ', subj), 'text/plain');
  });

  test('joins several values with ", "', () => {
    assert.equal(read('response_headers', 'X-Multi', subj), 'a, b, c');
  });

  test('a missing header reads as a missing value, not an error', () => {
    assert.equal(read('response_headers', 'x-absent', subj), undefined);
  });

  test('an empty property reads every header as an object', () => {
    assert.deepEqual(read('response_headers', '', subj), {
      'content-type': 'text/plain',
      'x-multi': 'a, b, c',
    });
  });

  test('header names in the subject are matched whatever their case', () => {
    const mixed = subject('', { headers: { 'X-Upper': ['1'] } });
    assert.equal(read('response_headers', 'x-upper', mixed), '1');
  });
});

describe('readSource: response_json paths', () => {
  const cases: [string, unknown][] = [
    ['data.items[0].id', 7],
    ['data.items[2].tags[1]', 'y'],
    ['data.items[-1].id', 9],
    ['data.items[-3].name', 'first'],
    ['list.1', 2],
    ['$.data.items[1].id', 8],
    ["$['key.with.dots']", 'dotted'],
    ['["key.with.dots"]', 'dotted'],
    ["['br[ack]et']", 1],
    ["['it\\'s']", 'quoted'],
    ['data["items"][0]["name"]', 'first'],
    ['$schema', 'v1'],
    ['none', null],
    ['flag', false],
    [' data.items[ 0 ].id ', 7],
  ];
  for (const [path, expected] of cases) {
    test(`${path} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(read('response_json', path, json), expected);
    });
  }

  test('an empty property, "$" or "$." is the whole document', () => {
    assert.deepEqual(read('response_json', '', json), DOC);
    assert.deepEqual(read('response_json', '$', json), DOC);
    assert.deepEqual(read('response_json', '$.', json), DOC);
  });

  test('a path that leads nowhere reads as a missing value', () => {
    for (const path of [
      'absent',
      'data.items[3]',
      'data.items[-4]',
      'data.items.first',
      'list[0].x',
      'none.x',
    ]) {
      assert.equal(read('response_json', path, json), undefined, path);
    }
  });

  test('prototype keys are never read through', () => {
    for (const path of [
      '__proto__',
      'constructor',
      'data.constructor.name',
      'list.length',
      'data.hasOwnProperty',
    ]) {
      assert.equal(read('response_json', path, json), undefined, path);
    }
    assert.equal(read('response_json', "['__proto__'].polluted", json), undefined);
  });

  test('a key named __proto__ in the document is an ordinary key', () => {
    const own = subject('{"__proto__":{"x":1}}');
    assert.deepEqual(read('response_json', '__proto__.x', own), 1);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  test('a body that is not JSON is an error', () => {
    assert.equal(readError('response_json', 'a', subject('<html>')), 'response body is not valid JSON');
    assert.equal(readError('response_json', '', subject('')), 'response body is not valid JSON');
  });

  test('a UTF-8 byte order mark is skipped', () => {
    assert.equal(read('response_json', 'a', subject(Buffer.from('\ufeff{"a":1}', 'utf8'))), 1);
  });

  test('a malformed path is an error that names the path', () => {
    for (const path of ['a..b', 'a.', 'a[', 'a[x]', "a['x'", 'a[*]', "a['x'b]", 'a[0]b']) {
      assert.match(readError('response_json', path, json), /^invalid JSON path /, path);
    }
  });

  test('the body is parsed once per response through the cache', () => {
    const cache = createParseCache();
    const subj = subject('{"a":{"b":1}}');
    assert.equal(read('response_json', 'a.b', subj, cache), 1);
    const parsed = cache.json;
    assert.equal(read('response_json', 'a', subj, cache) !== undefined, true);
    assert.equal(cache.json, parsed);
    const other = subject('{"a":{"b":2}}');
    assert.equal(read('response_json', 'a.b', other, cache), 2, 'a new subject resets the cache');
  });
});

describe('parseJsonPath', () => {
  test('splits names, indexes and quoted keys', () => {
    const parsed = parseJsonPath("$.a[1]['b.c'][-2].d");
    assert.deepEqual(parsed, {
      ok: true,
      value: [
        { kind: 'key', key: 'a' },
        { kind: 'index', index: 1 },
        { kind: 'key', key: 'b.c' },
        { kind: 'index', index: -2 },
        { kind: 'key', key: 'd' },
      ],
    });
  });
});

describe('readSource: response_xml', () => {
  const xml = subject(
    '<?xml version="1.0"?><catalog><book id="b1" lang="en"><title>First</title><price>10.5</price></book>' +
      '<book id="b2"><title>Second <em>part</em></title><price>4</price></book><!-- note --></catalog>',
  );

  test('a node-set reads as the text of its first node', () => {
    assert.equal(read('response_xml', '/catalog/book/title', xml), 'First');
    assert.equal(read('response_xml', '//book[2]/title', xml), 'Second part');
    assert.equal(read('response_xml', '//book[@id="b2"]/price/text()', xml), '4');
  });

  test('an attribute reads as its value', () => {
    assert.equal(read('response_xml', '//book/@id', xml), 'b1');
    assert.equal(read('response_xml', '//book[2]/@id', xml), 'b2');
  });

  test('number, string and boolean expressions read as that value', () => {
    assert.equal(read('response_xml', 'count(//book)', xml), 2);
    assert.equal(read('response_xml', 'sum(//price)', xml), 14.5);
    assert.equal(read('response_xml', 'string(//book[1]/@lang)', xml), 'en');
    assert.equal(read('response_xml', 'boolean(//book[@id="b3"])', xml), false);
    assert.equal(read('response_xml', 'number(//book[1]/price)', xml), 10.5);
  });

  test('the document node reads as the root text', () => {
    assert.equal(read('response_xml', '/', xml), 'First10.5Second part4');
  });

  test('an empty node-set reads as a missing value', () => {
    assert.equal(read('response_xml', '//missing', xml), undefined);
    assert.equal(read('response_xml', '//book/@missing', xml), undefined);
  });

  test('elements in a default namespace are reached with local-name()', () => {
    const ns = subject('<a xmlns="urn:x"><b>1</b></a>');
    assert.equal(read('response_xml', "//*[local-name()='b']", ns), '1');
  });

  test('an invalid XPath is an error that names it', () => {
    assert.match(readError('response_xml', '//book[', xml), /^invalid XPath "\/\/book\["/);
    assert.match(readError('response_xml', 'nosuch(1)', xml), /^invalid XPath /);
    assert.equal(readError('response_xml', '  ', xml), 'an XPath expression is required');
  });

  test('a body that is not well-formed XML is an error', () => {
    assert.match(readError('response_xml', '/a', subject('<a><b></a>')), /^response body is not valid XML: /);
    assert.match(readError('response_xml', '/a', subject('{"a":1}')), /^response body is not valid XML: /);
    assert.match(readError('response_xml', '/a', subject('')), /^response body is not valid XML: /);
  });

  test('a document type declaring entities is refused, so nothing is expanded or fetched', () => {
    const internal = subject('<!DOCTYPE a [<!ENTITY e "boom">]><a>&e;</a>');
    assert.match(readError('response_xml', '/a', internal), /declares entities/);
    const external = subject('<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>');
    assert.match(readError('response_xml', '/a', external), /declares entities/);
    const laughs = subject(
      '<!DOCTYPE a [<!ENTITY l "lol"><!ENTITY l2 "&l;&l;&l;&l;&l;&l;&l;&l;&l;&l;">]><a>&l2;</a>',
    );
    assert.match(readError('response_xml', '/a', laughs), /declares entities/);
  });

  test('a document type without entities parses; predefined entities and character references work', () => {
    const doctype = subject('<!DOCTYPE a SYSTEM "file:///etc/passwd"><a>&amp;&lt;&#65;</a>');
    assert.equal(read('response_xml', '/a', doctype), '&<A');
  });

  test('a body over the size cap is refused', () => {
    const big = subject(`<a>${'x'.repeat(MAX_XML_BYTES)}</a>`);
    assert.match(readError('response_xml', '/a', big), /too large/);
  });

  test('the document is parsed once per response through the cache', () => {
    const cache: ParseCache = {};
    assert.equal(read('response_xml', '//title', xml, cache), 'First');
    const parsed = cache.xml;
    assert.equal(read('response_xml', 'count(//title)', xml, cache), 2);
    assert.equal(cache.xml, parsed);
  });
});
