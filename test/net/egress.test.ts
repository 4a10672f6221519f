import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { describe, test } from 'node:test';
import {
  egressCheck,
  EgressRefused,
  isPublicAddress,
  nonPublicReason,
  policyLookup,
  type Resolver,
} from '../../src/net/egress.js';

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '169.253.255.255',
  '223.255.255.255',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:81c::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

const NOT_PUBLIC: [string, RegExp][] = [
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /this network/],
  ['10.0.0.1', /private/],
  ['10.255.255.255', /private/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['100.127.255.255', /carrier-grade NAT/],
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['169.254.0.1', /link-local/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.0.0.8', /reserved/],
  ['192.0.2.1', /documentation/],
  ['192.88.99.1', /reserved/],
  ['192.168.1.1', /private/],
  ['198.18.0.1', /benchmarking/],
  ['198.51.100.7', /documentation/],
  ['203.0.113.9', /documentation/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['240.0.0.1', /reserved/],
  ['255.255.255.255', /broadcast/],
  ['169.254.169.254', /metadata/],
  ['169.254.170.2', /metadata/],
  ['100.100.100.200', /metadata/],
  ['fd00:ec2::254', /metadata/],
  ['::', /unspecified/],
  ['::1', /loopback/],
  ['fc00::1', /private/],
  ['fd12:3456::1', /private/],
  ['fe80::1', /link-local/],
  ['fe80::1%eth0', /link-local/],
  ['::ffff:127.0.0.1%1', /loopback/],
  ['ff02::1', /multicast/],
  ['fec0::1', /reserved/],
  ['100::1', /reserved/],
  ['2001:db8::1', /documentation/],
  ['3fff::1', /documentation/],
  ['2001::1', /reserved/],
  ['::ffff:127.0.0.1', /loopback/],
  ['::ffff:7f00:1', /loopback/],
  ['::ffff:10.0.0.1', /private/],
  ['::ffff:169.254.169.254', /metadata/],
  ['::127.0.0.1', /reserved/],
  ['::ffff:0:127.0.0.1', /loopback/],
  ['64:ff9b::7f00:1', /loopback/],
  ['64:ff9b::a9fe:a9fe', /metadata/],
  ['64:ff9b::c0a8:101', /private/],
  ['64:ff9b:1::1', /reserved/],
  ['2002:7f00:1::1', /loopback/],
  ['2002:a00:1::', /private/],
];

describe('isPublicAddress', () => {
  for (const address of PUBLIC) {
    test(`${address} is public`, () => {
      assert.equal(isPublicAddress(address), true, String(nonPublicReason(address)));
    });
  }

  for (const [address, reason] of NOT_PUBLIC) {
    test(`${address} is not public`, () => {
      assert.equal(isPublicAddress(address), false);
      assert.match(nonPublicReason(address) ?? '', reason);
    });
  }

  test('anything that is not a plain IP address is not public', () => {
    for (const text of [
      '',
      'localhost',
      'example.com',
      '0x7f.1',
      '2130706433',
      '127.1',
      '8.8.8.8.8',
      '[::1]',
    ]) {
      assert.equal(isPublicAddress(text), false, text);
    }
  });
});

function resolverOf(answers: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const addresses = answers[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

interface Looked {
  error: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}

function lookup(
  fn: LookupFunction,
  hostname: string,
  options: { all?: boolean; family?: number } = {},
): Promise<Looked> {
  return new Promise((resolve) => {
    fn(hostname, options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe('policyLookup', () => {
  const answers = {
    'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.test': ['127.0.0.1'],
    'mixed.test': ['93.184.215.14', '10.1.2.3'],
    'metadata.test': ['169.254.169.254'],
  };

  test('public-only passes a name whose every address is public', async () => {
    const fn = policyLookup('public-only', resolverOf(answers));
    const one = await lookup(fn, 'public.test');
    assert.equal(one.error, null);
    assert.equal(one.address, '93.184.215.14');
    assert.equal(one.family, 4);
    const all = await lookup(fn, 'public.test', { all: true });
    assert.deepEqual(all.address, [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    const six = await lookup(fn, 'public.test', { family: 6 });
    assert.equal(six.address, '2606:2800:21f:cb07:6820:80da:af6b:8b2c');
  });

  test('public-only refuses a name resolving to a private address, or to a mix', async () => {
    const fn = policyLookup('public-only', resolverOf(answers));
    for (const [host, address] of [
      ['internal.test', '127.0.0.1'],
      ['mixed.test', '10.1.2.3'],
      ['metadata.test', '169.254.169.254'],
    ] as const) {
      const { error } = await lookup(fn, host, { all: true });
      assert.ok(error instanceof EgressRefused, host);
      assert.equal(error.host, host);
      assert.equal(error.address, address);
      assert.match(
        error.message,
        new RegExp(`^refused by the egress policy: ${host} resolves to ${address}`),
      );
    }
  });

  test('IP literals are checked without asking the resolver', async () => {
    const resolve = resolverOf(answers);
    const fn = policyLookup('public-only', resolve);
    const refused = await lookup(fn, '10.0.0.1');
    assert.ok(refused.error instanceof EgressRefused);
    assert.equal(refused.error.message, 'refused by the egress policy: 10.0.0.1 is a private address');
    const passed = await lookup(fn, '8.8.8.8');
    assert.equal(passed.address, '8.8.8.8');
    assert.deepEqual(resolve.calls, []);
  });

  test('allow-all lets every address through', async () => {
    const fn = policyLookup('allow-all', resolverOf(answers));
    assert.equal((await lookup(fn, 'internal.test')).address, '127.0.0.1');
    assert.equal((await lookup(fn, '169.254.169.254')).address, '169.254.169.254');
  });

  test('resolver errors pass through, and an empty answer is "not found"', async () => {
    const fn = policyLookup('public-only', resolverOf({ 'empty.test': [] }));
    assert.equal((await lookup(fn, 'missing.test')).error?.code, 'ENOTFOUND');
    assert.equal((await lookup(fn, 'empty.test')).error?.code, 'ENOTFOUND');
  });

  test('the allow list exempts the addresses and ranges it names', async () => {
    const check = egressCheck('public-only', { allow: ['10.1.0.0/16', '127.0.0.1'] });
    assert.equal(check('a', '10.1.2.3'), null);
    assert.equal(check('a', '127.0.0.1'), null);
    assert.equal(check('a', '::ffff:127.0.0.1'), null);
    assert.ok(check('a', '10.2.0.1') instanceof EgressRefused);
    assert.ok(check('a', '127.0.0.2') instanceof EgressRefused);
    assert.throws(() => egressCheck('public-only', { allow: ['not-an-address'] }));
  });
});
