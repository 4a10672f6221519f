import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';

/**
 * Every import fixture is imported through the API, and the tests it makes run and pass against a
 * local upstream that implements the requests of the fixture: the Swagger Petstore (both document
 * versions), the Postman bookshop collection (with its environment, base_url pointed here), the
 * Chromium curl lines and a recorded exchange whose token only chaining can carry.
 */

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/import/${name}`, import.meta.url), 'utf8');

const pet = {
  id: 10,
  name: 'doggie',
  category: { id: 1, name: 'Dogs' },
  photoUrls: ['p.png'],
  tags: [],
  status: 'available',
};
const order = {
  id: 10,
  petId: 198772,
  quantity: 7,
  shipDate: '2024-01-01T00:00:00Z',
  status: 'approved',
  complete: true,
};
const user = {
  id: 10,
  username: 'theUser',
  firstName: 'John',
  lastName: 'James',
  email: 'john@email.com',
  password: '12345',
  phone: '12345',
  userStatus: 1,
};

type Route = [
  method: string,
  path: RegExp,
  answer: (request: Received) => { status: number; body?: unknown },
];

interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The Swagger Petstore's operations, under /v2 and /v3. */
const petstore: Route[] = [
  ['POST', /^\/v[23]\/pet$/, () => ({ status: 200, body: pet })],
  ['PUT', /^\/v[23]\/pet$/, () => ({ status: 200, body: pet })],
  ['GET', /^\/v[23]\/pet\/findBy(Status|Tags)$/, () => ({ status: 200, body: [pet] })],
  ['GET', /^\/v[23]\/pet\/\d+$/, () => ({ status: 200, body: pet })],
  ['POST', /^\/v[23]\/pet\/\d+$/, () => ({ status: 200, body: pet })],
  ['DELETE', /^\/v[23]\/pet\/\d+$/, () => ({ status: 200 })],
  [
    'POST',
    /^\/v[23]\/pet\/\d+\/uploadImage$/,
    () => ({ status: 200, body: { code: 200, type: 'ok', message: 'uploaded' } }),
  ],
  ['GET', /^\/v[23]\/store\/inventory$/, () => ({ status: 200, body: { available: 3 } })],
  ['POST', /^\/v[23]\/store\/order$/, () => ({ status: 200, body: order })],
  ['GET', /^\/v[23]\/store\/order\/\d+$/, () => ({ status: 200, body: order })],
  ['DELETE', /^\/v[23]\/store\/order\/\d+$/, () => ({ status: 200 })],
  ['POST', /^\/v[23]\/user(\/createWith(List|Array))?$/, () => ({ status: 200, body: user })],
  ['GET', /^\/v[23]\/user\/login$/, () => ({ status: 200, body: 'logged in user session:1' })],
  ['GET', /^\/v[23]\/user\/logout$/, () => ({ status: 200, body: 'ok' })],
  ['GET', /^\/v[23]\/user\/[^/]+$/, () => ({ status: 200, body: user })],
  ['PUT', /^\/v[23]\/user\/[^/]+$/, () => ({ status: 200 })],
  ['DELETE', /^\/v[23]\/user\/[^/]+$/, () => ({ status: 200 })],
];

const issued = new Set<string>();
const bearer = (r: Received) => /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1] ?? '';

/** The bookshop of the Postman collection (and of the curl lines). */
const bookshop: Route[] = [
  [
    'POST',
    /^\/api\/auth\/login$/,
    (r) => {
      const { email, password } = JSON.parse(r.body || '{}');
      if (email !== 'alice@example.com' || password !== 's3cret-Passw0rd') return { status: 401 };
      const token = `tok_${randomBytes(8).toString('hex')}`;
      issued.add(token);
      return { status: 200, body: { token, user: { id: 42, name: 'Alice', roles: ['admin'] } } };
    },
  ],
  [
    'GET',
    /^\/api\/auth\/me$/,
    (r) =>
      issued.has(bearer(r)) ? { status: 200, body: { id: 42, email: 'alice@example.com' } } : { status: 401 },
  ],
  [
    'GET',
    /^\/api\/books$/,
    (r) =>
      r.query.get('limit') === '10' && !r.query.has('draft')
        ? { status: 200, body: { total: 2, items: [{ title: 'Emma' }, { title: 'Dune' }] } }
        : { status: 400 },
  ],
  [
    'GET',
    /^\/api\/books\/42$/,
    (r) =>
      /^[0-9a-f-]{36}$/.test(String(r.headers['x-request-id']))
        ? { status: 200, body: { title: 'Dune', stock: 3, reorder: true } }
        : { status: 400 },
  ],
  [
    'POST',
    /^\/api\/books\/42\/reviews$/,
    (r) => {
      if (r.headers['content-type']?.startsWith('application/json')) {
        const review = JSON.parse(r.body);
        return review.rating === 5 && r.headers.cookie === 'session=4f9c2b71e8; theme=dark'
          ? { status: 201, body: { id: 7 } }
          : { status: 400 };
      }
      const form = new URLSearchParams(r.body);
      return form.get('rating') === '5' && form.get('comment') === 'Loved it' && !form.has('draft')
        ? { status: 201, body: { id: 8 } }
        : { status: 400 };
    },
  ],
  [
    'PUT',
    /^\/api\/books\/42\/cover$/,
    (r) =>
      new URLSearchParams(r.body).get('caption') === 'First edition' ? { status: 200 } : { status: 400 },
  ],
  [
    'GET',
    /^\/api\/partners\/stock$/,
    (r) =>
      r.headers['x-partner-key'] === 'pk_live_51HxQ2'
        ? { status: 200, body: { stock: 12 } }
        : { status: 403 },
  ],
  [
    'GET',
    /^\/api\/partners\/export$/,
    (r) =>
      r.headers.authorization === `Basic ${Buffer.from('partner:partner-pass').toString('base64')}`
        ? { status: 200, body: 'id,title\n42,Dune' }
        : { status: 401 },
  ],
  [
    'GET',
    /^\/api\/partners\/feed$/,
    (r) =>
      /^OAuth .*oauth_consumer_key="ck-bookshop".*oauth_signature=/.test(r.headers.authorization ?? '')
        ? { status: 200, body: { items: [] } }
        : { status: 401 },
  ],
  ['GET', /^\/api\/health$/, () => ({ status: 200, body: { status: 'ok' } })],
];

await describeApi('imported tests run and pass', (get) => {
  let upstream: http.Server;
  let base = '';
  const received: Received[] = [];

  before(async () => {
    upstream = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        const url = new URL(request.url ?? '/', 'http://upstream');
        const r: Received = {
          method: request.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: request.headers,
          body,
        };
        received.push(r);
        const route = [...petstore, ...bookshop].find(
          ([method, path]) => method === r.method && path.test(r.path),
        );
        const answer = route
          ? route[2](r)
          : { status: 404, body: { error: `no route ${r.method} ${r.path}` } };
        response.writeHead(answer.status, { 'content-type': 'application/json', 'x-trace': 't-1' });
        response.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  async function bucket(): Promise<string> {
    return (await get().data('POST', '/buckets', { name: `e2e imports ${randomBytes(4).toString('hex')}` }))
      .key;
  }

  /** Imports, then triggers each created test and answers the finished runs. */
  async function importAndRun(body: Record<string, unknown>) {
    const key = await bucket();
    const imported = await get().data('POST', `/buckets/${key}/imports`, body);
    const runs = [];
    for (const t of imported.tests as { id: string; name: string }[]) {
      const detail = await get().data('GET', `/buckets/${key}/tests/${t.id}`);
      const started = await get().call({
        method: 'POST',
        url: detail.trigger_url.slice(PUBLIC_URL.length),
        as: null,
      });
      assert.equal(started.statusCode, 201, started.body);
      const runId = started.json().data.runs[0].test_run_id;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const run = await get().data('GET', `/buckets/${key}/tests/${t.id}/results/${runId}`);
        if (!['queued', 'working'].includes(run.result)) {
          runs.push({ name: t.name, run });
          break;
        }
        if (Date.now() > deadline) throw new Error(`run of ${t.name} still ${run.result}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return { imported, runs };
  }

  /** Every run passed, with what failed spelled out otherwise. */
  function assertPassed(runs: { name: string; run: any }[], expectedTests: number) {
    assert.equal(runs.length, expectedTests);
    for (const { name, run } of runs) {
      const failures = run.requests
        .filter((r: any) => r.result !== 'pass')
        .map((r: any) => ({
          url: r.url,
          error: r.error ?? r.errors ?? r.note,
          status: r.response_status_code,
          assertions: r.assertions.filter((a: any) => a.result !== 'pass'),
          variables: r.variables.filter((v: any) => v.result !== 'pass'),
          scripts: r.scripts.filter((s: any) => s.result !== 'pass'),
        }));
      assert.equal(run.result, 'pass', `${name}: ${JSON.stringify(failures, null, 1)}`);
      assert.ok(run.assertions_passed > 0 || run.requests.length > 0);
    }
  }

  test('the Swagger Petstore OpenAPI 3 document', async () => {
    const { runs } = await importAndRun({
      content: fixture('petstore-openapi.yaml'),
      options: { base_url: `${base}/v3` },
    });
    assertPassed(runs, 3);
    const steps = runs.reduce((n, r) => n + r.run.requests.length, 0);
    assert.equal(steps, 19);
    assert.ok(
      received.some(
        (r) =>
          r.method === 'GET' && r.path === '/v3/pet/findByStatus' && r.query.get('status') === 'available',
      ),
    );
  });

  test('the Swagger Petstore Swagger 2.0 document, one test per operation', async () => {
    const { runs } = await importAndRun({
      content: fixture('petstore-swagger2.json'),
      options: { base_url: `${base}/v2`, split: 'operation' },
    });
    assertPassed(runs, 20);
    const login = received.find((r) => r.path === '/v2/user/login');
    assert.equal(login?.query.get('username'), 'string');
  });

  test('the Postman collection with its environment', async () => {
    const environment = JSON.parse(fixture('bookshop.postman_environment.json'));
    environment.values.find((v: { key: string }) => v.key === 'base_url').value = `${base}/api`;
    const { imported, runs } = await importAndRun({
      content: fixture('bookshop.postman_collection.json'),
      environment,
    });
    assert.equal(imported.format, 'postman');
    assertPassed(runs, 4);
    // The token of the login answer was extracted and sent by the next step.
    const me = received.filter((r) => r.path === '/api/auth/me').at(-1)!;
    assert.ok(issued.has(bearer(me)));
  });

  test('the Chromium curl lines, bash and cmd', async () => {
    for (const name of ['chromium-bash.curl', 'chromium-cmd.curl']) {
      const content = fixture(name).replaceAll('https://bookshop.example.com', base);
      const { runs } = await importAndRun({ content });
      assertPassed(runs, 1);
      const review = received.filter((r) => r.path === '/api/books/42/reviews').at(-1)!;
      assert.deepEqual(JSON.parse(review.body), {
        rating: 5,
        comment: "It's a classic — 50% off & worth it",
      });
    }
  });

  test('a recorded HAR with chain: the token of the login answer is carried to the next request', async () => {
    const recordedToken = 'tok_recorded_0123456789';
    const har = {
      log: {
        version: '1.2',
        creator: { name: 'test', version: '1' },
        entries: [
          {
            request: {
              method: 'POST',
              url: `${base}/api/auth/login`,
              headers: [{ name: 'Content-Type', value: 'application/json' }],
              postData: {
                mimeType: 'application/json',
                text: '{"email":"alice@example.com","password":"s3cret-Passw0rd"}',
              },
            },
            response: {
              status: 200,
              headers: [],
              content: {
                mimeType: 'application/json',
                text: JSON.stringify({ token: recordedToken, user: { id: 42 } }),
              },
            },
          },
          {
            request: {
              method: 'GET',
              url: `${base}/api/auth/me`,
              headers: [{ name: 'Authorization', value: `Bearer ${recordedToken}` }],
            },
            response: {
              status: 200,
              headers: [],
              content: { mimeType: 'application/json', text: '{"id":42}' },
            },
          },
        ],
      },
    };
    const unchained = await importAndRun({ content: har });
    assert.equal(unchained.runs[0]!.run.result, 'fail', 'the recorded token is not valid any more');
    const { imported, runs } = await importAndRun({ content: har, options: { chain: true } });
    assert.equal(imported.notes.length, 1);
    assertPassed(runs, 1);
  });
});
