/**
 * Step authentication applied to an outgoing request (spec 2.5, DESIGN §4). Pure apart from the
 * random nonce and the clock, both of which can be given.
 *
 * - `{}` and `client_certificate` leave the request as it is (the HTTP client presents the
 *   certificate).
 * - `basic` sets `Authorization: Basic base64(username:password)`, replacing any Authorization
 *   header whatever its case.
 * - `oauth_1` signs with HMAC-SHA1 (RFC 5849 §3.4.2). The signature base string holds the URL's
 *   query parameters and the body parameters: the `form` fields when the body is empty (they are
 *   sent form-encoded), or the body itself when its content type is
 *   `application/x-www-form-urlencoded`. `oauth_token` is sent only when there is an access token.
 *   `signature_type` places the `oauth_*` parameters in the Authorization header, the URL query or
 *   the form body.
 */
import { Buffer } from 'node:buffer';
import { createHmac, randomBytes } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import type { Auth } from '../domain/auth.js';

export interface AuthTarget {
  method: string;
  url: string;
  headers: Record<string, string[]>;
  body: string;
  form: Record<string, string | string[]>;
}

export interface AuthOptions {
  /** `oauth_nonce`; 32 random letters and digits when not given. */
  nonce?: string;
  /** `oauth_timestamp` in Unix seconds; now when not given. */
  timestamp?: number;
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Returns a new target with the authentication applied; the given one is not changed. */
export function applyAuth(auth: Auth, target: AuthTarget, options: AuthOptions = {}): AuthTarget {
  const copy: AuthTarget = { ...target, headers: { ...target.headers }, form: { ...target.form } };
  if (!('auth_type' in auth)) return copy;
  switch (auth.auth_type) {
    case 'client_certificate':
      return copy;
    case 'basic': {
      const credentials = Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64');
      return { ...copy, headers: setHeader(copy.headers, 'Authorization', `Basic ${credentials}`) };
    }
    case 'oauth_1':
      return signOAuth1(auth, copy, options);
  }
}

type OAuth1 = Extract<Auth, { auth_type: 'oauth_1' }>;

function signOAuth1(auth: OAuth1, target: AuthTarget, options: AuthOptions): AuthTarget {
  const contentType = findHeader(target.headers, 'content-type');
  const isFormType = contentType !== undefined && mediaType(contentType) === FORM_TYPE;
  const sendsForm = target.body === '' && Object.keys(target.form).length > 0;
  if (
    auth.signature_type === 'body' &&
    !(target.body === '' ? contentType === undefined || isFormType : isFormType)
  ) {
    throw new Error(
      `OAuth 1.0 body signing needs a form body (${FORM_TYPE}), but the step's body is ${contentType ?? 'not form-encoded'}`,
    );
  }

  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    throw new Error(`OAuth 1.0 signing needs an absolute URL, got ${JSON.stringify(target.url)}`);
  }

  const parameters = paramRecord();
  for (const [name, value] of url.searchParams) addParam(parameters, name, value);
  if (target.body !== '' && isFormType) {
    for (const [name, value] of new URLSearchParams(target.body)) addParam(parameters, name, value);
  } else if (sendsForm && (contentType === undefined || isFormType)) {
    for (const [name, value] of Object.entries(target.form)) {
      for (const item of Array.isArray(value) ? value : [value]) addParam(parameters, name, item);
    }
  }

  const oauth = new OAuth({
    consumer: { key: auth.consumer_key, secret: auth.consumer_secret },
    signature_method: 'HMAC-SHA1',
    hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
  });
  const protocol: OAuth.Data = Object.assign(paramRecord(), {
    oauth_consumer_key: auth.consumer_key,
    oauth_nonce: options.nonce ?? nonce(),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    oauth_version: '1.0',
    ...(auth.access_token === '' ? {} : { oauth_token: auth.access_token }),
  });
  const signature = oauth.getSignature(
    { method: target.method, url: `${url.origin}${url.pathname}`, data: parameters },
    auth.token_secret,
    Object.assign(paramRecord(), protocol),
  );
  const signed: OAuth.Authorization = { ...protocol, oauth_signature: signature };
  const pairs = Object.entries(signed).map(([name, value]) => [name, String(value)] as const);

  switch (auth.signature_type) {
    case 'auth_header':
      return {
        ...target,
        headers: setHeader(target.headers, 'Authorization', oauth.toHeader(signed).Authorization),
      };
    case 'query': {
      const encoded = pairs.map(
        ([name, value]) => `${oauth.percentEncode(name)}=${oauth.percentEncode(value)}`,
      );
      return { ...target, url: appendQuery(target.url, encoded.join('&')) };
    }
    case 'body': {
      const headers =
        contentType === undefined ? setHeader(target.headers, 'Content-Type', FORM_TYPE) : target.headers;
      if (target.body !== '') {
        const encoded = pairs.map(
          ([name, value]) => `${oauth.percentEncode(name)}=${oauth.percentEncode(value)}`,
        );
        return { ...target, headers, body: `${target.body}&${encoded.join('&')}` };
      }
      return { ...target, headers, form: { ...target.form, ...Object.fromEntries(pairs) } };
    }
  }
}

/** A parameter map without a prototype, so that any name (`__proto__` included) is a plain key. */
function paramRecord(): Record<string, string | string[]> {
  return Object.create(null) as Record<string, string | string[]>;
}

function addParam(parameters: Record<string, string | string[]>, name: string, value: string): void {
  const existing = parameters[name];
  if (existing === undefined) parameters[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else parameters[name] = [existing, value];
}

const NONCE_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function nonce(): string {
  return Array.from(randomBytes(32), (byte) => NONCE_ALPHABET[byte % NONCE_ALPHABET.length]).join('');
}

/** Adds encoded parameters to a URL's query, before any fragment, keeping the existing query as written. */
function appendQuery(url: string, query: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${separator}${query}${fragment}`;
}

export function findHeader(headers: Record<string, string[]>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, values] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted && values.length > 0) return values.join(', ');
  }
  return undefined;
}

/** A copy of the headers with `name` (matched case-insensitively) set to one value. */
function setHeader(headers: Record<string, string[]>, name: string, value: string): Record<string, string[]> {
  const wanted = name.toLowerCase();
  const kept = Object.entries(headers).filter(([key]) => key.toLowerCase() !== wanted);
  return Object.fromEntries([...kept, [name, [value]]]);
}

function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}
