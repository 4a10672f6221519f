import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TestCreateBody, TestPatch } from '../../src/api/tests/schemas.js';
import { AssertionSchema } from '../../src/domain/assertions.js';
import { shareRepeatedSubschemas } from '../../src/services/shared-subschemas.js';
import { createBodyAjv, toValidationError } from '../../src/services/validation.js';

const request = (extra: Record<string, unknown> = {}) => ({
  step_type: 'request',
  method: 'GET',
  url: 'https://api.example.test/items',
  assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
  variables: [{ name: 'id', source: 'response_json', property: 'items[0].id' }],
  headers: { Accept: ['application/json'] },
  ...extra,
});
const test1 = (steps: unknown[]) => ({ name: 'T', steps });

/** Bodies, valid and not, each as a single test and inside an array. */
const BODIES: unknown[] = [
  test1([request()]),
  test1([request(), { step_type: 'pause', duration: 2 }]),
  test1([
    {
      step_type: 'condition',
      left_value: '{{a}}',
      comparison: 'equal',
      right_value: '1',
      steps: [request()],
    },
  ]),
  test1([request({ assertions: [{ source: 'nope', comparison: 'equal' }] })]),
  test1([request({ headers: { 'Bad Header': 'x' } })]),
  test1([{ step_type: 'teleport' }]),
  test1([{ step_type: 'condition', steps: [{ step_type: 'condition' }] }]),
  test1([
    { step_type: 'condition', steps: [request({ variables: [{ name: '1bad', source: 'response_json' }] })] },
  ]),
  test1([request({ auth: { auth_type: 'basic', username: 5 } })]),
  test1([{ step_type: 'pause', duration: 1000 }]),
  { name: '' },
  { steps: [] },
  {
    name: 'E',
    environments: [{ name: 'env', initial_variables: { a: 'b' }, headers: { X: ['y'] } }],
    schedules: [{ interval: '1m' }],
  },
  { name: 'E', environments: [{ name: 'env', initial_variables: { a: 5 } }] },
];

function outcome(validate: ReturnType<ReturnType<typeof createBodyAjv>['compile']>, body: unknown) {
  if (validate(body)) return 'valid';
  const error = toValidationError(validate.errors);
  return `${error.field ?? ''} ${error.message}`;
}

describe('repeated subschemas compiled once', () => {
  test('the test create and update validators answer every body exactly as the written-out ones', () => {
    for (const schema of [TestCreateBody, TestPatch]) {
      const plain = createBodyAjv().compile(schema);
      const shared = createBodyAjv().compile(shareRepeatedSubschemas(schema));
      for (const body of [...BODIES, ...BODIES.map((b) => [b]), [BODIES[0], BODIES[3]]]) {
        assert.equal(outcome(shared, body), outcome(plain, body), JSON.stringify(body));
      }
    }
  });

  test('a step schema appears once, in $defs, and the input schema is left as it was', () => {
    const before = JSON.stringify(TestCreateBody);
    const shared = shareRepeatedSubschemas(TestCreateBody) as { $defs?: Record<string, unknown> };
    assert.equal(JSON.stringify(TestCreateBody), before);
    assert.ok(shared.$defs !== undefined && Object.keys(shared.$defs).length > 0);
    // An assertion's schema is written out once for every place a step can hold assertions.
    const assertion = `"required":${JSON.stringify(AssertionSchema.required)}`;
    const occurrences = (s: string) => s.split(assertion).length - 1;
    assert.ok(occurrences(before) >= 10, `${occurrences(before)} times before`);
    assert.equal(occurrences(JSON.stringify(shared)), 1);
  });

  test('a schema with nothing repeated is copied without $defs', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    assert.deepEqual(shareRepeatedSubschemas(schema), schema);
  });
});
