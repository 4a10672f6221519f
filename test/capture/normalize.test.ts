import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NewMessage } from '../../src/domain/messages.js';
import {
  bodyBytes,
  bodyFromBytes,
  MESSAGE_CODES,
  microseconds,
  normalizeItem,
  type NormalizedItem,
  reasonFor,
  urlParts,
} from '../../src/capture/normalize.js';

const RECEIVED = 1_700_000_100.5;
const GET = { method: 'GET', url: 'https://api.example.com/' };

function saved(input: unknown): { message: NewMessage; warning: NormalizedItem & { ok: true } } {
  const item = normalizeItem(input, RECEIVED);
  assert.ok(item.ok, `expected the item to be saved: ${JSON.stringify(item)}`);
  return { message: item.message, warning: item };
}

function refused(input: unknown, code: number = MESSAGE_CODES.invalidField): string {
  const item = normalizeItem(input, RECEIVED);
  assert.equal(item.ok, false, `expected the item to be refused: ${JSON.stringify(item)}`);
  if (item.ok) throw new Error('unreachable');
  assert.equal(item.error.code, code, item.error.message);
  return item.error.message;
}

describe('normalizeItem: the item', () => {
  test('anything but an object is refused with 51001', () => {
    for (const input of [null, undefined, 42, 'text', true, [], [GET]]) {
      assert.match(refused(input), /JSON object/);
    }
  });

  test('neither request nor response is 51006, null parts count as absent', () => {
    assert.match(refused({}, MESSAGE_CODES.noExchange), /neither a request nor a response/);
    refused({ request: null, response: null }, MESSAGE_CODES.noExchange);
    refused({ unique_identifier: 'x' }, MESSAGE_CODES.noExchange);
  });

  test('a refused item echoes a valid unique_identifier', () => {
    const item = normalizeItem({ unique_identifier: 'abc' }, RECEIVED);
    assert.deepEqual(item, {
      ok: false,
      error: { code: 51006, message: 'The message has neither a request nor a response' },
      unique_identifier: 'abc',
    });
    const typed = normalizeItem({ unique_identifier: 'abc', request: { method: 1, url: 'x' } }, RECEIVED);
    assert.equal(typed.ok, false);
    assert.equal(!typed.ok && typed.unique_identifier, 'abc');
  });

  test('unique_identifier must be a non-empty string of at most 256 characters', () => {
    for (const bad of ['', 'x'.repeat(257), 7, ['a'], { id: 'a' }, true]) {
      assert.match(refused({ unique_identifier: bad, request: GET }), /unique_identifier/);
    }
    assert.equal(
      saved({ unique_identifier: 'x'.repeat(256), request: GET }).message.unique_identifier,
      'x'.repeat(256),
    );
    assert.equal(saved({ unique_identifier: null, request: GET }).message.unique_identifier, null);
    assert.equal(saved({ request: GET }).message.unique_identifier, null);
  });

  test('a request alone or a response alone is a message; the other part is null', () => {
    const onlyRequest = saved({ request: GET }).message;
    assert.equal(onlyRequest.response, null);
    assert.equal(onlyRequest.request!.method, 'GET');
    const onlyResponse = saved({ response: { status: 204 } }).message;
    assert.equal(onlyResponse.request, null);
    assert.equal(onlyResponse.response!.status, 204);
    assert.equal(onlyResponse.source, 'api');
    assert.equal(onlyResponse.note, null);
  });

  test('a part that is not an object is refused naming it', () => {
    assert.match(refused({ request: 'GET /' }), /^request must be an object/);
    assert.match(refused({ request: [GET] }), /^request must be an object/);
    assert.match(refused({ request: GET, response: 200 }), /^response must be an object/);
  });
});

describe('normalizeItem: unexpected fields', () => {
  test('every unexpected field is named in one 51109 warning, with its part', () => {
    const item = normalizeItem(
      {
        extra: 1,
        other: null,
        request: { ...GET, cookies: {} },
        response: { status: 200, elapsed: 1 },
      },
      RECEIVED,
    );
    assert.ok(item.ok);
    assert.equal(item.warning?.code, MESSAGE_CODES.unexpectedFields);
    assert.equal(
      item.warning?.message,
      'Unexpected fields ignored: extra, other, request.cookies, response.elapsed',
    );
    assert.equal('cookies' in item.message.request!, false);
    assert.equal('elapsed' in item.message.response!, false);
  });

  test('one unexpected field reads in the singular; none gives no warning', () => {
    const one = normalizeItem({ request: { ...GET, x: 1 } }, RECEIVED);
    assert.ok(one.ok);
    assert.equal(one.warning?.message, 'Unexpected field ignored: request.x');
    const none = normalizeItem({ request: GET, response: { status: 200 }, unique_identifier: 'u' }, RECEIVED);
    assert.ok(none.ok);
    assert.equal(none.warning, null);
  });

  test('a wrongly typed field makes an error even when there are unexpected fields too', () => {
    assert.match(refused({ extra: 1, request: { ...GET, method: 5 } }), /request\.method/);
  });
});

describe('normalizeItem: request', () => {
  test('the method must be an HTTP token and is upper-cased', () => {
    assert.equal(saved({ request: { ...GET, method: 'patch' } }).message.request!.method, 'PATCH');
    assert.equal(saved({ request: { ...GET, method: 'PROPFIND' } }).message.request!.method, 'PROPFIND');
    assert.match(refused({ request: { url: GET.url } }), /request\.method must be a string/);
    for (const bad of ['', ' GET', 'GET POST', 'GET\r\nX: y', 'M'.repeat(33), 'GÉT']) {
      assert.match(refused({ request: { ...GET, method: bad } }), /request\.method/, JSON.stringify(bad));
    }
  });

  test('the url must be an absolute http or https URL', () => {
    assert.match(refused({ request: { method: 'GET' } }), /request\.url must be a string/);
    for (const bad of ['/relative', 'api.example.com/x', '', 'http://', 'not a url']) {
      assert.match(refused({ request: { ...GET, url: bad } }), /request\.url .* is not an absolute URL/, bad);
    }
    for (const [bad, scheme] of [
      ['ftp://files.example.com/a', 'ftp'],
      ['javascript:alert(1)', 'javascript'],
      ['data:text/plain,hi', 'data'],
      ['file:///etc/passwd', 'file'],
    ]) {
      assert.equal(
        refused({ request: { ...GET, url: bad } }),
        `request.url must be an http or https URL, got ${scheme}`,
      );
    }
  });

  test('a long bad url is cut in the message', () => {
    const message = refused({ request: { ...GET, url: `/${'a'.repeat(5000)}` } });
    assert.ok(message.length < 300, message);
  });

  test('the url is kept as given and split into scheme, host, path and params', () => {
    const url = 'HTTP://User:Pw@API.Example.com:8080/a%2Fb/c d?x=1&y=&x=2&z#frag';
    const request = saved({ request: { ...GET, url } }).message.request!;
    assert.equal(request.url, url);
    assert.equal(request.scheme, 'http');
    assert.equal(request.host, 'api.example.com:8080');
    assert.equal(request.path, '/a%2Fb/c%20d');
    assert.deepEqual(request.params, { x: ['1', '2'], y: [''], z: [''] });
  });

  test('params keep repeated names in order and decode + and percent-escapes', () => {
    const { params } = urlParts('https://e.com/?a=1&b=2&a=3&q=a+b%26c&%C3%A9=%E2%9C%93');
    assert.deepEqual(params, { a: ['1', '3'], b: ['2'], q: ['a b&c'], é: ['✓'] });
    assert.deepEqual(urlParts('https://e.com').params, {});
    assert.equal(urlParts('https://e.com').path, '/');
  });

  test('hosts: default ports dropped, IPv6 bracketed, international names in punycode', () => {
    assert.equal(urlParts('https://e.com:443/').host, 'e.com');
    assert.equal(urlParts('http://[::1]:8080/').host, '[::1]:8080');
    assert.equal(urlParts('https://bücher.example/').host, 'xn--bcher-kva.example');
  });

  test('params named like Object.prototype members are plain own entries', () => {
    const { params } = urlParts('https://e.com/?__proto__=x&constructor=y&toString=z');
    assert.equal(Object.getPrototypeOf(params), Object.prototype);
    assert.deepEqual(Object.keys(params), ['__proto__', 'constructor', 'toString']);
    assert.deepEqual(params['__proto__'], ['x']);
    assert.deepEqual(
      JSON.parse(JSON.stringify(params)),
      JSON.parse('{"__proto__":["x"],"constructor":["y"],"toString":["z"]}'),
    );
  });

  test('headers and form: a string or an array of strings per name, arrays on the way out', () => {
    const request = saved({
      request: {
        ...GET,
        headers: { Accept: 'a/b', 'X-Many': ['1', '2'], 'X-None': [] },
        form: { name: 'Ada', tags: ['x', 'y'] },
      },
    }).message.request!;
    assert.deepEqual(request.headers, { Accept: ['a/b'], 'X-Many': ['1', '2'], 'X-None': [] });
    assert.deepEqual(request.form, { name: ['Ada'], tags: ['x', 'y'] });
    const bare = saved({ request: { ...GET, headers: null, form: null } }).message.request!;
    assert.deepEqual(bare.headers, {});
    assert.equal(bare.form, null);
    assert.equal(saved({ request: GET }).message.request!.form, null);
    assert.deepEqual(saved({ request: { ...GET, form: {} } }).message.request!.form, {});
  });

  test('header names like Object.prototype members are kept as headers', () => {
    const headers = JSON.parse('{"__proto__":"a","constructor":"b"}') as unknown;
    const request = saved({ request: { ...GET, headers } }).message.request!;
    assert.equal(Object.getPrototypeOf(request.headers), Object.prototype);
    assert.deepEqual(Object.keys(request.headers), ['__proto__', 'constructor']);
    assert.deepEqual(request.headers['__proto__'], ['a']);
    assert.equal(JSON.stringify(request.headers), '{"__proto__":["a"],"constructor":["b"]}');
  });

  test('wrongly typed headers and form fields are refused naming the entry', () => {
    assert.equal(
      refused({ request: { ...GET, headers: { 'X-N': 1 } } }),
      'request.headers.X-N must be a string or an array of strings',
    );
    assert.match(refused({ request: { ...GET, headers: { A: ['x', null] } } }), /request\.headers\.A /);
    assert.match(refused({ request: { ...GET, headers: { A: { b: 'c' } } } }), /request\.headers\.A /);
    assert.match(
      refused({ request: { ...GET, headers: 'Accept: */*' } }),
      /^request\.headers must be an object/,
    );
    assert.match(
      refused({ request: { ...GET, headers: [['Accept', '*/*']] } }),
      /^request\.headers must be an object/,
    );
    assert.match(refused({ request: { ...GET, form: 'a=1' } }), /^request\.form must be an object/);
    assert.match(refused({ request: { ...GET, form: { a: 1 } } }), /request\.form\.a /);
  });
});

describe('normalizeItem: timestamps', () => {
  test('missing or null timestamps are the receive time', () => {
    const message = saved({ request: GET, response: { status: 200, timestamp: null } }).message;
    assert.equal(message.request!.timestamp, RECEIVED);
    assert.equal(message.response!.timestamp, RECEIVED);
  });

  test('timestamps keep the microsecond and round below it', () => {
    const message = saved({
      request: { ...GET, timestamp: 1700000000.123456 },
      response: { status: 200, timestamp: 1700000000.1234567 },
    }).message;
    assert.equal(message.request!.timestamp, 1700000000.123456);
    assert.equal(message.response!.timestamp, 1700000000.123457);
    assert.equal(saved({ request: { ...GET, timestamp: 0 } }).message.request!.timestamp, 0);
    assert.equal(
      saved({ request: { ...GET, timestamp: 1700000000 } }).message.request!.timestamp,
      1700000000,
    );
  });

  test('a timestamp that is not a Unix time in seconds is refused', () => {
    for (const bad of ['1700000000', -1, 32_503_680_001, 1.7e15, true, [1]]) {
      assert.equal(
        refused({ request: { ...GET, timestamp: bad } }),
        'request.timestamp must be a Unix timestamp in seconds',
        JSON.stringify(bad),
      );
    }
    assert.match(refused({ response: { status: 200, timestamp: 'now' } }), /^response\.timestamp /);
  });

  test('microseconds rounds to six decimals', () => {
    assert.equal(microseconds(1.0000004), 1);
    assert.equal(microseconds(1.0000006), 1.000001);
    assert.equal(microseconds(0.1 + 0.2), 0.3);
  });
});

describe('normalizeItem: bodies', () => {
  test('plaintext is the default and is kept exactly; size is the UTF-8 length', () => {
    const text = 'é✓🚀\r\n\t<x>';
    const request = saved({ request: { ...GET, body: text } }).message.request!;
    assert.equal(request.body, text);
    assert.equal(request.body_encoding, 'plaintext');
    assert.equal(request.size_bytes, Buffer.byteLength(text));
    const empty = saved({ request: GET }).message.request!;
    assert.deepEqual([empty.body, empty.body_encoding, empty.size_bytes], ['', 'plaintext', 0]);
    const explicit = saved({ request: { ...GET, body: 'a', body_encoding: 'plaintext' } }).message.request!;
    assert.equal(explicit.size_bytes, 1);
    assert.equal(saved({ request: { ...GET, body: null } }).message.request!.body, '');
  });

  test('base64 bodies: size is the decoded length, line breaks are dropped', () => {
    const bytes = Buffer.from([0, 1, 2, 253, 254, 255, 10]);
    const request = saved({
      request: { ...GET, body: bytes.toString('base64'), body_encoding: 'base64' },
    }).message.request!;
    assert.equal(request.body_encoding, 'base64');
    assert.equal(request.size_bytes, 7);
    assert.deepEqual(bodyBytes(request.body, request.body_encoding), bytes);
    const wrapped = saved({
      response: { status: 200, body: 'AAEC\r\n/f7/\nCg==', body_encoding: 'base64' },
    }).message.response!;
    assert.equal(wrapped.body, 'AAEC/f7/Cg==');
    assert.equal(wrapped.size_bytes, 7);
    const none = saved({ response: { status: 200, body: '', body_encoding: 'base64' } }).message.response!;
    assert.deepEqual([none.body, none.size_bytes], ['', 0]);
    assert.equal(
      saved({ request: { ...GET, body: 'AA==', body_encoding: 'base64' } }).message.request!.size_bytes,
      1,
    );
  });

  test('bad base64, unknown encodings and non-string bodies are refused naming the part', () => {
    for (const bad of ['not base64!', 'AAE', 'A===', '-_-_', 'AA==AA==']) {
      assert.equal(
        refused({ request: { ...GET, body: bad, body_encoding: 'base64' } }),
        'request.body is not valid Base64',
        bad,
      );
    }
    assert.equal(
      refused({ response: { status: 200, body_encoding: 'gzip' } }),
      'response.body_encoding must be plaintext or base64',
    );
    assert.equal(
      refused({ response: { status: 200, body_encoding: 1 } }),
      'response.body_encoding must be plaintext or base64',
    );
    assert.equal(refused({ request: { ...GET, body: { a: 1 } } }), 'request.body must be a string');
    assert.equal(refused({ response: { status: 200, body: 12 } }), 'response.body must be a string');
  });

  test('bodyFromBytes keeps UTF-8 as plaintext and anything else as Base64', () => {
    assert.deepEqual(bodyFromBytes(Buffer.from('héllo')), {
      body: 'héllo',
      body_encoding: 'plaintext',
      size_bytes: 6,
    });
    const binary = new Uint8Array([0xff, 0xfe, 0x00]);
    assert.deepEqual(bodyFromBytes(binary), { body: '//4A', body_encoding: 'base64', size_bytes: 3 });
    const slice = Buffer.from('xxabcxx').subarray(2, 5);
    assert.deepEqual(bodyFromBytes(slice), { body: 'abc', body_encoding: 'plaintext', size_bytes: 3 });
    assert.deepEqual(bodyFromBytes(new Uint8Array()), {
      body: '',
      body_encoding: 'plaintext',
      size_bytes: 0,
    });
  });
});

describe('normalizeItem: response', () => {
  test('status must be an integer from 100 to 999', () => {
    assert.equal(saved({ response: { status: 100 } }).message.response!.status, 100);
    assert.equal(saved({ response: { status: 999 } }).message.response!.status, 999);
    for (const bad of [99, 1000, 200.5, '200', null, undefined, -200, true]) {
      assert.match(
        refused({ response: { status: bad } }),
        /^response\.status must be an integer HTTP status code/,
        JSON.stringify(bad),
      );
    }
  });

  test('reason comes from the status unless given; unknown codes have none', () => {
    assert.equal(saved({ response: { status: 404 } }).message.response!.reason, 'Not Found');
    assert.equal(saved({ response: { status: 418 } }).message.response!.reason, "I'm a Teapot");
    assert.equal(saved({ response: { status: 799 } }).message.response!.reason, '');
    assert.equal(
      saved({ response: { status: 404, reason: 'Gone Fishing' } }).message.response!.reason,
      'Gone Fishing',
    );
    assert.equal(saved({ response: { status: 404, reason: null } }).message.response!.reason, 'Not Found');
    assert.equal(refused({ response: { status: 404, reason: 404 } }), 'response.reason must be a string');
    assert.equal(reasonFor(500), 'Internal Server Error');
  });

  test('response_time is seconds kept to the microsecond; null when not given', () => {
    assert.equal(
      saved({ response: { status: 200, response_time: 0.1234564 } }).message.response!.response_time,
      0.123456,
    );
    assert.equal(saved({ response: { status: 200, response_time: 0 } }).message.response!.response_time, 0);
    assert.equal(saved({ response: { status: 200 } }).message.response!.response_time, null);
    for (const bad of [-0.1, '0.5', [1]]) {
      assert.equal(
        refused({ response: { status: 200, response_time: bad } }),
        'response.response_time must be a number of seconds',
      );
    }
  });

  test('response headers follow the request rules', () => {
    const response = saved({
      response: { status: 200, headers: { 'Set-Cookie': ['a=1', 'b=2'], Server: 's' } },
    }).message.response!;
    assert.deepEqual(response.headers, { 'Set-Cookie': ['a=1', 'b=2'], Server: ['s'] });
    assert.match(refused({ response: { status: 200, headers: { Vary: 1 } } }), /^response\.headers\.Vary /);
  });
});
