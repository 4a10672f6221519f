import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COMPARISONS, SOURCES } from '../../src/domain/assertions.js';
import { describeApi } from '../helpers/api.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

/** Every step id of a test, embedded ones included, in the order served. */
const allIds = (steps: any[]): string[] =>
  steps.flatMap((s) => [s.id, ...(s.steps ?? []).map((e: any) => e.id)]);

/** A step list as ids: conditions as {id, steps}, which is also the shape of a reorder body. */
const shape = (steps: any[]) =>
  steps.map((s) => (s.step_type === 'condition' ? { id: s.id, steps: s.steps.map((e: any) => e.id) } : s.id));

const fullAssertions = [
  { source: 'response_status', property: '', comparison: 'equal_number', value: 201 },
  { source: 'response_json', property: 'data.items[0].id', comparison: 'contains', value: 'abc' },
  { source: 'response_time', property: '', comparison: 'is_less_than', value: 1000 },
];
const fullVariables = [
  { name: 'user_id', source: 'response_json', property: 'data.id' },
  { name: 'etag', source: 'response_headers', property: 'ETag' },
];

const fullRequest = {
  step_type: 'request',
  method: 'post',
  url: 'https://api.example.com/users/{{user_id}}?q=1',
  body: '{"name":"Ann"}',
  form: { single: 'one', many: ['two', 'three'] },
  headers: { Accept: 'application/json', 'X-Many': ['a', 'b'] },
  auth: { auth_type: 'basic', username: 'ann', password: 's3cret' },
  assertions: fullAssertions,
  variables: fullVariables,
  scripts: ['assert.equal(response.status, 201);'],
  before_scripts: ['variables.set("stamp", "1");'],
  skipped: true,
  note: 'creates a user',
};
/** `fullRequest` as served: method upper-cased, header values as arrays. */
const fullRequestServed = {
  ...fullRequest,
  method: 'POST',
  headers: { Accept: ['application/json'], 'X-Many': ['a', 'b'] },
};

const REQUEST_KEYS = [
  'assertions',
  'auth',
  'before_scripts',
  'body',
  'form',
  'headers',
  'id',
  'method',
  'note',
  'scripts',
  'skipped',
  'step_type',
  'url',
  'variables',
];

await describeApi('steps API', (get) => {
  const tests = () => `/buckets/${get().alice.bucketKey}/tests`;
  const stepsOf = (testId: string) => `${tests()}/${testId}/steps`;
  const stepUrl = (testId: string, stepId: string) => `${tests()}/${testId}/steps/${stepId}`;

  const newTest = (name = 'Steps') => get().data('POST', tests(), { name });
  const detail = (testId: string) => get().data('GET', `${tests()}/${testId}`);
  const revisionCount = async (testId: string) =>
    (await get().data('GET', `${tests()}/${testId}/revisions`)).test_revisions.length;

  /** POSTs one step and answers the full test and the added step (the last one). */
  const add = async (testId: string, step: unknown) => {
    const full = await get().data('POST', stepsOf(testId), step);
    return { test: full, step: full.steps.at(-1) };
  };

  /** PUTs a step, checks that the answer is that step, and answers the full test read afterwards. */
  const putStep = async (testId: string, stepId: string, body: unknown) => {
    const step = await get().data('PUT', stepUrl(testId, stepId), body);
    assert.equal(step.id, stepId);
    return detail(testId);
  };

  /** Asserts the error envelope and answers its `error`. */
  const expectError = (
    response: { statusCode: number; body: string; json(): any },
    status: number,
    code: string,
    field?: string,
  ) => {
    assert.equal(response.statusCode, status, response.body.slice(0, 500));
    const body = response.json();
    assert.equal(body.data, null);
    assert.deepEqual(body.meta, { status: 'error' });
    assert.equal(body.error.status, status);
    assert.equal(body.error.code, code);
    assert.equal(typeof body.error.message, 'string');
    assert.ok(body.error.message.length > 0);
    assert.equal(typeof body.error.more_info, 'string');
    if (field !== undefined) assert.equal(body.error.field, field, body.error.message);
    return body.error;
  };

  /** A POST of `step` to a fresh test must fail with 400 at `field` and leave the test as it was. */
  const rejectsStep = async (step: unknown, field: string) => {
    const created = await newTest('Rejects');
    const response = await get().call({ method: 'POST', url: stepsOf(created.id), body: step });
    expectError(response, 400, 'validation_failed', field);
    assert.deepEqual((await detail(created.id)).steps, created.steps);
  };

  /** Checks that the step round-trips in GET …/steps/<id> and in the test detail, and answers it. */
  const roundTrip = async (testId: string, step: any) => {
    const one = await get().data('GET', stepUrl(testId, step.id));
    assert.deepEqual(one, step);
    const inDetail = (await detail(testId)).steps.find((s: any) => s.id === step.id);
    assert.deepEqual(inDetail, step);
    return one;
  };

  // ---------------------------------------------------------------- POST: each step type, every field

  test('POST a request step with every field: 201, the full test, every field round-trips', async () => {
    const created = await newTest('Request');
    const response = await get().call({
      method: 'POST',
      url: stepsOf(created.id),
      body: { ...fullRequest, id: 'client-chosen' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.deepEqual(body.meta, { status: 'success' });
    assert.equal(body.error, null);
    const full = body.data;
    assert.equal(full.id, created.id);
    assert.equal(full.name, 'Request');
    assert.ok(Array.isArray(full.environments));
    assert.equal(typeof full.trigger_url, 'string');
    assert.equal(full.steps.length, 2, 'the step is added after the default one');
    assert.deepEqual(full.steps[0], created.steps[0]);
    const step = full.steps[1];
    assert.match(step.id, UUID);
    assert.notEqual(step.id, 'client-chosen');
    assert.deepEqual(Object.keys(step).sort(), REQUEST_KEYS);
    assert.deepEqual(step, { ...fullRequestServed, id: step.id });
    await roundTrip(created.id, step);
  });

  test('POST a pause step with every field', async () => {
    const created = await newTest('Pause');
    const { step } = await add(created.id, { step_type: 'pause', duration: 42, id: 'mine' });
    assert.match(step.id, UUID);
    assert.deepEqual(step, { id: step.id, step_type: 'pause', duration: 42 });
    await roundTrip(created.id, step);
  });

  test('POST a condition step with every field and every embeddable type inside', async () => {
    const created = await newTest('Condition');
    const target = await newTest('Subtest target');
    const embedded = [
      { ...fullRequest, id: 'e-1' },
      { step_type: 'pause', duration: 7, id: 'e-2' },
      {
        step_type: 'subtest',
        test_uuid: target.id,
        environment_uuid: target.default_environment_id,
        bucket_key: get().alice.bucketKey,
        assertions: fullAssertions,
        variables: fullVariables,
        params: [{ name: 'user', value: '{{user}}' }],
      },
      {
        step_type: 'partner-inspector',
        integration_id: '44444444-4444-4444-8444-444444444444',
        suite_id: 'suite-1',
        test_id: 'browser-7',
        is_custom_start_url: true,
        start_url: 'https://app.example.com/start',
        assertions: fullAssertions,
        variables: fullVariables,
      },
    ];
    const { step } = await add(created.id, {
      id: 'c-1',
      step_type: 'condition',
      left_value: '{{user}}',
      comparison: 'not_equal',
      right_value: 'u1',
      steps: embedded,
    });
    assert.match(step.id, UUID);
    assert.deepEqual(Object.keys(step).sort(), [
      'comparison',
      'id',
      'left_value',
      'right_value',
      'step_type',
      'steps',
    ]);
    assert.equal(step.left_value, '{{user}}');
    assert.equal(step.comparison, 'not_equal');
    assert.equal(step.right_value, 'u1');
    assert.equal(step.steps.length, 4);
    for (const inner of step.steps) assert.match(inner.id, UUID);
    const ids = allIds([step]);
    assert.equal(new Set(ids).size, ids.length, 'every step has an id of its own');
    const { id: _clientId, ...pause } = embedded[1]!;
    assert.deepEqual(step.steps[0], { ...fullRequestServed, id: step.steps[0].id });
    assert.deepEqual(step.steps[1], { ...pause, id: step.steps[1].id });
    assert.deepEqual(step.steps[2], { ...embedded[2], id: step.steps[2].id });
    assert.deepEqual(step.steps[3], { ...embedded[3], id: step.steps[3].id });
    await roundTrip(created.id, step);
    for (const inner of step.steps) {
      assert.deepEqual(await get().data('GET', stepUrl(created.id, inner.id)), inner);
    }
    // The embedded steps are inside the condition, not beside it.
    const served = await detail(created.id);
    assert.equal(served.steps.length, 2);
  });

  test('POST a subtest step with every field', async () => {
    const created = await newTest('Subtest');
    const target = await newTest('Target');
    const input = {
      step_type: 'subtest',
      test_uuid: target.id,
      environment_uuid: target.default_environment_id,
      bucket_key: get().alice.bucketKey,
      assertions: fullAssertions,
      variables: fullVariables,
      params: [
        { name: 'user', value: '{{user}}' },
        { name: 'plain.name-1', value: 'fixed' },
      ],
    };
    const { step } = await add(created.id, { ...input, id: target.id });
    assert.match(step.id, UUID);
    assert.notEqual(step.id, target.id);
    assert.deepEqual(step, { ...input, id: step.id });
    await roundTrip(created.id, step);
  });

  test('POST a partner-inspector step with every field', async () => {
    const created = await newTest('Partner');
    const input = {
      step_type: 'partner-inspector',
      integration_id: '55555555-5555-4555-8555-555555555555',
      suite_id: 'suite-42',
      test_id: 'login-flow',
      is_custom_start_url: true,
      start_url: 'https://staging.example.com/',
      assertions: fullAssertions,
      variables: fullVariables,
    };
    const { step } = await add(created.id, input);
    assert.match(step.id, UUID);
    assert.deepEqual(step, { ...input, id: step.id });
    await roundTrip(created.id, step);
  });

  test('POST ignores a client id even when it is the id of an existing step', async () => {
    const created = await newTest('Ids');
    const existing = created.steps[0];
    const full = await get().data('POST', stepsOf(created.id), { step_type: 'pause', id: existing.id });
    assert.equal(full.steps.length, 2);
    assert.deepEqual(full.steps[0], existing);
    assert.notEqual(full.steps[1].id, existing.id);
    assert.match(full.steps[1].id, UUID);
  });

  test('POST appends each step at the end, in the order added', async () => {
    const created = await newTest('Order of adds');
    await add(created.id, { step_type: 'pause', duration: 1 });
    await add(created.id, { step_type: 'pause', duration: 2 });
    const { test: full } = await add(created.id, { step_type: 'pause', duration: 3 });
    assert.deepEqual(
      full.steps.map((s: any) => s.duration ?? s.step_type),
      ['request', 1, 2, 3],
    );
    assert.deepEqual((await detail(created.id)).steps, full.steps);
  });

  // ---------------------------------------------------------------- defaults

  test('omitted request fields get their defaults', async () => {
    const created = await newTest('Defaults');
    const { step } = await add(created.id, { step_type: 'request' });
    assert.deepEqual(step, {
      id: step.id,
      step_type: 'request',
      method: 'GET',
      url: '',
      body: '',
      form: {},
      headers: {},
      auth: {},
      assertions: [],
      variables: [],
      scripts: [],
      before_scripts: [],
      skipped: false,
      note: '',
    });
    await roundTrip(created.id, step);
  });

  test('omitted fields of the other step types get their defaults', async () => {
    const created = await newTest('Defaults 2');
    const target = await newTest('Target 2');
    const { step: pause } = await add(created.id, { step_type: 'pause' });
    assert.deepEqual(pause, { id: pause.id, step_type: 'pause', duration: 1 });
    const { step: condition } = await add(created.id, { step_type: 'condition' });
    assert.deepEqual(condition, {
      id: condition.id,
      step_type: 'condition',
      left_value: '',
      comparison: 'equal',
      right_value: '',
      steps: [],
    });
    const { step: subtest } = await add(created.id, { step_type: 'subtest', test_uuid: target.id });
    assert.deepEqual(subtest, {
      id: subtest.id,
      step_type: 'subtest',
      test_uuid: target.id,
      environment_uuid: '',
      bucket_key: '',
      assertions: [],
      variables: [],
      params: [],
    });
    const { step: partner } = await add(created.id, { step_type: 'partner-inspector' });
    assert.deepEqual(partner, {
      id: partner.id,
      step_type: 'partner-inspector',
      integration_id: '',
      suite_id: '',
      test_id: '',
      is_custom_start_url: false,
      start_url: '',
      assertions: [],
      variables: [],
    });
    for (const step of [pause, condition, subtest, partner]) await roundTrip(created.id, step);
  });

  test('assertion property and value and variable property default to empty strings', async () => {
    const created = await newTest('Assertion defaults');
    const { step } = await add(created.id, {
      step_type: 'request',
      assertions: [{ source: 'response_text', comparison: 'not_empty' }],
      variables: [{ name: 'all', source: 'response_text' }],
    });
    assert.deepEqual(step.assertions, [
      { source: 'response_text', property: '', comparison: 'not_empty', value: '' },
    ]);
    assert.deepEqual(step.variables, [{ name: 'all', source: 'response_text', property: '' }]);
    await roundTrip(created.id, step);
  });

  test('header values given as strings come back as one-element arrays; the method is upper-cased', async () => {
    const created = await newTest('Headers');
    const { step } = await add(created.id, {
      step_type: 'request',
      method: 'dElEtE',
      headers: { 'X-One': 'v', 'X-Empty': '', 'X-List': ['1', '2', '3'], 'X-None': [] },
    });
    assert.equal(step.method, 'DELETE');
    assert.deepEqual(step.headers, {
      'X-One': ['v'],
      'X-Empty': [''],
      'X-List': ['1', '2', '3'],
      'X-None': [],
    });
    await roundTrip(created.id, step);
  });

  test('properties that do not belong to the step type are dropped', async () => {
    const created = await newTest('Extra');
    const { step } = await add(created.id, {
      step_type: 'pause',
      duration: 2,
      url: 'https://x',
      steps: [],
      surprise: true,
    });
    assert.deepEqual(step, { id: step.id, step_type: 'pause', duration: 2 });
    const { step: request } = await add(created.id, { step_type: 'request', duration: 4, left_value: 'x' });
    assert.deepEqual(Object.keys(request).sort(), REQUEST_KEYS);
  });

  // ---------------------------------------------------------------- auth

  test('every auth type round-trips with its own properties', async () => {
    const created = await newTest('Auth');
    const cases: [unknown, unknown][] = [
      [{}, {}],
      [
        { auth_type: 'basic', username: 'u', password: 'p' },
        { auth_type: 'basic', username: 'u', password: 'p' },
      ],
      [
        { auth_type: 'basic', username: 'only' },
        { auth_type: 'basic', username: 'only', password: '' },
      ],
      [{ auth_type: 'client_certificate' }, { auth_type: 'client_certificate' }],
      [{ auth_type: 'client_certificate', username: 'dropped' }, { auth_type: 'client_certificate' }],
      [
        { auth_type: 'oauth_1' },
        {
          auth_type: 'oauth_1',
          access_token: '',
          consumer_secret: '',
          consumer_key: '',
          token_secret: '',
          signature_type: 'auth_header',
        },
      ],
    ];
    for (const signature_type of ['auth_header', 'body', 'query']) {
      const oauth = {
        auth_type: 'oauth_1',
        access_token: `at-${signature_type}`,
        consumer_secret: 'cs',
        consumer_key: 'ck',
        token_secret: 'ts',
        signature_type,
      };
      cases.push([{ ...oauth, username: 'not oauth' }, oauth]);
    }
    for (const [input, expected] of cases) {
      const { step } = await add(created.id, { step_type: 'request', auth: input });
      assert.deepEqual(step.auth, expected, JSON.stringify(input));
      assert.deepEqual((await roundTrip(created.id, step)).auth, expected);
    }
  });

  // ---------------------------------------------------------------- sources and comparisons

  test('every one of the 7 sources is accepted in assertions and variables', async () => {
    assert.equal(SOURCES.length, 7);
    const created = await newTest('Sources');
    const sources = [
      'response_status',
      'response_headers',
      'response_json',
      'response_xml',
      'response_text',
      'response_time',
      'response_size',
    ];
    assert.deepEqual([...SOURCES].sort(), [...sources].sort());
    const assertions = sources.map((source, i) => ({
      source,
      property: `p${i}`,
      comparison: 'not_empty',
      value: i,
    }));
    const variables = sources.map((source, i) => ({ name: `v${i}`, source, property: `p${i}` }));
    const { step } = await add(created.id, { step_type: 'request', assertions, variables });
    assert.deepEqual(step.assertions, assertions);
    assert.deepEqual(step.variables, variables);
    await roundTrip(created.id, step);
  });

  test('every one of the 16 comparisons is accepted in assertions and in conditions', async () => {
    const comparisons = [
      'equal',
      'not_equal',
      'empty',
      'not_empty',
      'contains',
      'does_not_contain',
      'is_a_number',
      'equal_number',
      'is_less_than',
      'is_less_than_or_equal',
      'is_greater_than',
      'is_greater_than_or_equal',
      'has_key',
      'has_value',
      'is_null',
      'is_equal',
    ];
    assert.equal(comparisons.length, 16);
    assert.deepEqual([...COMPARISONS].sort(), [...comparisons].sort());
    const created = await newTest('Comparisons');
    const assertions = comparisons.map((comparison, i) => ({
      source: 'response_json',
      property: `a.b[${i}]`,
      comparison,
      value: i % 2 ? i : `s${i}`,
    }));
    const { step } = await add(created.id, { step_type: 'request', assertions });
    assert.deepEqual(step.assertions, assertions);
    await roundTrip(created.id, step);
    for (const comparison of comparisons) {
      const { step: condition } = await add(created.id, {
        step_type: 'condition',
        left_value: '{{x}}',
        comparison,
        right_value: '1',
      });
      assert.equal(condition.comparison, comparison);
      assert.equal((await roundTrip(created.id, condition)).comparison, comparison);
    }
  });

  test('equality by either name is accepted and answered as given; the default step carries is_equal', async () => {
    const created = await newTest('Equality');
    // Spec 2.2: a new test's default request step asserts response_status is_equal 200.
    assert.deepEqual(created.steps[0].assertions, [
      { source: 'response_status', property: '', comparison: 'is_equal', value: 200 },
    ]);
    const assertions = [
      { source: 'response_status', property: '', comparison: 'equal', value: 200 },
      { source: 'response_json', property: 'name', comparison: 'is_equal', value: 'Ada' },
    ];
    const { step } = await add(created.id, { step_type: 'request', url: 'https://x.test/', assertions });
    assert.deepEqual(step.assertions, assertions, 'neither name is rewritten into the other');
    assert.deepEqual((await roundTrip(created.id, step)).assertions, assertions);
    for (const comparison of ['equal', 'is_equal']) {
      const { step: condition } = await add(created.id, {
        step_type: 'condition',
        left_value: '1',
        comparison,
        right_value: '1',
      });
      assert.equal(condition.comparison, comparison);
    }
    const refused = await get().call({
      method: 'POST',
      url: stepsOf(created.id),
      body: {
        step_type: 'request',
        assertions: [{ source: 'response_status', comparison: 'equals', value: 200 }],
      },
    });
    expectError(refused, 400, 'validation_failed', '/assertions/0/comparison');
    // The bucket's test-specific environments are counted: this test gives its one back.
    const deleted = await get().call({ method: 'DELETE', url: `${tests()}/${created.id}` });
    assert.equal(deleted.statusCode, 204);
  });

  // ---------------------------------------------------------------- POST validation

  test('an unknown or missing step_type is 400 at /step_type', async () => {
    await rejectsStep({ step_type: 'teleport' }, '/step_type');
    await rejectsStep({ step_type: 5 }, '/step_type');
    await rejectsStep({ duration: 5 }, '/step_type');
  });

  test('an unknown auth_type or signature_type is 400 at that field', async () => {
    await rejectsStep({ step_type: 'request', auth: { auth_type: 'digest' } }, '/auth/auth_type');
    await rejectsStep(
      { step_type: 'request', auth: { auth_type: 'oauth_1', signature_type: 'header' } },
      '/auth/signature_type',
    );
    await rejectsStep(
      { step_type: 'condition', steps: [{ step_type: 'request', auth: { auth_type: 'bearer' } }] },
      '/steps/0/auth/auth_type',
    );
  });

  test('an unknown assertion source or comparison is 400 naming the assertion', async () => {
    await rejectsStep(
      { step_type: 'request', assertions: [{ source: 'response_cookie', comparison: 'equal' }] },
      '/assertions/0/source',
    );
    await rejectsStep(
      {
        step_type: 'request',
        assertions: [
          { source: 'response_status', comparison: 'equal', value: 200 },
          { source: 'response_json', property: 'a', comparison: 'approximately', value: 1 },
        ],
      },
      '/assertions/1/comparison',
    );
    await rejectsStep(
      { step_type: 'subtest', test_uuid: NO_SUCH_ID, variables: [{ name: 'x', source: 'request_body' }] },
      '/variables/0/source',
    );
    await rejectsStep(
      { step_type: 'partner-inspector', assertions: [{ source: 'response_json', comparison: 'like' }] },
      '/assertions/0/comparison',
    );
    await rejectsStep({ step_type: 'condition', comparison: 'sort_of' }, '/comparison');
    await rejectsStep(
      { step_type: 'request', assertions: [{ source: 'response_json', comparison: 'equal', value: true }] },
      '/assertions/0/value',
    );
  });

  test('a condition inside a condition is 400 at the embedded step_type', async () => {
    await rejectsStep(
      {
        step_type: 'condition',
        steps: [{ step_type: 'pause' }, { step_type: 'condition', steps: [] }],
      },
      '/steps/1/step_type',
    );
  });

  test('a pause duration outside 1..180 seconds or not an integer is 400 at /duration', async () => {
    for (const duration of [0, -1, 181, 1.5, '5']) {
      await rejectsStep({ step_type: 'pause', duration }, '/duration');
    }
    await rejectsStep(
      { step_type: 'condition', steps: [{ step_type: 'pause', duration: 500 }] },
      '/steps/0/duration',
    );
    const created = await newTest('Pause bounds');
    for (const duration of [1, 180]) {
      const { step } = await add(created.id, { step_type: 'pause', duration });
      assert.equal(step.duration, duration);
    }
  });

  test('subtest ids that are not UUIDs are 400 at that field', async () => {
    await rejectsStep({ step_type: 'subtest', test_uuid: 'not-a-uuid' }, '/test_uuid');
    await rejectsStep({ step_type: 'subtest' }, '/test_uuid');
    await rejectsStep(
      { step_type: 'subtest', test_uuid: NO_SUCH_ID, environment_uuid: 'staging' },
      '/environment_uuid',
    );
    await rejectsStep({ step_type: 'partner-inspector', integration_id: 'acme' }, '/integration_id');
  });

  test('values of the wrong type are 400 naming the field', async () => {
    await rejectsStep({ step_type: 'request', url: 5 }, '/url');
    await rejectsStep({ step_type: 'request', body: { a: 1 } }, '/body');
    await rejectsStep({ step_type: 'request', skipped: 'yes' }, '/skipped');
    await rejectsStep({ step_type: 'request', note: 1 }, '/note');
    await rejectsStep({ step_type: 'request', scripts: 'log(1)' }, '/scripts');
    await rejectsStep({ step_type: 'request', before_scripts: [1] }, '/before_scripts/0');
    await rejectsStep({ step_type: 'request', headers: { 'X-A': 5 } }, '/headers/X-A');
    await rejectsStep({ step_type: 'request', method: 'GE T' }, '/method');
    await rejectsStep({ step_type: 'request', auth: { auth_type: 'basic', username: 1 } }, '/auth/username');
    await rejectsStep(
      { step_type: 'partner-inspector', is_custom_start_url: 'true' },
      '/is_custom_start_url',
    );
    await rejectsStep({ step_type: 'condition', left_value: 1 }, '/left_value');
    await rejectsStep({ step_type: 'condition', steps: {} }, '/steps');
    await rejectsStep({ step_type: 'condition', steps: [{ step_type: 'request', url: 5 }] }, '/steps/0/url');
    await rejectsStep(
      { step_type: 'subtest', test_uuid: NO_SUCH_ID, params: [{ name: 'ok', value: 1 }] },
      '/params/0/value',
    );
  });

  test('a header name outside the HTTP token syntax is 400 at /headers, whatever its value, and nothing is stored', async () => {
    const cases: [unknown, string][] = [
      [{ step_type: 'request', headers: { 'Bad Header': 'x' } }, '/headers'],
      [{ step_type: 'request', headers: { 'Bad Header': 5 } }, '/headers'],
      [{ step_type: 'request', headers: { 'X:Y': { nested: true } } }, '/headers'],
      [
        { step_type: 'condition', steps: [{ step_type: 'request', headers: { 'Bad Header': 5 } }] },
        '/steps/0/headers',
      ],
      [{ step_type: 'request', form: { '': 'empty name' } }, '/form'],
    ];
    for (const [step, prefix] of cases) {
      const created = await newTest('Header names');
      const response = await get().call({ method: 'POST', url: stepsOf(created.id), body: step });
      const error = expectError(response, 400, 'validation_failed');
      assert.ok(String(error.field).startsWith(prefix), `${error.field} lies under ${prefix}`);
      const after = await get().call({ method: 'GET', url: `${tests()}/${created.id}` });
      assert.equal(after.statusCode, 200, 'the test stays readable');
      assert.deepEqual(after.json().data.steps, created.steps);
    }
  });

  test('a body that is not one step object is 400', async () => {
    const created = await newTest('Not an object');
    for (const body of [[{ step_type: 'pause' }], 'pause', 5]) {
      const response = await get().call({
        method: 'POST',
        url: stepsOf(created.id),
        body: JSON.stringify(body),
      });
      expectError(response, 400, 'validation_failed');
    }
    const broken = await get().call({ method: 'POST', url: stepsOf(created.id), body: '{"step_type":' });
    expectError(broken, 400, 'invalid_json');
    assert.deepEqual((await detail(created.id)).steps, created.steps);
  });

  test('a condition with more embedded steps than the limit is refused', async () => {
    const steps = Array.from({ length: 101 }, () => ({ step_type: 'pause' }));
    await rejectsStep({ step_type: 'condition', steps }, '/steps');
  });

  test('a test holds at most 200 top-level steps: one more is 422 and nothing is written', async () => {
    const created = await newTest('Full');
    const filled = await get().data('PUT', `${tests()}/${created.id}`, {
      steps: Array.from({ length: 200 }, () => ({ step_type: 'pause' })),
    });
    assert.equal(filled.steps.length, 200);
    const revisionsBefore = await revisionCount(created.id);
    const response = await get().call({
      method: 'POST',
      url: stepsOf(created.id),
      body: { step_type: 'pause' },
    });
    expectError(response, 422, 'limit_reached');
    assert.deepEqual((await detail(created.id)).steps, filled.steps);
    assert.equal(await revisionCount(created.id), revisionsBefore);
  });

  // ---------------------------------------------------------------- reorder

  /** A test with steps: r0 (default request), p (pause), c {e1 (request), e2 (pause)}, s (subtest), c2 {}. */
  const arranged = async () => {
    const created = await newTest('Reorder');
    await add(created.id, { step_type: 'pause', duration: 9 });
    await add(created.id, {
      step_type: 'condition',
      left_value: '{{a}}',
      right_value: 'b',
      steps: [
        { step_type: 'request', url: 'https://example.com/e1' },
        { step_type: 'pause', duration: 2 },
      ],
    });
    await add(created.id, { step_type: 'subtest', test_uuid: created.id });
    const { test: full } = await add(created.id, { step_type: 'condition', left_value: 'c2' });
    const [r0, p, c, s, c2] = full.steps;
    const [e1, e2] = c.steps;
    return { id: full.id as string, steps: full.steps as any[], r0, p, c, e1, e2, s, c2 };
  };

  /** Every step of a list, by id, with embedded steps stripped from conditions. */
  const contents = (steps: any[]) => {
    const byId = new Map<string, unknown>();
    for (const step of steps) {
      const { steps: inner, ...rest } = step;
      byId.set(step.id, rest);
      for (const e of inner ?? []) byId.set(e.id, e);
    }
    return byId;
  };

  test('PUT steps reorders top-level steps and answers 200 with the full test', async () => {
    const t = await arranged();
    const order = [
      { id: t.c2.id, steps: [] },
      t.s.id,
      { id: t.c.id, steps: [t.e1.id, t.e2.id] },
      t.p.id,
      t.r0.id,
    ];
    const response = await get().call({ method: 'PUT', url: stepsOf(t.id), body: order });
    assert.equal(response.statusCode, 200, response.body);
    const full = response.json().data;
    assert.equal(full.id, t.id);
    assert.ok(Array.isArray(full.environments));
    assert.deepEqual(shape(full.steps), order);
    assert.deepEqual(contents(full.steps), contents(t.steps), 'the steps themselves are unchanged');
    const served = await detail(t.id);
    assert.deepEqual(served.steps, full.steps);
  });

  test('PUT steps reorders the embedded steps of a condition', async () => {
    const t = await arranged();
    const order = [
      t.r0.id,
      t.p.id,
      { id: t.c.id, steps: [t.e2.id, t.e1.id] },
      t.s.id,
      { id: t.c2.id, steps: [] },
    ];
    const full = await get().data('PUT', stepsOf(t.id), order);
    assert.deepEqual(shape(full.steps), order);
    assert.deepEqual(full.steps[2].steps, [t.e2, t.e1]);
    assert.deepEqual(shape((await detail(t.id)).steps), order);
  });

  test('an empty condition may be given by its plain id', async () => {
    const t = await arranged();
    const order = [t.c2.id, t.r0.id, t.p.id, { id: t.c.id, steps: [t.e1.id, t.e2.id] }, t.s.id];
    const full = await get().data('PUT', stepsOf(t.id), order);
    assert.deepEqual(shape(full.steps), [{ id: t.c2.id, steps: [] }, ...order.slice(1)]);
  });

  test('an embedded step moves out of its condition, and a top-level step moves into one', async () => {
    const t = await arranged();
    const out = [
      t.e1.id,
      t.r0.id,
      t.p.id,
      { id: t.c.id, steps: [t.e2.id] },
      t.s.id,
      { id: t.c2.id, steps: [] },
    ];
    const first = await get().data('PUT', stepsOf(t.id), out);
    assert.deepEqual(shape(first.steps), out);
    assert.deepEqual(first.steps[0], t.e1);
    assert.deepEqual(shape((await detail(t.id)).steps), out);

    const into = [
      t.e1.id,
      { id: t.c.id, steps: [t.r0.id, t.e2.id] },
      { id: t.c2.id, steps: [t.s.id, t.p.id] },
    ];
    const second = await get().data('PUT', stepsOf(t.id), into);
    assert.deepEqual(shape(second.steps), into);
    assert.deepEqual(second.steps[1].steps[0], t.r0);
    assert.deepEqual(second.steps[2].steps, [t.s, t.p]);
    assert.deepEqual(contents(second.steps), contents(t.steps));
    const served = await detail(t.id);
    assert.deepEqual(served.steps, second.steps);
    // A moved step is still addressable by its id.
    assert.deepEqual(await get().data('GET', stepUrl(t.id, t.r0.id)), t.r0);
  });

  test('a condition given as a plain id while it has embedded steps lets them go to the top level', async () => {
    const t = await arranged();
    const order = [t.r0.id, t.p.id, t.c.id, t.e1.id, t.e2.id, t.s.id, t.c2.id];
    const full = await get().data('PUT', stepsOf(t.id), order);
    assert.deepEqual(shape(full.steps), [
      t.r0.id,
      t.p.id,
      { id: t.c.id, steps: [] },
      t.e1.id,
      t.e2.id,
      t.s.id,
      { id: t.c2.id, steps: [] },
    ]);
  });

  /** A reorder that must fail with 400 and leave the order and the history as they were. */
  const rejectsOrder = async (
    t: Awaited<ReturnType<typeof arranged>>,
    order: unknown,
    expect: { field?: string; mentions?: string[]; code?: string },
  ) => {
    const revisionsBefore = await revisionCount(t.id);
    const response = await get().call({ method: 'PUT', url: stepsOf(t.id), body: order });
    const error = expectError(response, 400, expect.code ?? 'validation_failed', expect.field);
    for (const id of expect.mentions ?? [])
      assert.ok(error.message.includes(id), `${error.message} names ${id}`);
    const served = await detail(t.id);
    assert.deepEqual(served.steps, t.steps, 'the order is unchanged');
    assert.equal(await revisionCount(t.id), revisionsBefore, 'no revision is written');
    return error;
  };

  test('an omitted step id is 400 naming it, and the order is unchanged', async () => {
    const t = await arranged();
    const error = await rejectsOrder(
      t,
      [t.r0.id, { id: t.c.id, steps: [t.e1.id, t.e2.id] }, t.s.id, { id: t.c2.id, steps: [] }],
      { mentions: [t.p.id] },
    );
    assert.match(error.message, /missing/);
    await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: t.c.id, steps: [t.e1.id] }, t.s.id, { id: t.c2.id, steps: [] }],
      {
        mentions: [t.e2.id],
      },
    );
    await rejectsOrder(t, [t.s.id, t.p.id, t.r0.id, { id: t.c2.id, steps: [] }], {
      mentions: [t.c.id, t.e1.id, t.e2.id],
    });
    await rejectsOrder(t, [], { mentions: [t.r0.id, t.c2.id] });
  });

  test('an unknown step id is 400 naming it, and the order is unchanged', async () => {
    const t = await arranged();
    const other = await newTest('Other test');
    const foreignStep = other.steps[0].id;
    const all = [
      t.r0.id,
      t.p.id,
      { id: t.c.id, steps: [t.e1.id, t.e2.id] },
      t.s.id,
      { id: t.c2.id, steps: [] },
    ];
    const error = await rejectsOrder(t, [...all, NO_SUCH_ID], { mentions: [NO_SUCH_ID] });
    assert.match(error.message, /unknown/);
    await rejectsOrder(t, [...all, foreignStep], { mentions: [foreignStep] });
    await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: t.c.id, steps: [t.e1.id, t.e2.id, 'nope'] }, t.s.id, t.c2.id],
      {
        mentions: ['nope'],
      },
    );
    await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: 'ghost', steps: [t.e1.id, t.e2.id] }, t.c.id, t.s.id, t.c2.id],
      { mentions: ['ghost'] },
    );
  });

  test('a duplicate step id is 400 naming it, and the order is unchanged', async () => {
    const t = await arranged();
    const all = [
      t.r0.id,
      t.p.id,
      { id: t.c.id, steps: [t.e1.id, t.e2.id] },
      t.s.id,
      { id: t.c2.id, steps: [] },
    ];
    const error = await rejectsOrder(t, [...all, t.p.id], { mentions: [t.p.id] });
    assert.match(error.message, /duplicate/);
    await rejectsOrder(t, [t.e1.id, ...all], { mentions: [t.e1.id] });
    await rejectsOrder(
      t,
      [
        t.r0.id,
        t.p.id,
        { id: t.c.id, steps: [t.e1.id, t.e2.id, t.e1.id] },
        t.s.id,
        { id: t.c2.id, steps: [] },
      ],
      { mentions: [t.e1.id] },
    );
  });

  test('embedded steps given for a step that is not a condition are 400 at that entry', async () => {
    const t = await arranged();
    const error = await rejectsOrder(
      t,
      [t.r0.id, { id: t.p.id, steps: [] }, { id: t.c.id, steps: [t.e1.id, t.e2.id] }, t.s.id, t.c2.id],
      { field: '/1', mentions: [t.p.id] },
    );
    assert.match(error.message, /not a condition/);
    await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: t.c.id, steps: [t.e2.id] }, { id: t.e1.id, steps: [] }, t.s.id, t.c2.id],
      { field: '/3', mentions: [t.e1.id] },
    );
  });

  test('a condition inside a condition is 400 at its position', async () => {
    const t = await arranged();
    const error = await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: t.c.id, steps: [t.e1.id, t.c2.id, t.e2.id] }, t.s.id],
      { field: '/2/steps/1', mentions: [t.c2.id] },
    );
    assert.match(error.message, /nest/);
    await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: t.c.id, steps: [t.e1.id, t.e2.id, t.c.id] }, t.s.id, t.c2.id],
      {
        field: '/2/steps/2',
      },
    );
  });

  test('a condition written as {id, steps} inside a condition is 400 at that inner entry', async () => {
    const t = await arranged();
    await rejectsOrder(
      t,
      [t.r0.id, t.p.id, { id: t.c.id, steps: [t.e1.id, { id: t.c2.id, steps: [] }, t.e2.id] }, t.s.id],
      { field: '/2/steps/1' },
    );
  });

  test('a reorder cannot take a test past 200 top-level steps by moving embedded steps out', async () => {
    const created = await newTest('Full reorder');
    const filled = await get().data('PUT', `${tests()}/${created.id}`, {
      steps: [
        ...Array.from({ length: 199 }, () => ({ step_type: 'pause' })),
        { step_type: 'condition', steps: [{ step_type: 'pause' }, { step_type: 'pause' }] },
      ],
    });
    assert.equal(filled.steps.length, 200);
    const condition = filled.steps[199];
    const order = [
      ...shape(filled.steps.slice(0, 199)),
      condition.id,
      ...condition.steps.map((s: any) => s.id),
    ];
    const response = await get().call({ method: 'PUT', url: stepsOf(created.id), body: order });
    expectError(response, 422, 'limit_reached');
    assert.deepEqual((await detail(created.id)).steps, filled.steps);
  });

  test('a reorder body that is not an array of ids and {id, steps} objects is 400', async () => {
    const t = await arranged();
    await rejectsOrder(t, { order: [t.r0.id] }, {});
    await rejectsOrder(t, [t.r0.id, 5], {});
    await rejectsOrder(t, [t.r0.id, { id: t.c.id }], {});
    await rejectsOrder(t, [t.r0.id, { id: t.c.id, steps: 'e1' }], {});
    await rejectsOrder(t, '[', { code: 'invalid_json' });
  });

  // ---------------------------------------------------------------- PUT one step

  test('PUT a step changes only the properties given and answers 200 with the step', async () => {
    const created = await newTest('Partial');
    const { step } = await add(created.id, fullRequest);
    const response = await get().call({
      method: 'PUT',
      url: stepUrl(created.id, step.id),
      body: { url: 'https://api.example.com/v2', note: 'changed' },
    });
    assert.equal(response.statusCode, 200, response.body);
    const expected = { ...step, url: 'https://api.example.com/v2', note: 'changed' };
    assert.deepEqual(response.json().data, expected);
    const full = await detail(created.id);
    assert.deepEqual(full.steps[1], expected);
    assert.deepEqual(full.steps[0], created.steps[0]);
    assert.deepEqual(await roundTrip(created.id, expected), expected);
  });

  test('PUT a step normalizes what it changes, like POST', async () => {
    const created = await newTest('Partial normalize');
    const { step } = await add(created.id, fullRequest);
    const full = await putStep(created.id, step.id, {
      method: 'put',
      headers: { 'X-Only': 'one' },
      auth: { auth_type: 'oauth_1', consumer_key: 'k', signature_type: 'query', username: 'x' },
      assertions: [{ source: 'response_size', comparison: 'is_greater_than', value: 10 }],
    });
    const updated = full.steps[1];
    assert.equal(updated.method, 'PUT');
    assert.deepEqual(updated.headers, { 'X-Only': ['one'] });
    assert.deepEqual(updated.auth, {
      auth_type: 'oauth_1',
      access_token: '',
      consumer_secret: '',
      consumer_key: 'k',
      token_secret: '',
      signature_type: 'query',
    });
    assert.deepEqual(updated.assertions, [
      { source: 'response_size', property: '', comparison: 'is_greater_than', value: 10 },
    ]);
    assert.equal(updated.body, fullRequest.body);
    assert.deepEqual(updated.variables, fullRequest.variables);
    const cleared = await putStep(created.id, step.id, { auth: {} });
    assert.deepEqual(cleared.steps[1].auth, {});
    await roundTrip(created.id, cleared.steps[1]);
  });

  test('PUT a step keeps its id and position; a client id and the same step_type are accepted', async () => {
    const created = await newTest('Keep id');
    await add(created.id, { step_type: 'pause', duration: 3 });
    const { test: before } = await add(created.id, { step_type: 'pause', duration: 4 });
    const middle = before.steps[1];
    const full = await putStep(created.id, middle.id, {
      id: NO_SUCH_ID,
      step_type: 'pause',
      duration: 120,
    });
    assert.deepEqual(
      full.steps.map((s: any) => s.id),
      before.steps.map((s: any) => s.id),
    );
    assert.deepEqual(full.steps[1], { id: middle.id, step_type: 'pause', duration: 120 });
    assert.deepEqual(full.steps[2], before.steps[2]);
  });

  test('PUT every other step type partially', async () => {
    const created = await newTest('Partial types');
    const target = await newTest('Partial target');
    const { step: subtest } = await add(created.id, {
      step_type: 'subtest',
      test_uuid: target.id,
      params: [{ name: 'a', value: '1' }],
    });
    const s = (
      await putStep(created.id, subtest.id, {
        environment_uuid: target.default_environment_id,
      })
    ).steps[1];
    assert.deepEqual(s, { ...subtest, environment_uuid: target.default_environment_id });
    const { step: partner } = await add(created.id, {
      step_type: 'partner-inspector',
      suite_id: 'one',
      start_url: 'https://a',
    });
    const p = (await putStep(created.id, partner.id, { is_custom_start_url: true })).steps[2];
    assert.deepEqual(p, { ...partner, is_custom_start_url: true });
    const { step: condition } = await add(created.id, {
      step_type: 'condition',
      left_value: 'l',
      steps: [{ step_type: 'pause' }],
    });
    const c = (await putStep(created.id, condition.id, { right_value: 'r', comparison: 'contains' }))
      .steps[3];
    assert.deepEqual(c, { ...condition, right_value: 'r', comparison: 'contains' });
  });

  test('PUT a step with another step_type is 400 at /step_type and changes nothing', async () => {
    const created = await newTest('Type change');
    const { test: before, step } = await add(created.id, { step_type: 'pause', duration: 5 });
    for (const step_type of ['request', 'condition', 'teleport']) {
      const response = await get().call({
        method: 'PUT',
        url: stepUrl(created.id, step.id),
        body: { step_type, duration: 6 },
      });
      expectError(response, 400, 'validation_failed', '/step_type');
    }
    assert.deepEqual((await detail(created.id)).steps, before.steps);
  });

  test('PUT a step whose merged value is invalid is 400 naming the field and changes nothing', async () => {
    const created = await newTest('Invalid merge');
    const target = await newTest('Invalid target');
    await add(created.id, { step_type: 'pause', duration: 5 });
    await add(created.id, { step_type: 'subtest', test_uuid: target.id });
    const { test: before } = await add(created.id, {
      step_type: 'condition',
      steps: [{ step_type: 'request' }],
    });
    const [request, pause, subtest, condition] = before.steps;
    const cases: [string, unknown, string][] = [
      [request.id, { url: 5 }, '/url'],
      [request.id, { method: 'NOT A METHOD' }, '/method'],
      [request.id, { auth: { auth_type: 'kerberos' } }, '/auth/auth_type'],
      [request.id, { auth: { auth_type: 'oauth_1', signature_type: 'cookie' } }, '/auth/signature_type'],
      [
        request.id,
        { assertions: [{ source: 'response_body', comparison: 'equal' }] },
        '/assertions/0/source',
      ],
      [
        request.id,
        { assertions: [{ source: 'response_json', comparison: 'nearly', value: 1 }] },
        '/assertions/0/comparison',
      ],
      [pause.id, { duration: 0 }, '/duration'],
      [pause.id, { duration: 181 }, '/duration'],
      [subtest.id, { test_uuid: 'abc' }, '/test_uuid'],
      [condition.id, { steps: [{ step_type: 'condition' }] }, '/steps/0/step_type'],
      [condition.id, { comparison: 'kind_of' }, '/comparison'],
      [condition.steps[0].id, { skipped: 'no' }, '/skipped'],
    ];
    for (const [stepId, patch, field] of cases) {
      const response = await get().call({ method: 'PUT', url: stepUrl(created.id, stepId), body: patch });
      expectError(response, 400, 'validation_failed', field);
    }
    assert.deepEqual((await detail(created.id)).steps, before.steps);
  });

  test('PUT a step with a body that is not an object is 400', async () => {
    const created = await newTest('Patch shape');
    const stepId = created.steps[0].id;
    for (const body of ['[]', '"url"', '5', 'null']) {
      const response = await get().call({ method: 'PUT', url: stepUrl(created.id, stepId), body });
      expectError(response, 400, 'validation_failed');
    }
    assert.deepEqual((await detail(created.id)).steps, created.steps);
  });

  test('PUT a step with an invalid header name is 400 and the test stays readable', async () => {
    const created = await newTest('Patch header names');
    const stepId = created.steps[0].id;
    const response = await get().call({
      method: 'PUT',
      url: stepUrl(created.id, stepId),
      body: { headers: { 'Bad Header': 5 } },
    });
    const error = expectError(response, 400, 'validation_failed');
    assert.ok(String(error.field).startsWith('/headers'), error.field);
    const after = await get().call({ method: 'GET', url: `${tests()}/${created.id}` });
    assert.equal(after.statusCode, 200, 'the test stays readable');
    assert.deepEqual(after.json().data.steps, created.steps);
  });

  test("PUT a condition's steps replaces its embedded steps, keeping the ids of its own", async () => {
    const created = await newTest('Condition steps');
    const { step: other } = await add(created.id, { step_type: 'pause', duration: 8 });
    const { step: condition } = await add(created.id, {
      step_type: 'condition',
      left_value: '{{x}}',
      right_value: 'y',
      steps: [
        { step_type: 'request', url: 'https://a' },
        { step_type: 'pause', duration: 2 },
      ],
    });
    const [a, b] = condition.steps;
    const full = await putStep(created.id, condition.id, {
      steps: [
        { ...b, duration: 3 },
        { step_type: 'request', url: 'https://new', id: a.id },
        { step_type: 'pause', duration: 9, id: other.id },
        { step_type: 'subtest', test_uuid: created.id },
      ],
    });
    const updated = full.steps[2];
    assert.equal(updated.id, condition.id);
    assert.equal(updated.left_value, '{{x}}');
    assert.equal(updated.right_value, 'y');
    assert.equal(updated.steps.length, 4);
    assert.deepEqual(updated.steps[0], { ...b, duration: 3 });
    assert.equal(updated.steps[1].id, a.id, 'an own embedded id is kept');
    assert.equal(updated.steps[1].url, 'https://new');
    assert.notEqual(updated.steps[2].id, other.id, 'the id of a step outside the condition is not reused');
    assert.match(updated.steps[2].id, UUID);
    assert.match(updated.steps[3].id, UUID);
    assert.deepEqual(full.steps[1], other, 'the top-level step is untouched');
    const ids = allIds(full.steps);
    assert.equal(new Set(ids).size, ids.length, 'no id appears twice');
    await roundTrip(created.id, updated);
    for (const inner of updated.steps) {
      assert.deepEqual(await get().data('GET', stepUrl(created.id, inner.id)), inner);
    }

    const emptied = await putStep(created.id, condition.id, { steps: [] });
    assert.deepEqual(emptied.steps[2].steps, []);
    assert.equal((await get().call({ method: 'GET', url: stepUrl(created.id, a.id) })).statusCode, 404);
  });

  test('PUT an embedded step changes it in place inside its condition', async () => {
    const created = await newTest('Embedded update');
    const { step: condition } = await add(created.id, {
      step_type: 'condition',
      steps: [
        { step_type: 'pause', duration: 1 },
        { step_type: 'request', url: 'https://before' },
        { step_type: 'pause', duration: 2 },
      ],
    });
    const target = condition.steps[1];
    const full = await putStep(created.id, target.id, {
      url: 'https://after',
      skipped: true,
    });
    assert.equal(full.steps.length, 2);
    const updated = full.steps[1];
    assert.deepEqual(
      updated.steps.map((s: any) => s.id),
      condition.steps.map((s: any) => s.id),
    );
    assert.deepEqual(updated.steps[1], { ...target, url: 'https://after', skipped: true });
    assert.deepEqual(updated.steps[0], condition.steps[0]);
    assert.deepEqual(updated.steps[2], condition.steps[2]);
    assert.deepEqual(await get().data('GET', stepUrl(created.id, target.id)), updated.steps[1]);
  });

  // ---------------------------------------------------------------- DELETE

  test('DELETE a step answers 204 with an empty body and removes it', async () => {
    const created = await newTest('Delete');
    const { step } = await add(created.id, { step_type: 'pause', duration: 3 });
    const response = await get().call({ method: 'DELETE', url: stepUrl(created.id, step.id) });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    expectError(await get().call({ method: 'GET', url: stepUrl(created.id, step.id) }), 404, 'not_found');
    assert.deepEqual((await detail(created.id)).steps, created.steps);
    const again = await get().call({ method: 'DELETE', url: stepUrl(created.id, step.id) });
    expectError(again, 404, 'not_found');
  });

  test('DELETE an embedded step removes only it from its condition', async () => {
    const created = await newTest('Delete embedded');
    const { step: condition } = await add(created.id, {
      step_type: 'condition',
      left_value: 'l',
      steps: [
        { step_type: 'pause', duration: 1 },
        { step_type: 'request' },
        { step_type: 'pause', duration: 2 },
      ],
    });
    const [first, middle, last] = condition.steps;
    const response = await get().call({ method: 'DELETE', url: stepUrl(created.id, middle.id) });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    const served = await detail(created.id);
    assert.equal(served.steps.length, 2);
    assert.deepEqual(served.steps[1], { ...condition, steps: [first, last] });
    expectError(await get().call({ method: 'GET', url: stepUrl(created.id, middle.id) }), 404, 'not_found');
  });

  test('DELETE a condition removes its embedded steps with it', async () => {
    const created = await newTest('Delete condition');
    const { step: condition } = await add(created.id, {
      step_type: 'condition',
      steps: [{ step_type: 'pause' }, { step_type: 'request', url: 'https://x' }],
    });
    const { step: after } = await add(created.id, { step_type: 'pause', duration: 5 });
    const response = await get().call({ method: 'DELETE', url: stepUrl(created.id, condition.id) });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    const served = await detail(created.id);
    assert.deepEqual(served.steps, [created.steps[0], after]);
    for (const id of [condition.id, ...condition.steps.map((s: any) => s.id)]) {
      expectError(await get().call({ method: 'GET', url: stepUrl(created.id, id) }), 404, 'not_found');
    }
    const rows = await get()
      .store.db.selectFrom('steps')
      .select('id')
      .where('test_id', '=', created.id)
      .execute();
    assert.deepEqual(rows.map((r) => r.id).sort(), [created.steps[0].id, after.id].sort());
  });

  test('DELETE the last step leaves a test with no steps', async () => {
    const created = await newTest('Delete all');
    const response = await get().call({ method: 'DELETE', url: stepUrl(created.id, created.steps[0].id) });
    assert.equal(response.statusCode, 204);
    assert.deepEqual((await detail(created.id)).steps, []);
    const reordered = await get().data('PUT', stepsOf(created.id), []);
    assert.deepEqual(reordered.steps, []);
  });

  // ---------------------------------------------------------------- not found and access

  test('unknown and malformed step ids are 404 on GET, PUT and DELETE', async () => {
    const created = await newTest('Unknown steps');
    const other = await newTest('Another');
    const { call } = get();
    for (const stepId of [NO_SUCH_ID, 'not-a-uuid', '12345', other.steps[0].id]) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { note: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const response = await call({ method, url: stepUrl(created.id, stepId), body });
        expectError(response, 404, 'not_found');
      }
    }
    assert.deepEqual((await detail(created.id)).steps, created.steps);
    assert.deepEqual((await detail(other.id)).steps, other.steps);
  });

  test('unknown and malformed test ids are 404 on every step route', async () => {
    const { call } = get();
    for (const testId of [NO_SUCH_ID, 'not-a-uuid']) {
      const routes: [string, string, unknown][] = [
        ['POST', stepsOf(testId), { step_type: 'pause' }],
        ['PUT', stepsOf(testId), []],
        ['GET', stepUrl(testId, NO_SUCH_ID), undefined],
        ['PUT', stepUrl(testId, NO_SUCH_ID), { note: 'x' }],
        ['DELETE', stepUrl(testId, NO_SUCH_ID), undefined],
      ];
      for (const [method, url, body] of routes) {
        expectError(await call({ method: method as 'GET', url, body }), 404, 'not_found');
      }
    }
  });

  test("another account's test and steps are 404 and stay unchanged", async () => {
    const { call, bob } = get();
    const created = await newTest('Private steps');
    const { test: before, step } = await add(created.id, {
      step_type: 'condition',
      steps: [{ step_type: 'pause' }],
    });
    const inner = step.steps[0].id;
    const revisionsBefore = await revisionCount(created.id);
    const order = [before.steps[0].id, { id: step.id, steps: [inner] }];
    for (const base of [tests(), `/buckets/${bob.bucketKey}/tests`]) {
      const stepsUrl = `${base}/${created.id}/steps`;
      const routes: [string, string, unknown][] = [
        ['POST', stepsUrl, { step_type: 'pause' }],
        ['PUT', stepsUrl, [...order].reverse()],
        ['GET', `${stepsUrl}/${step.id}`, undefined],
        ['GET', `${stepsUrl}/${inner}`, undefined],
        ['PUT', `${stepsUrl}/${step.id}`, { left_value: 'bob was here' }],
        ['PUT', `${stepsUrl}/${inner}`, { duration: 100 }],
        ['DELETE', `${stepsUrl}/${inner}`, undefined],
        ['DELETE', `${stepsUrl}/${step.id}`, undefined],
      ];
      for (const [method, url, body] of routes) {
        const response = await call({ method: method as 'GET', url, body, as: bob });
        expectError(response, 404, 'not_found');
      }
    }
    // Alice's own URL under Bob's bucket is also hidden from her.
    const crossed = await call({
      method: 'GET',
      url: `/buckets/${bob.bucketKey}/tests/${created.id}/steps/${step.id}`,
    });
    expectError(crossed, 404, 'not_found');
    assert.deepEqual((await detail(created.id)).steps, before.steps);
    assert.equal(await revisionCount(created.id), revisionsBefore);
  });

  test('step writes need the test:write scope; reads need only api:read', async () => {
    const { call, tokenWith } = get();
    const created = await newTest('Scopes');
    const readOnly = await tokenWith(['api:read']);
    const stepId = created.steps[0].id;
    const writes: [string, string, unknown][] = [
      ['POST', stepsOf(created.id), { step_type: 'pause' }],
      ['PUT', stepsOf(created.id), [stepId]],
      ['PUT', stepUrl(created.id, stepId), { note: 'x' }],
      ['DELETE', stepUrl(created.id, stepId), undefined],
    ];
    for (const [method, url, body] of writes) {
      expectError(await call({ method: method as 'GET', url, body, as: readOnly }), 403, 'forbidden');
    }
    const read = await call({ method: 'GET', url: stepUrl(created.id, stepId), as: readOnly });
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json().data, created.steps[0]);
    expectError(
      await call({ method: 'GET', url: stepUrl(created.id, stepId), as: null }),
      401,
      'unauthorized',
    );
    assert.deepEqual((await detail(created.id)).steps, created.steps);
  });

  // ---------------------------------------------------------------- revisions

  test('every step write adds one test revision holding the new steps; failed writes add none', async () => {
    const { call } = get();
    const created = await newTest('History');
    const revisions = async () =>
      (await get().data('GET', `${tests()}/${created.id}/revisions`)).test_revisions;
    assert.equal((await revisions()).length, 1);

    const writes: (() => Promise<any>)[] = [
      () => get().data('POST', stepsOf(created.id), { step_type: 'pause', duration: 2 }),
      () =>
        get().data('POST', stepsOf(created.id), {
          step_type: 'condition',
          steps: [{ step_type: 'pause', duration: 3 }],
        }),
      async () => {
        const current = (await detail(created.id)).steps;
        return get().data('PUT', stepsOf(created.id), [...shape(current)].reverse());
      },
      async () => {
        const current = (await detail(created.id)).steps;
        const pause = current.find((s: any) => s.step_type === 'pause');
        return putStep(created.id, pause.id, { duration: 60 });
      },
      async () => {
        const current = (await detail(created.id)).steps;
        const condition = current.find((s: any) => s.step_type === 'condition');
        return putStep(created.id, condition.steps[0].id, { duration: 4 });
      },
      async () => {
        const current = (await detail(created.id)).steps;
        const condition = current.find((s: any) => s.step_type === 'condition');
        const response = await call({ method: 'DELETE', url: stepUrl(created.id, condition.id) });
        assert.equal(response.statusCode, 204);
        return detail(created.id);
      },
    ];
    for (const [i, write] of writes.entries()) {
      const full = await write();
      const list = await revisions();
      assert.equal(list.length, i + 2, `write ${i} adds one revision`);
      const last = list.at(-1);
      assert.equal(last.item_type, 'radar_test');
      assert.equal(last.action, 'update');
      assert.equal(last.source, 'api');
      assert.equal(last.author_email, 'alice@example.com');
      assert.deepEqual(last.snapshot.steps, full.steps, `write ${i} snapshot holds the steps`);
      assert.ok(last.timestamp > list.at(-2).timestamp);
    }

    const count = (await revisions()).length;
    const failures = [
      { method: 'POST' as const, url: stepsOf(created.id), body: { step_type: 'pause', duration: 0 } },
      { method: 'PUT' as const, url: stepsOf(created.id), body: [NO_SUCH_ID] },
      { method: 'PUT' as const, url: stepUrl(created.id, NO_SUCH_ID), body: { note: 'x' } },
      { method: 'DELETE' as const, url: stepUrl(created.id, NO_SUCH_ID) },
    ];
    for (const failure of failures) {
      const response = await call(failure);
      assert.ok(response.statusCode === 400 || response.statusCode === 404, response.body);
    }
    assert.equal((await revisions()).length, count);
  });
});
