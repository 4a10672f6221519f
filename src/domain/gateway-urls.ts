/**
 * Gateway URLs in their two forms (docs/capture.md), shared by the server and the dashboard:
 *
 * - path form: `<traffic origin>/gateway/<bucket_key>/<scheme>/<host[:port]>/<path>?<query>`;
 * - host form, with GATEWAY_DOMAIN set: `<scheme>://<encoded host>-<bucket_key>.<domain>/<path>?<query>`,
 *   where the host is encoded by doubling each `-` and then turning each `.` into `-`, and the port
 *   travels in the `Vigil-Request-Port` header. Client libraries written for the original service
 *   rewrite URLs this way.
 */

export const BUCKET_KEY = /^[a-z0-9]{12}$/;

/** Headers that steer the gateway; they are not passed upstream. */
export const REQUEST_PORT_HEADERS = ['vigil-request-port', 'runscope-request-port'] as const;

/** The path-form gateway URL that forwards to `target` (an http or https URL without credentials). */
export function gatewayPathUrl(gatewayUrl: string, target: string): string {
  const url = checkedTarget(target);
  return `${gatewayUrl}/${url.protocol.slice(0, -1)}/${url.host}${url.pathname}${url.search}`;
}

/** The host-form gateway URL that forwards to `target`, and the port header it needs (if any). */
export function gatewayHostUrl(
  domain: string,
  bucketKey: string,
  target: string,
): { url: string; port: string | null } {
  const url = checkedTarget(target);
  if (url.hostname.startsWith('[')) throw new Error('The host form of gateway URLs has no IPv6 addresses.');
  const host = `${url.hostname.replaceAll('-', '--').replaceAll('.', '-')}-${bucketKey}.${domain}`;
  return {
    url: `${url.protocol}//${host}${url.pathname}${url.search}`,
    port: url.port === '' ? null : url.port,
  };
}

export type TrafficHost =
  { kind: 'capture'; bucketKey: string } | { kind: 'gateway'; bucketKey: string; upstreamHost: string };

/**
 * What a request's host names under the gateway domain: `<bucket_key>.<domain>` is the bucket's
 * capture URL, `<encoded host>-<bucket_key>.<domain>` its gateway to that host; null for any other host.
 */
export function parseTrafficHost(hostHeader: string, domain: string): TrafficHost | null {
  const host = hostHeader.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${domain}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  if (label.includes('.')) return null;
  if (BUCKET_KEY.test(label)) return { kind: 'capture', bucketKey: label };
  const cut = label.length - 13;
  const bucketKey = label.slice(cut + 1);
  if (cut < 1 || label[cut] !== '-' || !BUCKET_KEY.test(bucketKey)) return null;
  const upstreamHost = label.slice(0, cut).replace(/--|-/g, (dash) => (dash === '--' ? '-' : '.'));
  return { kind: 'gateway', bucketKey, upstreamHost };
}

function checkedTarget(target: string): URL {
  const url = new URL(target);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error('The gateway forwards http and https URLs only.');
  }
  if (url.username || url.password) throw new Error('The gateway does not take credentials in the URL.');
  return url;
}
