import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import fastJson from 'fast-json-stringify';
import { serializerSchema } from '../../src/api/shared/serializer-schema.js';
import { Envelope } from '../../src/api/shared/envelope.js';
import { TestDetail } from '../../src/api/tests/schemas.js';

const assertion = {
  source: 'response_status',
  property: '',
  comparison: 'equal_number',
  value: 200,
  extra: 1,
};
const request = {
  id: 's1',
  step_type: 'request',
  method: 'GET',
  url: 'https://x.test/{{id}}',
  body: '',
  form: {},
  headers: { Accept: ['application/json'] },
  auth: {},
  assertions: [assertion],
  variables: [{ name: 'v', source: 'response_json', property: 'a.b' }],
  scripts: ['log(1)'],
  before_scripts: [],
  skipped: false,
  note: '',
  secret: 'not in the schema',
};
const steps = [
  request,
  { id: 's2', step_type: 'pause', duration: 3, url: 'not a pause field' },
  {
    id: 's3',
    step_type: 'condition',
    left_value: '{{a}}',
    comparison: 'equal',
    right_value: '1',
    steps: [request, { id: 's4', step_type: 'pause', duration: 1 }],
  },
  {
    id: 's5',
    step_type: 'subtest',
    test_uuid: 'u',
    environment_uuid: '',
    bucket_key: 'b',
    assertions: [],
    variables: [],
    params: [{ name: 'p', value: 'v' }],
  },
  {
    id: 's6',
    step_type: 'partner-inspector',
    integration_id: '',
    suite_id: '',
    test_id: 't',
    is_custom_start_url: false,
    start_url: '',
    assertions: [],
    variables: [],
  },
];
const detail = (lastRun: unknown) => ({
  id: '0199aaaa-0000-7000-8000-000000000000',
  name: 'T',
  description: null,
  created_at: 1,
  created_by: { id: 'a', name: 'A', email: 'a@x.test' },
  default_environment_id: 'e',
  environments: [],
  steps,
  schedules: [],
  last_run: lastRun,
  trigger_url: 'https://x.test/radar/t/trigger',
  internal: 'not in the schema',
});
const run = {
  test_run_id: 'r',
  result: 'pass',
  environment_id: 'e',
  environment_name: 'E',
  region: 'local',
  source: 'trigger',
  started_at: 1.5,
  finished_at: null,
};

/** The answer the serialiser gives for `data` from the route's schema itself. */
function plain(schema: object) {
  return fastJson(schema as never);
}
function prepared(schema: object) {
  const { schema: copy, externals } = serializerSchema(schema);
  return fastJson(copy as never, { schema: externals as never });
}

describe('response schemas for the serialiser', () => {
  test('a test, one or several, with every step type and with or without a last run, serialises as before', () => {
    const schema = Envelope(Type.Union([TestDetail, Type.Array(TestDetail)]));
    const [before, after] = [plain(schema), prepared(schema)];
    for (const data of [detail(null), detail(run), [detail(run), detail(null)], []]) {
      const body = { data, meta: { status: 'success' }, error: null };
      assert.equal(after(body), before(body));
    }
  });

  test('an object or null (as a message’s request and response) serialises as before', () => {
    const side = Type.Object({
      method: Type.String(),
      headers: Type.Record(Type.String(), Type.Array(Type.String())),
    });
    const schema = Envelope(
      Type.Object({
        uuid: Type.String(),
        request: Type.Union([side, Type.Null()]),
        response: Type.Union([Type.Null(), side]),
      }),
    );
    const [before, after] = [plain(schema), prepared(schema)];
    const sent = { method: 'GET', headers: { A: ['b'] }, hidden: true };
    for (const [req, res] of [
      [null, null],
      [sent, null],
      [null, sent],
    ]) {
      const body = {
        data: { uuid: 'm', request: req, response: res },
        meta: { status: 'success' },
        error: null,
      };
      assert.equal(after(body), before(body));
    }
  });

  test('the copy has no anyOf left to resolve and each if is a schema of its own', () => {
    const { schema, externals } = serializerSchema(
      Envelope(Type.Union([TestDetail, Type.Array(TestDetail)])),
    );
    const text = JSON.stringify(schema);
    assert.equal(text.includes('"anyOf"'), false);
    assert.equal(text.includes('"if":{"type"'), false);
    assert.ok(Object.keys(externals).length >= 5, 'one if per step type, and one for arrays');
    for (const [id, external] of Object.entries(externals))
      assert.equal((external as { $id: string }).$id, id);
  });
});
