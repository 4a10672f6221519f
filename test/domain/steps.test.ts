import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../src/domain/errors.js';
import {
  type ConditionStep,
  defaultRequestStep,
  type EmbeddedStep,
  findStep,
  normalizeStep,
  type PauseStep,
  type RequestStep,
  type Step,
  type StepInput,
  stepIds,
} from '../../src/domain/steps.js';
import { type OrderEntry, reorderSteps } from '../../src/services/steps.js';

/** An id chooser that hands out id-1, id-2, … and records what it was asked for. */
function counter() {
  const seen: { id?: string }[] = [];
  let n = 0;
  const idFor = (input: { id?: string }) => {
    seen.push(input);
    n += 1;
    return `id-${n}`;
  };
  return { idFor, seen };
}

const fixed = (id: string) => () => id;

describe('normalizeStep', () => {
  test('a bare request step gets every field with its default', () => {
    assert.deepEqual(normalizeStep({ step_type: 'request' }, fixed('r1')), {
      id: 'r1',
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
  });

  test('a request step with every field keeps them, upper-casing the method and arraying header values', () => {
    const input: StepInput = {
      step_type: 'request',
      method: 'patch',
      url: 'https://api.example.com/users/{{id}}',
      body: '{"name":"x"}',
      form: { a: '1', b: ['2', '3'] },
      headers: { Accept: 'application/json', 'X-Many': ['a', 'b'] },
      auth: { auth_type: 'basic', username: 'u', password: 'p' },
      assertions: [{ source: 'response_json', property: 'data.id', comparison: 'equal', value: '7' }],
      variables: [{ name: 'user_id', source: 'response_json', property: 'data.id' }],
      scripts: ['log(1)'],
      before_scripts: ['variables.set("a", "b")'],
      skipped: true,
      note: 'updates a user',
    };
    assert.deepEqual(normalizeStep(input, fixed('r2')), {
      id: 'r2',
      step_type: 'request',
      method: 'PATCH',
      url: 'https://api.example.com/users/{{id}}',
      body: '{"name":"x"}',
      form: { a: '1', b: ['2', '3'] },
      headers: { Accept: ['application/json'], 'X-Many': ['a', 'b'] },
      auth: { auth_type: 'basic', username: 'u', password: 'p' },
      assertions: [{ source: 'response_json', property: 'data.id', comparison: 'equal', value: '7' }],
      variables: [{ name: 'user_id', source: 'response_json', property: 'data.id' }],
      scripts: ['log(1)'],
      before_scripts: ['variables.set("a", "b")'],
      skipped: true,
      note: 'updates a user',
    });
  });

  test('assertions and variables get an empty property and an empty value when those are omitted', () => {
    const step = normalizeStep(
      {
        step_type: 'request',
        assertions: [
          { source: 'response_status', comparison: 'equal_number', value: 201 },
          { source: 'response_text', comparison: 'not_empty' },
        ],
        variables: [{ name: 'body', source: 'response_text' }],
      },
      fixed('r3'),
    ) as RequestStep;
    assert.deepEqual(step.assertions, [
      { source: 'response_status', property: '', comparison: 'equal_number', value: 201 },
      { source: 'response_text', property: '', comparison: 'not_empty', value: '' },
    ]);
    assert.deepEqual(step.variables, [{ name: 'body', source: 'response_text', property: '' }]);
  });

  test('auth keeps only the properties of its method and fills the missing ones', () => {
    const auth = (input: unknown) =>
      (normalizeStep({ step_type: 'request', auth: input } as StepInput, fixed('a')) as RequestStep).auth;
    assert.deepEqual(auth(undefined), {});
    assert.deepEqual(auth({}), {});
    assert.deepEqual(auth({ username: 'ignored without a type' }), {});
    assert.deepEqual(auth({ auth_type: 'basic', username: 'u' }), {
      auth_type: 'basic',
      username: 'u',
      password: '',
    });
    assert.deepEqual(auth({ auth_type: 'basic', username: 'u', password: 'p', access_token: 'x' }), {
      auth_type: 'basic',
      username: 'u',
      password: 'p',
    });
    for (const signature_type of ['auth_header', 'body', 'query']) {
      assert.deepEqual(
        auth({
          auth_type: 'oauth_1',
          access_token: 'at',
          consumer_secret: 'cs',
          consumer_key: 'ck',
          token_secret: 'ts',
          signature_type,
          username: 'dropped',
        }),
        {
          auth_type: 'oauth_1',
          access_token: 'at',
          consumer_secret: 'cs',
          consumer_key: 'ck',
          token_secret: 'ts',
          signature_type,
        },
      );
    }
    assert.deepEqual(auth({ auth_type: 'oauth_1' }), {
      auth_type: 'oauth_1',
      access_token: '',
      consumer_secret: '',
      consumer_key: '',
      token_secret: '',
      signature_type: 'auth_header',
    });
    assert.deepEqual(auth({ auth_type: 'client_certificate', username: 'u', password: 'p' }), {
      auth_type: 'client_certificate',
    });
  });

  test('a pause step defaults to one second and keeps the duration given', () => {
    assert.deepEqual(normalizeStep({ step_type: 'pause' }, fixed('p1')), {
      id: 'p1',
      step_type: 'pause',
      duration: 1,
    });
    assert.deepEqual(normalizeStep({ step_type: 'pause', duration: 180 }, fixed('p2')), {
      id: 'p2',
      step_type: 'pause',
      duration: 180,
    });
  });

  test('a subtest step fills defaults and copies params without extra properties', () => {
    const test_uuid = '11111111-1111-4111-8111-111111111111';
    assert.deepEqual(normalizeStep({ step_type: 'subtest', test_uuid }, fixed('s1')), {
      id: 's1',
      step_type: 'subtest',
      test_uuid,
      environment_uuid: '',
      bucket_key: '',
      assertions: [],
      variables: [],
      params: [],
    });
    const full = normalizeStep(
      {
        step_type: 'subtest',
        test_uuid,
        environment_uuid: '22222222-2222-4222-8222-222222222222',
        bucket_key: 'abcdefghijkl',
        assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
        variables: [{ name: 'token', source: 'response_json', property: 'token' }],
        params: [{ name: 'user', value: '{{user}}', extra: 'x' } as { name: string; value: string }],
      },
      fixed('s2'),
    );
    assert.deepEqual(full, {
      id: 's2',
      step_type: 'subtest',
      test_uuid,
      environment_uuid: '22222222-2222-4222-8222-222222222222',
      bucket_key: 'abcdefghijkl',
      assertions: [{ source: 'response_status', property: '', comparison: 'equal_number', value: 200 }],
      variables: [{ name: 'token', source: 'response_json', property: 'token' }],
      params: [{ name: 'user', value: '{{user}}' }],
    });
  });

  test('a partner-inspector step fills defaults and keeps every field given', () => {
    assert.deepEqual(normalizeStep({ step_type: 'partner-inspector' }, fixed('pi1')), {
      id: 'pi1',
      step_type: 'partner-inspector',
      integration_id: '',
      suite_id: '',
      test_id: '',
      is_custom_start_url: false,
      start_url: '',
      assertions: [],
      variables: [],
    });
    const input: StepInput = {
      step_type: 'partner-inspector',
      integration_id: '33333333-3333-4333-8333-333333333333',
      suite_id: 'suite-9',
      test_id: 'browser-test-4',
      is_custom_start_url: true,
      start_url: 'https://app.example.com/login',
      assertions: [{ source: 'response_json', property: 'passed', comparison: 'equal', value: 'true' }],
      variables: [{ name: 'report', source: 'response_json', property: 'report_url' }],
    };
    const { step_type: _type, ...rest } = input;
    assert.deepEqual(normalizeStep(input, fixed('pi2')), {
      id: 'pi2',
      step_type: 'partner-inspector',
      ...rest,
    });
  });

  test('a condition step fills defaults and normalizes its embedded steps with ids of their own', () => {
    assert.deepEqual(normalizeStep({ step_type: 'condition' }, fixed('c1')), {
      id: 'c1',
      step_type: 'condition',
      left_value: '',
      comparison: 'equal',
      right_value: '',
      steps: [],
    });
    const { idFor, seen } = counter();
    const condition = normalizeStep(
      {
        step_type: 'condition',
        left_value: '{{user}}',
        comparison: 'not_equal',
        right_value: 'u1',
        steps: [
          { step_type: 'request', method: 'post', headers: { A: 'b' } },
          { step_type: 'pause', duration: 3 },
        ],
      },
      idFor,
    ) as ConditionStep;
    assert.equal(condition.left_value, '{{user}}');
    assert.equal(condition.comparison, 'not_equal');
    assert.equal(condition.right_value, 'u1');
    assert.equal(condition.steps.length, 2);
    const ids = [condition.id, ...condition.steps.map((s) => s.id)];
    assert.equal(new Set(ids).size, 3, 'the condition and each embedded step have distinct ids');
    assert.equal(seen.length, 3, 'idFor is asked once per step, embedded steps included');
    const [request, pause] = condition.steps as [RequestStep, PauseStep];
    assert.equal(request.method, 'POST');
    assert.deepEqual(request.headers, { A: ['b'] });
    assert.equal(request.body, '');
    assert.deepEqual(pause, { id: pause.id, step_type: 'pause', duration: 3 });
  });

  test('idFor sees the id given in the input and decides the id', () => {
    const keepOrNew = (input: { id?: string }) => (input.id === 'keep' ? 'keep' : 'fresh');
    const condition = normalizeStep(
      {
        step_type: 'condition',
        id: 'keep',
        steps: [
          { step_type: 'pause', id: 'other' },
          { step_type: 'pause', id: 'keep' },
        ],
      },
      keepOrNew,
    ) as ConditionStep;
    assert.equal(condition.id, 'keep');
    assert.deepEqual(
      condition.steps.map((s) => s.id),
      ['fresh', 'keep'],
    );
  });

  test('properties that do not belong to the step type are dropped', () => {
    const pause = normalizeStep(
      { step_type: 'pause', duration: 2, url: 'https://x', steps: [] } as unknown as StepInput,
      fixed('p'),
    );
    assert.deepEqual(Object.keys(pause).sort(), ['duration', 'id', 'step_type']);
    const request = normalizeStep(
      { step_type: 'request', duration: 5, left_value: 'x' } as unknown as StepInput,
      fixed('r'),
    );
    assert.ok(!('duration' in request));
    assert.ok(!('left_value' in request));
    const condition = normalizeStep(
      { step_type: 'condition', method: 'GET' } as unknown as StepInput,
      fixed('c'),
    );
    assert.deepEqual(Object.keys(condition).sort(), [
      'comparison',
      'id',
      'left_value',
      'right_value',
      'step_type',
      'steps',
    ]);
  });

  test('the input is not changed', () => {
    const input: StepInput = {
      step_type: 'condition',
      steps: [{ step_type: 'request', method: 'get', headers: { A: 'b' } }],
    };
    const copy = structuredClone(input);
    normalizeStep(input, fixed('x'));
    assert.deepEqual(input, copy);
  });
});

describe('defaultRequestStep', () => {
  test('is a GET with an empty url and one status assertion, under the id given', () => {
    assert.deepEqual(defaultRequestStep('d1'), {
      id: 'd1',
      step_type: 'request',
      method: 'GET',
      url: '',
      body: '',
      form: {},
      headers: {},
      auth: {},
      assertions: [{ source: 'response_status', property: '', comparison: 'is_equal', value: 200 }],
      variables: [],
      scripts: [],
      before_scripts: [],
      skipped: false,
      note: '',
    });
  });

  test('each call answers a fresh object', () => {
    const a = defaultRequestStep('same');
    const b = defaultRequestStep('same');
    assert.deepEqual(a, b);
    a.assertions.push({ source: 'response_time', property: '', comparison: 'is_less_than', value: 5 });
    a.headers.X = ['y'];
    assert.equal(defaultRequestStep('same').assertions.length, 1);
    assert.deepEqual(defaultRequestStep('same').headers, {});
    assert.equal(b.assertions.length, 1);
  });
});

/** A small step tree: r1, c1 { e1, e2 }, p1, c2 {}. */
function tree(): Step[] {
  const request = (id: string): RequestStep => ({ ...defaultRequestStep(id), url: `https://x/${id}` });
  const pause = (id: string, duration = 1): PauseStep => ({ id, step_type: 'pause', duration });
  const condition = (id: string, steps: EmbeddedStep[]): ConditionStep => ({
    id,
    step_type: 'condition',
    left_value: `{{${id}}}`,
    comparison: 'equal',
    right_value: 'yes',
    steps,
  });
  return [request('r1'), condition('c1', [request('e1'), pause('e2', 5)]), pause('p1'), condition('c2', [])];
}

describe('stepIds', () => {
  test('lists every id in order, embedded steps right after their condition', () => {
    assert.deepEqual(stepIds(tree()), ['r1', 'c1', 'e1', 'e2', 'p1', 'c2']);
  });

  test('an empty list has no ids', () => {
    assert.deepEqual(stepIds([]), []);
  });
});

describe('findStep', () => {
  const steps = tree();

  test('finds top-level steps, conditions with their embedded steps, and embedded steps', () => {
    assert.equal(findStep(steps, 'r1'), steps[0]);
    const c1 = findStep(steps, 'c1');
    assert.equal(c1, steps[1]);
    assert.equal(c1?.step_type, 'condition');
    assert.deepEqual(
      (c1 as ConditionStep).steps.map((s) => s.id),
      ['e1', 'e2'],
    );
    assert.deepEqual(findStep(steps, 'e2'), { id: 'e2', step_type: 'pause', duration: 5 });
    assert.equal(findStep(steps, 'e1'), (steps[1] as ConditionStep).steps[0]);
    assert.equal(findStep(steps, 'c2'), steps[3]);
  });

  test('answers undefined for an id that is not there', () => {
    assert.equal(findStep(steps, 'nope'), undefined);
    assert.equal(findStep(steps, ''), undefined);
    assert.equal(findStep([], 'r1'), undefined);
  });
});

describe('reorderSteps', () => {
  const ids = (steps: Step[]) =>
    steps.map((s) => (s.step_type === 'condition' ? { id: s.id, steps: s.steps.map((e) => e.id) } : s.id));

  /** Runs `fn` and answers the AppError it throws. */
  const failure = (fn: () => unknown): AppError => {
    try {
      fn();
    } catch (error) {
      assert.ok(error instanceof AppError, `expected an AppError, got ${error}`);
      return error;
    }
    assert.fail('expected the call to throw');
  };

  test('the current order answers the same steps', () => {
    const steps = tree();
    const order: OrderEntry[] = ['r1', { id: 'c1', steps: ['e1', 'e2'] }, 'p1', { id: 'c2', steps: [] }];
    assert.deepEqual(reorderSteps(steps, order), steps);
  });

  test('top-level and embedded steps take the new order, their contents untouched', () => {
    const steps = tree();
    const result = reorderSteps(steps, [
      { id: 'c2', steps: [] },
      'p1',
      { id: 'c1', steps: ['e2', 'e1'] },
      'r1',
    ]);
    assert.deepEqual(ids(result), [{ id: 'c2', steps: [] }, 'p1', { id: 'c1', steps: ['e2', 'e1'] }, 'r1']);
    assert.deepEqual(result[3], steps[0]);
    const c1 = result[2] as ConditionStep;
    assert.equal(c1.left_value, '{{c1}}');
    assert.deepEqual(c1.steps[0], { id: 'e2', step_type: 'pause', duration: 5 });
  });

  test('an embedded step can move to the top level and a top-level step into a condition', () => {
    const steps = tree();
    const result = reorderSteps(steps, [
      'e1',
      { id: 'c1', steps: ['e2'] },
      { id: 'c2', steps: ['r1', 'p1'] },
    ]);
    assert.deepEqual(ids(result), ['e1', { id: 'c1', steps: ['e2'] }, { id: 'c2', steps: ['r1', 'p1'] }]);
    assert.deepEqual(result[0], findStep(steps, 'e1'));
    assert.deepEqual((result[2] as ConditionStep).steps[0], steps[0]);
  });

  test('a condition given as a plain id keeps no embedded steps', () => {
    const steps = tree();
    const result = reorderSteps(steps, ['r1', 'c1', 'e1', 'e2', 'p1', 'c2']);
    assert.deepEqual(ids(result), ['r1', { id: 'c1', steps: [] }, 'e1', 'e2', 'p1', { id: 'c2', steps: [] }]);
  });

  test('the current steps are not changed', () => {
    const steps = tree();
    const copy = structuredClone(steps);
    reorderSteps(steps, ['e1', 'e2', { id: 'c1', steps: [] }, { id: 'c2', steps: ['r1', 'p1'] }]);
    assert.deepEqual(steps, copy);
  });

  test('no steps and an empty order answer an empty list', () => {
    assert.deepEqual(reorderSteps([], []), []);
  });

  test('an omitted step fails, naming it', () => {
    const error = failure(() =>
      reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e1'] }, 'p1', { id: 'c2', steps: [] }]),
    );
    assert.equal(error.code, 'validation_failed');
    assert.equal(error.status, 400);
    assert.equal(error.field, '/');
    assert.match(error.message, /missing step ids e2\b/);
    const top = failure(() => reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e1', 'e2'] }, 'p1']));
    assert.match(top.message, /missing step ids c2\b/);
  });

  test('an empty order for a test with steps names every step as missing', () => {
    const error = failure(() => reorderSteps(tree(), []));
    for (const id of ['r1', 'c1', 'e1', 'e2', 'p1', 'c2']) assert.ok(error.message.includes(id), id);
  });

  test('an unknown step fails, naming it', () => {
    const error = failure(() =>
      reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e1', 'e2', 'ghost'] }, 'p1', 'c2', 'phantom']),
    );
    assert.equal(error.code, 'validation_failed');
    assert.match(error.message, /unknown step ids ghost, phantom/);
    assert.doesNotMatch(error.message, /missing/);
  });

  test('a step named twice fails, naming it', () => {
    const error = failure(() =>
      reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e1', 'e2'] }, 'p1', { id: 'c2', steps: [] }, 'p1']),
    );
    assert.equal(error.code, 'validation_failed');
    assert.match(error.message, /duplicate step ids p1/);
    const twice = failure(() =>
      reorderSteps(tree(), ['r1', 'e1', { id: 'c1', steps: ['e1', 'e2'] }, 'p1', { id: 'c2', steps: [] }]),
    );
    assert.match(twice.message, /duplicate step ids e1/);
  });

  test('every kind of problem is reported in one message', () => {
    const error = failure(() =>
      reorderSteps(tree(), ['r1', 'r1', 'ghost', { id: 'c1', steps: ['e1', 'e2'] }]),
    );
    assert.match(error.message, /missing step ids p1, c2/);
    assert.match(error.message, /unknown step ids ghost/);
    assert.match(error.message, /duplicate step ids r1/);
  });

  test('embedded steps given for a step that is not a condition fail at that entry', () => {
    const error = failure(() =>
      reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e1', 'e2'] }, { id: 'p1', steps: [] }, 'c2']),
    );
    assert.equal(error.code, 'validation_failed');
    assert.equal(error.field, '/2');
    assert.match(error.message, /p1/);
    const embedded = failure(() =>
      reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e2'] }, { id: 'e1', steps: [] }, 'p1', 'c2']),
    );
    assert.equal(embedded.field, '/2');
  });

  test('a condition inside a condition fails at its position', () => {
    const error = failure(() => reorderSteps(tree(), ['r1', { id: 'c1', steps: ['e1', 'c2', 'e2'] }, 'p1']));
    assert.equal(error.code, 'validation_failed');
    assert.equal(error.field, '/1/steps/1');
    assert.match(error.message, /c2/);
    const itself = failure(() => reorderSteps(tree(), ['r1', { id: 'c1', steps: ['c1'] }]));
    assert.equal(itself.field, '/1/steps/0');
  });
});
