import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayHostUrl, gatewayPathUrl, parseTrafficHost } from '../../src/domain/gateway-urls.js';

const KEY = 'abcdef123456';

test('host-form URLs encode dashes and dots as the original clients do, and parse back', () => {
  const cases: [string, string, string | null][] = [
    ['https://api.example.com/v1/x?q=1', `https://api-example-com-${KEY}.gw.test/v1/x?q=1`, null],
    ['https://foo-bar.example.org/~home', `https://foo--bar-example-org-${KEY}.gw.test/~home`, null],
    ['http://127.0.0.1:8080/', `http://127-0-0-1-${KEY}.gw.test/`, '8080'],
    ['http://a--b.c/', `http://a----b-c-${KEY}.gw.test/`, null],
  ];
  for (const [target, url, port] of cases) {
    const built = gatewayHostUrl('gw.test', KEY, target);
    assert.deepEqual(built, { url, port }, target);
    const parsed = parseTrafficHost(new URL(url).host, 'gw.test');
    assert.deepEqual(parsed, { kind: 'gateway', bucketKey: KEY, upstreamHost: new URL(target).hostname });
  }
});

test('the bare key under the domain is the capture host; anything else is not ours', () => {
  assert.deepEqual(parseTrafficHost(`${KEY}.gw.test:443`, 'gw.test'), { kind: 'capture', bucketKey: KEY });
  assert.deepEqual(parseTrafficHost(`${KEY.toUpperCase()}.GW.TEST.`, 'gw.test'), {
    kind: 'capture',
    bucketKey: KEY,
  });
  for (const host of [
    'gw.test',
    'example.com',
    `x.${KEY}.gw.test`,
    `api-example-com-short.gw.test`,
    `-${KEY}.gw.test`,
    `apigw.test`,
  ]) {
    assert.equal(parseTrafficHost(host, 'gw.test'), null, host);
  }
});

test('path-form URLs keep path and query; other schemes and credentials are refused', () => {
  assert.equal(
    gatewayPathUrl('http://t.test/gateway/k', 'https://api.example.com:8443/a%20b?x=1'),
    'http://t.test/gateway/k/https/api.example.com:8443/a%20b?x=1',
  );
  assert.throws(() => gatewayPathUrl('http://t.test/gateway/k', 'ftp://example.com/'), /http and https/);
  assert.throws(() => gatewayPathUrl('http://t.test/gateway/k', 'https://u:p@example.com/'), /credentials/);
  assert.throws(() => gatewayHostUrl('gw.test', KEY, 'http://[::1]/'), /IPv6/);
});
