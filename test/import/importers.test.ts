import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { AppError } from '../../src/domain/errors.js';
import { bashWords, cmdWords, importCurl } from '../../src/import/curl.js';
import { importFile } from '../../src/import/index.js';
import { importOpenApi } from '../../src/import/openapi.js';
import { translateTestScript } from '../../src/import/postman-scripts.js';
import { importPostman } from '../../src/import/postman.js';
import { type ImportedRequestStep, ImportedTestSchema } from '../../src/import/result.js';
import { type Exchange, importExchanges } from '../../src/import/traffic.js';
import { compileBodySchema } from '../../src/services/validation.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/import/${name}`, import.meta.url), 'utf8');
const json = (name: string) => JSON.parse(fixture(name)) as unknown;
const requests = (steps: unknown[]) => steps as ImportedRequestStep[];

/** Every imported test must pass the create schema as it is. */
function assertCreatable(tests: unknown[]) {
  const validate = compileBodySchema(ImportedTestSchema);
  for (const t of tests) assert.ok(validate(t), JSON.stringify(validate.errors));
}

describe('Postman test scripts', () => {
  test('status, JSON equality, header present, response time and variables become native checks', () => {
    const t = translateTestScript(
      [
        'var jsonData = pm.response.json();',
        'pm.test("ok", function () { pm.response.to.have.status(201); });',
        'pm.test("code", () => { pm.expect(pm.response.code).to.eql(200); });',
        'pm.expect(jsonData.a.b).to.eql("x");',
        'pm.expect(jsonData.items[0]["odd key"]).to.equal(3);',
        'pm.response.to.have.header("X-Trace");',
        'pm.expect(pm.response.responseTime).to.be.below(500);',
        'pm.environment.set("token", pm.response.json().auth.token);',
        'pm.collectionVariables.set("id", jsonData.id);',
        'tests["legacy"] = responseCode.code === 204;',
      ].join('\n'),
    );
    assert.equal(t.leftover, null);
    assert.deepEqual(t.assertions, [
      { source: 'response_status', comparison: 'equal', value: 201 },
      { source: 'response_status', property: '', comparison: 'equal', value: 200 },
      { source: 'response_json', property: 'a.b', comparison: 'equal', value: 'x' },
      { source: 'response_json', property: 'items[0]["odd key"]', comparison: 'equal', value: 3 },
      { source: 'response_headers', property: 'X-Trace', comparison: 'not_empty' },
      { source: 'response_time', property: '', comparison: 'is_less_than', value: 500 },
      { source: 'response_status', property: '', comparison: 'equal', value: 204 },
    ]);
    assert.deepEqual(t.variables, [
      { name: 'token', source: 'response_json', property: 'auth.token' },
      { name: 'id', source: 'response_json', property: 'id' },
    ]);
  });

  test('a pm.test with anything untranslatable is kept whole; syntax errors keep the script', () => {
    const t = translateTestScript(
      'pm.test("mixed", function () {\n  pm.response.to.have.status(200);\n  console.log(1);\n});\npm.response.to.have.status(200);',
    );
    assert.deepEqual(t.assertions, [{ source: 'response_status', comparison: 'equal', value: 200 }]);
    assert.match(t.leftover ?? '', /^pm\.test\("mixed"[\s\S]*console\.log\(1\);\n\}\);$/);
    assert.equal(translateTestScript('pm.test(').leftover, 'pm.test(');
    // A call that only looks alike (another object) is not translated.
    assert.equal(
      translateTestScript('xm.response.to.have.status(200)').leftover,
      'xm.response.to.have.status(200)',
    );
  });
});

describe('Postman collections', () => {
  const collection = json('bookshop.postman_collection.json');
  const environment = json('bookshop.postman_environment.json');

  test('folders become tests, requests outside folders one more; variables from both files', () => {
    const { tests, notes } = importPostman(collection, { environment });
    assertCreatable(tests);
    assert.deepEqual(
      tests.map((t) => [t.name, t.steps.length]),
      [
        ['Bookshop API / Auth', 2],
        ['Bookshop API / Books', 4],
        ['Bookshop API / Partners', 3],
        ['Bookshop API', 1],
      ],
    );
    const vars = tests[0]!.environments![0]!.initial_variables!;
    assert.equal(vars.base_url, 'https://staging.bookshop.example.com/api', 'the environment wins');
    assert.equal(vars.user_id, '');
    assert.equal(vars.password, 's3cret-Passw0rd');
    assert.equal(vars.old_host, undefined, 'disabled values are left out');
    assert.equal(tests[0]!.environments![0]!.name, 'Bookshop staging');
    assert.ok(notes.some((n) => n.includes('image') && n.includes('file')));
  });

  test('requests: bodies, auth inheritance, path variables, scripts', () => {
    const { tests } = importPostman(collection, { environment });
    const [login] = requests(tests[0]!.steps);
    assert.equal(login!.method, 'POST');
    assert.equal(login!.url, '{{base_url}}/auth/login');
    assert.match(login!.body!, /"email": "\{\{email\}\}"/);
    assert.deepEqual(login!.headers!['Content-Type'], ['application/json']);
    assert.equal(login!.headers!.Authorization, undefined, 'noauth overrides the collection bearer');
    assert.deepEqual(login!.variables, [
      { name: 'token', source: 'response_json', property: 'token' },
      { name: 'user_id', source: 'response_json', property: 'user.id' },
    ]);
    assert.equal(login!.assertions!.length, 3);

    const [list, get, review, upload] = requests(tests[1]!.steps);
    assert.equal(list!.url, '{{base_url}}/books?limit=10&offset=0', 'disabled query parameters are dropped');
    assert.deepEqual(
      list!.headers!.Authorization,
      ['Bearer {{token}}'],
      'collection bearer auth is inherited',
    );
    assert.equal(list!.scripts, undefined);
    assert.deepEqual(
      list!.assertions!.map((a) => a.comparison),
      ['equal', 'not_empty', 'is_less_than', 'equal', 'contains'],
    );
    assert.equal(get!.url, '{{base_url}}/books/42');
    const me = requests(tests[0]!.steps)[1]!;
    assert.deepEqual(me.headers!.Authorization, ['Bearer {{token}}']);
    assert.deepEqual(me.assertions, [
      { source: 'response_status', comparison: 'equal', value: 200 },
      { source: 'response_json', property: 'id', comparison: 'equal', value: '{{user_id}}' },
      { source: 'response_json', property: 'email', comparison: 'equal', value: 'alice@example.com' },
    ]);
    assert.equal(me.scripts, undefined, 'a comparison with a variable is translated');
    assert.deepEqual(get!.headers!['X-Request-Id'], ['{{uuid}}']);
    assert.equal(get!.scripts!.length, 1);
    assert.ok(
      get!.scripts![0]!.split('\n').every((line) => line.startsWith('//')),
      'kept scripts are inert',
    );
    assert.match(get!.scripts![0]!, /console\.log/);
    assert.match(get!.before_scripts![0]!, /^\/\/ Postman pre-request script/);
    assert.match(get!.note!, /not translated/);
    assert.deepEqual(review!.form, { rating: '5', comment: 'Loved it' });
    assert.deepEqual(upload!.form, { caption: 'First edition' });

    const [apikey, basic, oauth] = requests(tests[2]!.steps);
    assert.deepEqual(apikey!.headers!['X-Partner-Key'], ['{{partner_key}}']);
    assert.deepEqual(basic!.auth, {
      auth_type: 'basic',
      username: 'partner',
      password: '{{partner_password}}',
    });
    assert.deepEqual(basic!.assertions, [
      { source: 'response_status', property: '', comparison: 'equal', value: 200 },
    ]);
    assert.deepEqual(oauth!.auth, {
      auth_type: 'oauth_1',
      consumer_key: '{{consumer_key}}',
      consumer_secret: '{{consumer_secret}}',
      access_token: '{{oauth_token}}',
      token_secret: '{{oauth_token_secret}}',
      signature_type: 'auth_header',
    });
  });

  test("Postman's own v2.0 example: object-form OAuth 1.0, a one-string legacy test script", () => {
    const { tests } = importPostman(json('postman-echo-oauth1.v2.json'));
    assertCreatable(tests);
    assert.equal(tests.length, 1);
    assert.equal(tests[0]!.name, 'Echo - OAuth 1');
    const [step] = requests(tests[0]!.steps);
    assert.equal(step!.url, 'https://echo.getpostman.com/oauth1');
    assert.deepEqual(step!.auth, {
      auth_type: 'oauth_1',
      consumer_key: 'RKCGzna7bv9YD57c',
      consumer_secret: 'D+EdQ-gs$-%@2Nu7',
      access_token: '',
      token_secret: '',
      signature_type: 'auth_header',
    });
    assert.equal(step!.headers!.Authorization, undefined, 'the stale signature header is dropped');
    assert.deepEqual(step!.assertions, [
      { source: 'response_status', property: '', comparison: 'equal', value: 200 },
      { source: 'response_json', property: 'status', comparison: 'equal', value: 'pass' },
    ]);
    assert.equal(step!.scripts, undefined);
  });

  test('split "request": one test per request, named by its folders', () => {
    const { tests } = importPostman(collection, { split: 'request' });
    assert.equal(tests.length, 10);
    assert.equal(tests[2]!.name, 'Bookshop API / Books / List books');
    assert.equal(tests[0]!.environments![0]!.initial_variables!.base_url, 'https://bookshop.example.com/api');
  });
});

describe('OpenAPI and Swagger', () => {
  test('OpenAPI 3 (YAML): a test per tag, examples and generated bodies, success status and required keys', () => {
    const result = importFile(fixture('petstore-openapi.yaml'), undefined);
    assert.equal(result.format, 'openapi');
    assertCreatable(result.tests);
    assert.deepEqual(
      result.tests.map((t) => [t.name, t.steps.length]),
      [
        ['Swagger Petstore - OpenAPI 3.0 / pet', 8],
        ['Swagger Petstore - OpenAPI 3.0 / store', 4],
        ['Swagger Petstore - OpenAPI 3.0 / user', 7],
      ],
    );
    assert.equal(result.tests[0]!.environments![0]!.initial_variables!.base_url, 'http://localhost/v3');
    assert.ok(result.notes.some((n) => n.includes('relative')));
    const [add, , byStatus, , getPet] = requests(result.tests[0]!.steps);
    assert.equal(add!.url, '{{base_url}}/pet');
    assert.deepEqual(JSON.parse(add!.body!), {
      id: 10,
      name: 'doggie',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['string'],
      tags: [{ id: 1, name: 'string' }],
      status: 'available',
    });
    assert.deepEqual(add!.assertions, [
      { source: 'response_status', comparison: 'equal', value: 200 },
      { source: 'response_json', property: '', comparison: 'has_key', value: 'name' },
      { source: 'response_json', property: '', comparison: 'has_key', value: 'photoUrls' },
    ]);
    assert.deepEqual(add!.headers!.Authorization, ['Bearer {{access_token}}']);
    assert.equal(byStatus!.url, '{{base_url}}/pet/findByStatus?status=available');
    assert.equal(getPet!.url, '{{base_url}}/pet/1');
    assert.deepEqual(getPet!.headers!.api_key, ['{{api_key}}']);
    assert.deepEqual(getPet!.headers!.Accept, ['application/json']);
    const login = requests(result.tests[2]!.steps).find((s) => s.url.includes('/user/login'));
    assert.equal(login!.url, '{{base_url}}/user/login', 'optional parameters without examples are left out');
  });

  test('Swagger 2.0: host, basePath and scheme; body and form parameters; split per operation', () => {
    const doc = json('petstore-swagger2.json');
    const byTag = importOpenApi(doc);
    assertCreatable(byTag.tests);
    assert.equal(
      byTag.tests[0]!.environments![0]!.initial_variables!.base_url,
      'https://petstore.swagger.io/v2',
    );
    const pet = requests(byTag.tests.find((t) => t.name.endsWith('/ pet'))!.steps);
    const upload = pet.find((s) => s.url.endsWith('/uploadImage'))!;
    assert.equal(upload.url, '{{base_url}}/pet/1/uploadImage');
    assert.match(upload.note!, /file: not sent/);
    const byStatus = pet.find((s) => s.url.includes('findByStatus'))!;
    assert.equal(byStatus.url, '{{base_url}}/pet/findByStatus?status=available');
    const addPet = pet.find((s) => s.method === 'POST' && s.url === '{{base_url}}/pet')!;
    assert.equal(JSON.parse(addPet.body!).name, 'doggie');
    assert.match(addPet.note!, /no success response documented/);
    const login = requests(byTag.tests.find((t) => t.name.endsWith('/ user'))!.steps).find((s) =>
      s.url.includes('login'),
    )!;
    assert.equal(login.url, '{{base_url}}/user/login?username=string&password=string');
    const perOperation = importOpenApi(doc, { split: 'operation', base_url: 'http://127.0.0.1:1' });
    assert.equal(perOperation.tests.length, 20);
    assert.equal(perOperation.tests[0]!.environments![0]!.initial_variables!.base_url, 'http://127.0.0.1:1');
  });

  test('reference cycles and external references do not hang or throw', () => {
    const doc = {
      openapi: '3.1.0',
      info: { title: 'Loop' },
      servers: [{ url: 'https://{region}.example.com', variables: { region: { default: 'eu' } } }],
      paths: {
        '/a': {
          post: {
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
            },
            responses: { '201': { content: { 'application/json': { schema: { $ref: 'other.yaml#/X' } } } } },
          },
        },
        '/b': { $ref: '#/paths/~1b' },
      },
      components: {
        schemas: {
          Node: {
            type: 'object',
            required: ['next'],
            properties: { next: { $ref: '#/components/schemas/Node' } },
          },
        },
      },
    };
    const result = importOpenApi(doc);
    assert.equal(result.tests[0]!.environments![0]!.initial_variables!.base_url, 'https://eu.example.com');
    assert.equal(result.tests[0]!.steps.length, 1);
    assert.ok(result.notes.some((n) => n.includes('other.yaml')));
  });
});

describe('cURL', () => {
  const expectReview = (step: ImportedRequestStep) => {
    assert.equal(step.method, 'POST');
    assert.equal(step.url, 'https://bookshop.example.com/api/books/42/reviews?notify=1');
    assert.deepEqual(JSON.parse(step.body!), { rating: 5, comment: "It's a classic — 50% off & worth it" });
    assert.deepEqual(step.headers!['content-type'], ['application/json']);
    assert.deepEqual(step.headers!.Cookie, ['session=4f9c2b71e8; theme=dark']);
    assert.deepEqual(step.headers!['sec-ch-ua'], [
      '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"',
    ]);
  };

  test('Chromium bash form', () => {
    const result = importFile(fixture('chromium-bash.curl'), undefined);
    assert.equal(result.format, 'curl');
    assertCreatable(result.tests);
    expectReview(requests(result.tests[0]!.steps)[0]!);
  });

  test('Chromium Windows cmd form decodes to the same request', () => {
    const result = importFile(fixture('chromium-cmd.curl'), undefined);
    assertCreatable(result.tests);
    expectReview(requests(result.tests[0]!.steps)[0]!);
  });

  test('options: -X, -u, -G, --data-urlencode, -F, several commands, unknown options noted', () => {
    const { tests } = importCurl(
      "curl -X PUT -u bob:pa:ss https://x.test/a --data-urlencode 'q=a b&c' --frobnicate\n" +
        'curl -G https://x.test/s -d a=1 -d b=2 && curl https://x.test/f -F name=v -F file=@/tmp/f.png --compressed',
    );
    const [put, get, form] = requests(tests[0]!.steps);
    assert.equal(put!.method, 'PUT');
    assert.deepEqual(put!.auth, { auth_type: 'basic', username: 'bob', password: 'pa:ss' });
    assert.equal(put!.body, 'q=a%20b%26c');
    assert.match(put!.note!, /option --frobnicate ignored/);
    assert.equal(get!.method, 'GET');
    assert.equal(get!.url, 'https://x.test/s?a=1&b=2');
    assert.equal(form!.method, 'POST');
    assert.deepEqual(form!.form, { name: 'v', file: '@/tmp/f.png' });
  });

  test('tokenizers: quotes, escapes and continuations', () => {
    assert.deepEqual(bashWords(`curl 'a b' "c\\"d" $'e\\nf\\x41' g\\ h \\\n -H x`), [
      'curl',
      'a b',
      'c"d',
      'e\nfA',
      'g h',
      '-H',
      'x',
    ]);
    assert.deepEqual(cmdWords('curl ^"a b^" ^\r\n  -d ^"^{^\\^"k^\\^":1^}^"'), [
      'curl',
      'a b',
      '-d',
      '{"k":1}',
    ]);
  });
});

describe('recorded traffic', () => {
  const exchanges: Exchange[] = [
    {
      method: 'POST',
      url: 'https://api.test/login',
      headers: [
        ['Host', 'api.test'],
        ['Content-Type', 'application/json'],
      ],
      body: '{"user":"alice"}',
      form: null,
      response: {
        status: 200,
        headers: [['X-Session-Id', 'sess-998877']],
        body: '{"token":"tok_abcdef123456","user":{"id":12345678,"name":"alice"},"short":"abc"}',
      },
    },
    {
      method: 'GET',
      url: 'https://api.test/users/12345678?session=sess-998877',
      headers: [['Authorization', 'Bearer tok_abcdef123456']],
      body: null,
      form: null,
      response: { status: 200, headers: [], body: '{"name":"alice"}' },
    },
    {
      method: 'GET',
      url: 'https://api.test/users/123456789',
      headers: [],
      body: null,
      form: null,
      response: null,
    },
  ];

  test('without chain: steps with the recorded status, transport headers dropped', () => {
    const { tests } = importExchanges(exchanges);
    assertCreatable(tests);
    const [login, user, missing] = requests(tests[0]!.steps);
    assert.equal(login!.headers!.Host, undefined);
    assert.deepEqual(login!.assertions, [{ source: 'response_status', comparison: 'equal', value: 200 }]);
    assert.equal(user!.variables, undefined);
    assert.equal(missing!.assertions![0]!.comparison, 'is_less_than');
  });

  test('with chain: answer values reused later become variables and templates', () => {
    const { tests, notes } = importExchanges(exchanges, { chain: true });
    const [login, user, other] = requests(tests[0]!.steps);
    assert.deepEqual(login!.variables, [
      { name: 'token', source: 'response_json', property: 'token' },
      { name: 'X-Session-Id', source: 'response_headers', property: 'X-Session-Id' },
      { name: 'id', source: 'response_json', property: 'user.id' },
    ]);
    assert.equal(user!.url, 'https://api.test/users/{{id}}?session={{X-Session-Id}}');
    assert.deepEqual(user!.headers!.Authorization, ['Bearer {{token}}']);
    assert.equal(other!.url, 'https://api.test/users/123456789', 'a longer number is not a match');
    assert.equal(notes.length, 3);
    assert.match(login!.note!, /extracts \{\{token\}\}/);
  });
});

describe('format recognition and hostile input', () => {
  test('sniffs every format; Vigil exports pass through', () => {
    assert.equal(importFile(json('bookshop.postman_collection.json'), undefined).format, 'postman');
    assert.equal(importFile(fixture('petstore-swagger2.json'), undefined).format, 'openapi');
    const har = readFileSync(new URL('../fixtures/har/chromium.har', import.meta.url), 'utf8');
    assert.equal(importFile(har, undefined).format, 'har');
    const exported = { vigil_export_version: 1, name: 'T', steps: [{ step_type: 'pause', duration: 1 }] };
    const r = importFile(exported, undefined);
    assert.equal(r.format, 'runscope');
    assert.deepEqual(r.tests, [exported]);
  });

  test('malformed files are validation errors naming the field, never crashes', () => {
    const inputs: [unknown, string][] = [
      ['{"info": ', '/content'],
      ['', '/content'],
      ['just text', '/content'],
      [42, '/content'],
      [null, '/content'],
      [{ info: { _postman_id: 'x' }, item: 'nope' }, '/content'],
      [{ openapi: '3.0.0', paths: null }, '/content'],
      [{ log: { entries: [null, 1, { request: 'x' }] } }, '/content'],
      ['a: &a [*a, *a]\nb: *a', '/content'],
      [`x: ${'[ '.repeat(5000)}`, '/content'],
    ];
    for (const [content, field] of inputs) {
      assert.throws(
        () => importFile(content, undefined),
        (error: unknown) => error instanceof AppError && error.field === field,
        JSON.stringify(content).slice(0, 80),
      );
    }
    assert.throws(
      () => importFile(json('bookshop.postman_collection.json'), 'postman', { split: 'tag' }),
      (error: unknown) => error instanceof AppError && error.field === '/options/split',
    );
    assert.throws(
      () => importFile('curl https://x.test', 'openapi'),
      (error: unknown) => error instanceof AppError && error.field === '/content',
    );
  });

  test('odd but parseable files import into valid tests', () => {
    const weird = [
      {
        info: { _postman_id: 'x', name: '' },
        item: [
          {
            name: 'r',
            request: {
              method: 'GET /x',
              url: { raw: 'x'.repeat(9000) },
              header: [{ key: 'bad name', value: 'v' }],
            },
          },
        ],
      },
      {
        info: { _postman_id: 'x' },
        item: [{ request: 'https://x.test' }],
        variable: [{ key: '1bad', value: 'v' }],
      },
      {
        openapi: '3.0.0',
        info: {},
        paths: { '/{a}': { get: { parameters: [{ $ref: '#/nowhere' }], responses: { '2XX': {} } } } },
      },
      {
        log: {
          entries: [
            { request: { method: 'G E T', url: 'nope', headers: [{ name: ':authority', value: 'x' }] } },
          ],
        },
      },
    ];
    for (const doc of weird) {
      const result = importFile(doc, undefined);
      const validate = compileBodySchema(ImportedTestSchema);
      // Either creatable, or the service refuses it with a 400 naming /content: never an exception here.
      for (const t of result.tests) if (!validate(t)) assert.ok(validate.errors?.length);
    }
  });
});
