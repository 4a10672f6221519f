import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Auth } from '../../src/domain/auth.js';
import { applyAuth, type AuthTarget } from '../../src/runner/auth.js';

type OAuth1 = Extract<Auth, { auth_type: 'oauth_1' }>;

function target(extra: Partial<AuthTarget> = {}): AuthTarget {
  return {
    method: 'GET',
    url: 'https://api.example.com/items?page=2',
    headers: {},
    body: '',
    form: {},
    ...extra,
  };
}

/** Parses `OAuth k="v", …` into decoded parameters. */
function parseOAuthHeader(value: string): Record<string, string> {
  assert.match(value, /^OAuth /);
  const params: Record<string, string> = {};
  for (const match of value.slice(6).matchAll(/([^=,\s]+)="([^"]*)"/g)) {
    params[decodeURIComponent(match[1] ?? '')] = decodeURIComponent(match[2] ?? '');
  }
  return params;
}

function authorization(t: AuthTarget): string {
  const entries = Object.entries(t.headers).filter(([name]) => name.toLowerCase() === 'authorization');
  assert.equal(entries.length, 1, 'exactly one Authorization header');
  const values = entries[0]?.[1] ?? [];
  assert.equal(values.length, 1);
  return values[0] ?? '';
}

/** The Twitter "Creating a signature" example (developer.twitter.com, OAuth 1.0a). */
const TWITTER: OAuth1 = {
  auth_type: 'oauth_1',
  consumer_key: 'xvz1evFS4wEEPTGEFPHBog',
  consumer_secret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw',
  access_token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb',
  token_secret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE',
  signature_type: 'auth_header',
};
const TWITTER_OPTIONS = { nonce: 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg', timestamp: 1318622958 };
const TWITTER_SIGNATURE = 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=';
const TWITTER_STATUS = 'Hello Ladies + Gentlemen, a signed OAuth request!';
const TWITTER_URL = 'https://api.twitter.com/1.1/statuses/update.json?include_entities=true';

describe('applyAuth: none, basic and client certificate', () => {
  test('an empty auth returns an equal, new object', () => {
    const t = target({ headers: { Accept: ['*/*'] }, form: { a: '1' } });
    const out = applyAuth({}, t);
    assert.deepEqual(out, t);
    assert.notEqual(out, t);
    assert.notEqual(out.headers, t.headers);
  });

  test('client_certificate leaves the request unchanged', () => {
    const t = target({ headers: { Accept: ['*/*'] } });
    assert.deepEqual(applyAuth({ auth_type: 'client_certificate' }, t), t);
  });

  test('basic sets Authorization to Basic base64(username:password)', () => {
    const out = applyAuth({ auth_type: 'basic', username: 'Aladdin', password: 'open sesame' }, target());
    assert.equal(authorization(out), 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
  });

  test('basic encodes UTF-8 credentials', () => {
    const out = applyAuth({ auth_type: 'basic', username: 'jöse', password: 'pä:ss' }, target());
    const encoded = authorization(out).slice('Basic '.length);
    assert.equal(Buffer.from(encoded, 'base64').toString('utf8'), 'jöse:pä:ss');
  });

  test('basic replaces an existing Authorization header whatever its case, and keeps the others', () => {
    const t = target({ headers: { AUTHORIZATION: ['Bearer old'], authorization: ['x'], Accept: ['*/*'] } });
    const out = applyAuth({ auth_type: 'basic', username: 'u', password: 'p' }, t);
    assert.equal(authorization(out), `Basic ${Buffer.from('u:p').toString('base64')}`);
    assert.deepEqual(out.headers.Accept, ['*/*']);
    assert.deepEqual(
      t.headers,
      { AUTHORIZATION: ['Bearer old'], authorization: ['x'], Accept: ['*/*'] },
      'input untouched',
    );
  });
});

describe('applyAuth: OAuth 1.0 signatures (published vectors)', () => {
  test('Twitter "Creating a signature": form-encoded body and query parameters', () => {
    const t = target({
      method: 'POST',
      url: TWITTER_URL,
      headers: { 'Content-Type': ['application/x-www-form-urlencoded'] },
      body: `status=${encodeURIComponent(TWITTER_STATUS).replace(/!/g, '%21')}`,
    });
    const out = applyAuth(TWITTER, t, TWITTER_OPTIONS);
    const params = parseOAuthHeader(authorization(out));
    assert.equal(params.oauth_signature, TWITTER_SIGNATURE);
    assert.deepEqual(params, {
      oauth_consumer_key: 'xvz1evFS4wEEPTGEFPHBog',
      oauth_nonce: TWITTER_OPTIONS.nonce,
      oauth_signature: TWITTER_SIGNATURE,
      oauth_signature_method: 'HMAC-SHA1',
      oauth_timestamp: '1318622958',
      oauth_token: TWITTER.access_token,
      oauth_version: '1.0',
    });
    assert.equal(out.body, t.body);
    assert.equal(out.url, t.url);
  });

  test('the same request with its parameters given as form fields signs the same', () => {
    const t = target({ method: 'POST', url: TWITTER_URL, form: { status: TWITTER_STATUS } });
    const params = parseOAuthHeader(authorization(applyAuth(TWITTER, t, TWITTER_OPTIONS)));
    assert.equal(params.oauth_signature, TWITTER_SIGNATURE);
  });

  test('OAuth Core 1.0 Appendix A: GET with query parameters', () => {
    const auth: OAuth1 = {
      auth_type: 'oauth_1',
      consumer_key: 'dpf43f3p2l4k3l03',
      consumer_secret: 'kd94hf93k423kf44',
      access_token: 'nnch734d00sl2jdk',
      token_secret: 'pfkkdhi9sl3r4s00',
      signature_type: 'auth_header',
    };
    const t = target({ url: 'http://photos.example.net/photos?file=vacation.jpg&size=original' });
    const out = applyAuth(auth, t, { nonce: 'kllo9940pd9333jh', timestamp: 1191242096 });
    assert.equal(parseOAuthHeader(authorization(out)).oauth_signature, 'tR3+Ty81lMeYAr/Fid0kMTYa/WM=');
  });

  test('RFC 5849 §3.4.1: duplicate, encoded and empty parameters from query and body', () => {
    const auth: OAuth1 = {
      auth_type: 'oauth_1',
      consumer_key: '9djdj82h48djs9d2',
      consumer_secret: 'consumer secret',
      access_token: 'kkk9d7dh3k39sjv7',
      token_secret: 'token secret',
      signature_type: 'auth_header',
    };
    const t = target({
      method: 'POST',
      url: 'HTTP://EXAMPLE.COM:80/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b#frag',
      headers: { 'content-type': ['application/x-www-form-urlencoded; charset=utf-8'] },
      body: 'c2&a3=2+q',
    });
    const out = applyAuth(auth, t, { nonce: '7d8f3e4a', timestamp: 137131201 });
    const base =
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D' +
      '%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1' +
      '%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7%26oauth_version%3D1.0';
    const expected = createHmac('sha1', 'consumer%20secret&token%20secret').update(base).digest('base64');
    assert.equal(parseOAuthHeader(authorization(out)).oauth_signature, expected);
  });

  test('without an access token, oauth_token is left out', () => {
    const out = applyAuth({ ...TWITTER, access_token: '', token_secret: '' }, target(), TWITTER_OPTIONS);
    assert.equal('oauth_token' in parseOAuthHeader(authorization(out)), false);
  });

  test('a nonce and a timestamp are generated when not given', () => {
    const before = Math.floor(Date.now() / 1000);
    const a = parseOAuthHeader(authorization(applyAuth(TWITTER, target())));
    const b = parseOAuthHeader(authorization(applyAuth(TWITTER, target())));
    assert.match(a.oauth_nonce ?? '', /^[A-Za-z0-9]{32}$/);
    assert.notEqual(a.oauth_nonce, b.oauth_nonce);
    assert.ok(Number(a.oauth_timestamp) >= before && Number(a.oauth_timestamp) <= before + 5);
  });
});

describe('applyAuth: OAuth 1.0 placement', () => {
  test('auth_header replaces an existing Authorization header', () => {
    const out = applyAuth(TWITTER, target({ headers: { authorization: ['Basic x'] } }), TWITTER_OPTIONS);
    assert.match(authorization(out), /^OAuth oauth_consumer_key="/);
  });

  test('query appends the oauth_* parameters to the URL, before a fragment', () => {
    const auth: OAuth1 = { ...TWITTER, signature_type: 'query' };
    const t = target({ url: 'https://api.example.com/items?page=2#top' });
    const out = applyAuth(auth, t, TWITTER_OPTIONS);
    const url = new URL(out.url);
    assert.equal(url.hash, '#top');
    assert.equal(url.searchParams.get('page'), '2');
    assert.equal(url.searchParams.get('oauth_consumer_key'), TWITTER.consumer_key);
    assert.equal(url.searchParams.get('oauth_token'), TWITTER.access_token);
    const header = parseOAuthHeader(authorization(applyAuth(TWITTER, t, TWITTER_OPTIONS)));
    assert.equal(
      url.searchParams.get('oauth_signature'),
      header.oauth_signature,
      'same signature as in a header',
    );
    assert.deepEqual(out.headers, {});
    assert.ok(out.url.startsWith('https://api.example.com/items?page=2&oauth_'));
  });

  test('query starts a query string when the URL has none', () => {
    const out = applyAuth(
      { ...TWITTER, signature_type: 'query' },
      target({ url: 'https://a.example/x' }),
      TWITTER_OPTIONS,
    );
    assert.ok(out.url.startsWith('https://a.example/x?oauth_'));
  });

  test('body adds the oauth_* parameters to the form and sets the content type', () => {
    const auth: OAuth1 = { ...TWITTER, signature_type: 'body' };
    const t = target({ method: 'POST', url: TWITTER_URL, form: { status: TWITTER_STATUS } });
    const out = applyAuth(auth, t, TWITTER_OPTIONS);
    assert.equal(out.form.status, TWITTER_STATUS);
    assert.equal(out.form.oauth_signature, TWITTER_SIGNATURE);
    assert.equal(out.form.oauth_token, TWITTER.access_token);
    assert.deepEqual(out.headers['Content-Type'], ['application/x-www-form-urlencoded']);
    assert.equal(out.url, TWITTER_URL);
    assert.deepEqual(t.form, { status: TWITTER_STATUS }, 'input untouched');
  });

  test('body appends the oauth_* parameters to a form-encoded body text', () => {
    const auth: OAuth1 = { ...TWITTER, signature_type: 'body' };
    const t = target({
      method: 'POST',
      url: TWITTER_URL,
      headers: { 'content-type': ['application/x-www-form-urlencoded'] },
      body: 'status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21',
    });
    const out = applyAuth(auth, t, TWITTER_OPTIONS);
    const params = new URLSearchParams(out.body);
    assert.equal(params.get('status'), TWITTER_STATUS);
    assert.equal(params.get('oauth_signature'), TWITTER_SIGNATURE);
    assert.deepEqual(out.headers, t.headers);
  });

  test('body signing of a request with a non-form body throws', () => {
    const auth: OAuth1 = { ...TWITTER, signature_type: 'body' };
    const json = target({
      method: 'POST',
      headers: { 'Content-Type': ['application/json'] },
      body: '{"a":1}',
    });
    assert.throws(() => applyAuth(auth, json), /body signing needs a form body/);
    const untyped = target({ method: 'POST', body: 'raw text' });
    assert.throws(() => applyAuth(auth, untyped), /body signing needs a form body/);
  });

  test('a relative URL cannot be signed', () => {
    assert.throws(() => applyAuth(TWITTER, target({ url: '/relative' })), /absolute URL/);
  });

  test('secrets never appear in the request, whatever the placement', () => {
    for (const signature_type of ['auth_header', 'query', 'body'] as const) {
      const auth: OAuth1 = { ...TWITTER, signature_type };
      const out = applyAuth(auth, target({ method: 'POST', form: { a: '1' } }), TWITTER_OPTIONS);
      const text = JSON.stringify(out);
      for (const secret of [TWITTER.consumer_secret, TWITTER.token_secret]) {
        assert.equal(text.includes(secret), false, `${signature_type} leaks a secret`);
        assert.equal(text.includes(encodeURIComponent(secret)), false, `${signature_type} leaks a secret`);
      }
    }
  });
});
