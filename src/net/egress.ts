/**
 * The egress policy (DESIGN §1, EGRESS_POLICY): which addresses outbound requests may reach. It is
 * applied after DNS resolution, to every address a name resolves to, and the connection then goes to
 * an address that passed, so a second lookup cannot swap in another one (DNS rebinding). Usable on its
 * own by anything that opens outbound connections (the runner, the gateway, replay).
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { buildConnector } from 'undici';
import { undici } from './undici.js';

export type EgressPolicy = 'allow-all' | 'public-only';

/** Resolves a host name to all its addresses, like `dns.lookup(name, { all: true })`. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function cidr(text: string): Range {
  return ipaddr.parseCIDR(text);
}

/** Addresses of cloud instance metadata services, named as such in refusals. */
const METADATA = [
  '169.254.169.254',
  '169.254.170.2',
  '169.254.169.253',
  '100.100.100.200',
  'fd00:ec2::254',
].map((address) => ipaddr.parse(address).toNormalizedString());

const NOT_PUBLIC = {
  thisNetwork: 'a "this network" address',
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  cgnat: 'a carrier-grade NAT address',
  metadata: 'a cloud metadata address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  reserved: 'a reserved address',
} as const;

type Reason = (typeof NOT_PUBLIC)[keyof typeof NOT_PUBLIC];

/** Non-public IPv4 ranges, the more specific first. */
const IPV4_RANGES: readonly [Range, Reason][] = [
  [cidr('255.255.255.255/32'), NOT_PUBLIC.broadcast],
  [cidr('0.0.0.0/32'), NOT_PUBLIC.unspecified],
  [cidr('0.0.0.0/8'), NOT_PUBLIC.thisNetwork],
  [cidr('10.0.0.0/8'), NOT_PUBLIC.private],
  [cidr('100.64.0.0/10'), NOT_PUBLIC.cgnat],
  [cidr('127.0.0.0/8'), NOT_PUBLIC.loopback],
  [cidr('169.254.0.0/16'), NOT_PUBLIC.linkLocal],
  [cidr('172.16.0.0/12'), NOT_PUBLIC.private],
  [cidr('192.0.0.0/24'), NOT_PUBLIC.reserved],
  [cidr('192.0.2.0/24'), NOT_PUBLIC.documentation],
  [cidr('192.88.99.0/24'), NOT_PUBLIC.reserved],
  [cidr('192.168.0.0/16'), NOT_PUBLIC.private],
  [cidr('198.18.0.0/15'), NOT_PUBLIC.benchmarking],
  [cidr('198.51.100.0/24'), NOT_PUBLIC.documentation],
  [cidr('203.0.113.0/24'), NOT_PUBLIC.documentation],
  [cidr('224.0.0.0/4'), NOT_PUBLIC.multicast],
  [cidr('240.0.0.0/4'), NOT_PUBLIC.reserved],
];

/** Non-public IPv6 ranges inside global unicast (2000::/3), the more specific first. */
const IPV6_GLOBAL_RANGES: readonly [Range, Reason][] = [
  [cidr('2001:db8::/32'), NOT_PUBLIC.documentation],
  [cidr('2001:2::/48'), NOT_PUBLIC.benchmarking],
  // IETF protocol assignments: Teredo, ORCHID, AMT, AS112 and the like.
  [cidr('2001::/23'), NOT_PUBLIC.reserved],
  [cidr('3fff::/20'), NOT_PUBLIC.documentation],
];

/** IPv6 ranges outside global unicast that have a more telling name than "reserved". */
const IPV6_OTHER_RANGES: readonly [Range, Reason][] = [
  [cidr('::/128'), NOT_PUBLIC.unspecified],
  [cidr('::1/128'), NOT_PUBLIC.loopback],
  [cidr('fc00::/7'), NOT_PUBLIC.private],
  [cidr('fe80::/10'), NOT_PUBLIC.linkLocal],
  [cidr('ff00::/8'), NOT_PUBLIC.multicast],
];

const GLOBAL_UNICAST = cidr('2000::/3');
const IPV4_MAPPED = cidr('::ffff:0:0/96');
const IPV4_TRANSLATED = cidr('::ffff:0:0:0/96');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');

function firstMatch(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly [Range, Reason][]): Reason | null {
  for (const [range, reason] of ranges) {
    if (address.kind() === range[0].kind() && address.match(range)) return reason;
  }
  return null;
}

function ipv4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 address an IPv6 address stands for (mapped, translated, NAT64, 6to4), if any. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const parts = address.parts;
  if (address.match(IPV4_MAPPED) || address.match(IPV4_TRANSLATED) || address.match(NAT64)) {
    return ipv4FromWords(parts[6] ?? 0, parts[7] ?? 0);
  }
  if (address.match(SIX_TO_FOUR)) return ipv4FromWords(parts[1] ?? 0, parts[2] ?? 0);
  return null;
}

function ipv6Reason(address: ipaddr.IPv6): Reason | null {
  const embedded = embeddedIpv4(address);
  if (embedded) return ipv4Reason(embedded);
  if (!address.match(GLOBAL_UNICAST)) return firstMatch(address, IPV6_OTHER_RANGES) ?? NOT_PUBLIC.reserved;
  return firstMatch(address, IPV6_GLOBAL_RANGES);
}

function ipv4Reason(address: ipaddr.IPv4): Reason | null {
  return firstMatch(address, IPV4_RANGES);
}

/** `::a.b.c.d` written with hex words instead, since ipaddr.js reads that form as IPv4-mapped. */
function hexTail(ip: string): string {
  const split = ip.lastIndexOf(':');
  const [a = 0, b = 0, c = 0, d = 0] = ip
    .slice(split + 1)
    .split('.')
    .map(Number);
  return `${ip.slice(0, split + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function parseIp(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // net.isIP is strict (dotted quad, no octal or hex forms), unlike ipaddr.parse.
  const version = net.isIP(ip);
  if (version === 0) return null;
  try {
    if (version === 4) return ipaddr.parse(ip);
    // The zone (fe80::1%eth0) does not change what kind of address it is.
    const bare = ip.split('%')[0] ?? ip;
    return ipaddr.parse(bare.includes('.') ? hexTail(bare) : bare);
  } catch {
    return null;
  }
}

/**
 * Why `ip` is not a public address, as a phrase ("a private address"), or null when it is public.
 * Anything that is not an IP address is "not an IP address".
 */
export function nonPublicReason(ip: string): string | null {
  const address = parseIp(ip);
  if (!address) return 'not an IP address';
  if (address instanceof ipaddr.IPv4) {
    return METADATA.includes(address.toNormalizedString()) ? NOT_PUBLIC.metadata : ipv4Reason(address);
  }
  const embedded = embeddedIpv4(address);
  const plain = embedded ?? new ipaddr.IPv6(address.parts);
  if (METADATA.includes(plain.toNormalizedString())) return NOT_PUBLIC.metadata;
  return ipv6Reason(address);
}

/** True when `ip` is a globally routable unicast address: the only kind `public-only` lets through. */
export function isPublicAddress(ip: string): boolean {
  return nonPublicReason(ip) === null;
}

export class EgressRefused extends Error {
  readonly code = 'EGRESS_REFUSED';
  readonly host: string;
  readonly address: string;

  constructor(host: string, address: string, reason: string) {
    const subject = host === address ? address : `${host} resolves to ${address}, which`;
    super(`refused by the egress policy: ${subject} is ${reason}`);
    this.name = 'EgressRefused';
    this.host = host;
    this.address = address;
  }
}

export interface EgressOptions {
  /** Addresses or CIDR ranges that `public-only` still lets through (a private API the operator trusts). */
  allow?: readonly string[];
}

/** A check of one resolved address: the refusal, or null when the policy lets it through. */
export type EgressCheck = (host: string, address: string) => EgressRefused | null;

function parseAllowList(allow: readonly string[]): Range[] {
  return allow.map((entry) => {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  });
}

function allowed(ip: string, ranges: readonly Range[]): boolean {
  if (ranges.length === 0) return false;
  const parsed = parseIp(ip);
  if (!parsed) return false;
  const address =
    parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  return ranges.some((range) => address.kind() === range[0].kind() && address.match(range));
}

/** The policy as a function of (host, resolved address). Throws on a malformed allow list. */
export function egressCheck(policy: EgressPolicy, options: EgressOptions = {}): EgressCheck {
  if (policy === 'allow-all') return () => null;
  const allow = parseAllowList(options.allow ?? []);
  return (host, address) => {
    const reason = nonPublicReason(address);
    if (reason === null || allowed(address, allow)) return null;
    return new EgressRefused(host, address, reason);
  };
}

const systemResolve: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true });

function requestedFamily(options: LookupOptions): 4 | 6 | 0 {
  const family = options.family;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/**
 * A `dns.lookup`-compatible function for `net.connect`/`tls.connect`: resolves the name, then refuses
 * (with EgressRefused) when the policy is public-only and ANY resolved address is not public. IP literals
 * are checked without a lookup. `resolve` replaces the system resolver (tests).
 */
export function policyLookup(
  policy: EgressPolicy,
  resolve: Resolver = systemResolve,
  options: EgressOptions = {},
): LookupFunction {
  const check = egressCheck(policy, options);
  return (hostname, lookupOptions, callback) => {
    const family = requestedFamily(lookupOptions);
    const literal = net.isIP(hostname);
    const answer: Promise<LookupAddress[]> =
      literal !== 0 ? Promise.resolve([{ address: hostname, family: literal }]) : resolve(hostname);
    // The callback runs outside the promise chain, as dns.lookup's does: what it throws is not swallowed.
    answer.then(
      (resolved) => {
        for (const { address } of resolved) {
          const refused = check(hostname, address);
          if (refused) return process.nextTick(callback, refused, '');
        }
        const usable = family === 0 ? resolved : resolved.filter((entry) => entry.family === family);
        const first = usable[0];
        if (!first) {
          const error: NodeJS.ErrnoException = new Error(`could not resolve ${hostname}`);
          error.code = 'ENOTFOUND';
          return process.nextTick(callback, error, '');
        }
        if (lookupOptions.all) process.nextTick(callback, null, usable);
        else process.nextTick(callback, null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => process.nextTick(callback, error, ''),
    );
  };
}

/**
 * An undici `connect` that applies the egress policy: names through `policyLookup` (checked after
 * resolution, connecting to an address that passed), IP literals checked before dialling since
 * net.connect skips the lookup for them.
 */
export function egressConnector(
  policy: EgressPolicy,
  timeoutMs: number,
  resolve: Resolver | undefined,
): buildConnector.connector {
  const lookup = policyLookup(policy, resolve);
  const connect = undici().buildConnector({ lookup, timeout: timeoutMs });
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (net.isIP(host) === 0) return connect(options, callback);
    lookup(host, { all: true }, (error) => {
      if (error) callback(error, null);
      else connect(options, callback);
    });
  };
}
