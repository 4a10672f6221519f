import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_SETTINGS, type EnvironmentSettings } from '../../src/domain/environments.js';
import { type RunOutcome, ZERO_TIMINGS } from '../../src/domain/results.js';
import { type EmbeddedStepInput, normalizeStep, type Step, type StepInput } from '../../src/domain/steps.js';
import {
  createEngine,
  type EngineOptions,
  type RunDefinition,
  type ScriptRunner,
  type SubtestPort,
} from '../../src/runner/engine.js';
import {
  HttpFailure,
  type HttpSession,
  type InboundResponse,
  type OutboundRequest,
} from '../../src/net/client.js';
import type { ScriptJob, ScriptOutcome } from '../../src/runner/sandbox/sandbox.js';

// ---------------------------------------------------------------------------------------------
// Fakes

type Answer = (request: OutboundRequest, signal?: AbortSignal) => Promise<InboundResponse> | InboundResponse;

function response(
  status: number,
  body: unknown = {},
  headers: Record<string, string[]> = {},
): InboundResponse {
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  return {
    status,
    reason: 'OK',
    headers: { 'content-type': ['application/json'], ...headers },
    body: bytes,
    truncated: false,
    sizeBytes: bytes.length,
    timeMs: 12.3456,
    timings: { ...ZERO_TIMINGS, wait_for_response_ms: 10 },
    remoteAddress: '192.0.2.1',
    url: 'http://api.test/',
    redirects: 0,
  };
}

/** A session answering every request with `answer`, recording what was sent. */
function fakeHttp(answer: Answer = () => response(200)) {
  const sent: OutboundRequest[] = [];
  let closed = 0;
  const session: HttpSession = {
    async send(request, signal) {
      sent.push(request);
      return answer(request, signal);
    },
    async close() {
      closed++;
    },
  };
  return { sent, openSession: () => session, closed: () => closed };
}

/**
 * Scripts as plain functions of the job: `pass`, `fail`, `set name=value` (comma separated), or
 * `throw` (the runner itself rejects, as a broken sandbox does).
 */
function fakeScripts(): ScriptRunner & { jobs: ScriptJob[] } {
  const jobs: ScriptJob[] = [];
  return {
    jobs,
    async run(job): Promise<ScriptOutcome> {
      jobs.push(job);
      const variables = { ...job.variables };
      if (job.code === 'throw') throw new Error('the script sandbox threads fail to start');
      if (job.code.startsWith('set ')) {
        for (const pair of job.code.slice(4).split(',')) {
          const [name = '', value = ''] = pair.split('=');
          variables[name.trim()] = value.trim();
        }
      }
      const ok = job.code !== 'fail';
      return {
        ok,
        output: `ran ${job.code}`,
        error: ok ? null : 'AssertionError: expected 1 to equal 2',
        variables,
      };
    },
  };
}

const unusedScripts: ScriptRunner = {
  run: () => Promise.reject(new Error('no script should run')),
};

function steps(...inputs: StepInput[]): Step[] {
  let n = 0;
  return inputs.map((input) => normalizeStep(input, (s) => s.id ?? `step-${++n}`));
}

function definition(
  stepList: Step[],
  options: {
    settings?: Partial<EnvironmentSettings>;
    variables?: Record<string, string>;
    testId?: string;
  } = {},
): RunDefinition {
  return {
    test: { id: options.testId ?? 'test-1', name: 'Engine test', steps: stepList },
    environment: { id: 'env-1', name: 'Env', settings: { ...DEFAULT_SETTINGS, ...options.settings } },
    bucket: { key: 'bucket', name: 'Bucket', verify_ssl: true },
    region: 'eu-west',
    agent: null,
    variables: options.variables ?? {},
  };
}

function engineWith(overrides: Partial<EngineOptions> = {}) {
  const http = fakeHttp();
  let now = 1_700_000_000_000;
  return createEngine({
    scripts: unusedScripts,
    egress: 'allow-all',
    openSession: http.openSession,
    clock: { now: () => now++, random: () => 0.5 },
    sleep: async () => undefined,
    ...overrides,
  });
}

type RequestInput = Extract<EmbeddedStepInput, { step_type: 'request' }>;

const get = (id: string, url = 'http://api.test/x', extra: Partial<RequestInput> = {}): RequestInput => ({
  ...extra,
  id,
  step_type: 'request',
  method: 'GET',
  url,
});

/**
 * Waits until `signal` aborts, then rejects with `reason()`. A timer keeps the event loop alive
 * meanwhile, as a real socket or timer would (the engine's own run timer does not).
 */
function untilAborted<T>(signal: AbortSignal | undefined, reason: () => unknown): Promise<T> {
  return new Promise<T>((_resolve, reject) => {
    const keepAlive = setInterval(() => undefined, 1_000);
    signal?.addEventListener(
      'abort',
      () => {
        clearInterval(keepAlive);
        reject(reason());
      },
      { once: true },
    );
  });
}

/** A sleep that waits until the run's signal aborts, and says when it started waiting. */
function blockingSleep() {
  let started!: () => void;
  const waiting = new Promise<void>((resolve) => (started = resolve));
  return {
    waiting,
    sleep: (_ms: number, signal: AbortSignal) => {
      started();
      return untilAborted<void>(signal, () => signal.reason);
    },
  };
}

const hangingRequest: Answer = (_request, signal) =>
  untilAborted<InboundResponse>(signal, () => new HttpFailure('aborted', 'the request was aborted'));

// ---------------------------------------------------------------------------------------------

describe('engine events', () => {
  test('run, step started and step finished come in order, embedded steps included', async () => {
    const log: string[] = [];
    const engine = engineWith();
    await engine.run(
      definition(
        steps(
          get('first'),
          {
            id: 'cond',
            step_type: 'condition',
            left_value: 'a',
            comparison: 'equal',
            right_value: 'a',
            steps: [get('inner'), { id: 'inner-pause', step_type: 'pause', duration: 1 }],
          },
          { id: 'pause', step_type: 'pause', duration: 2 },
        ),
      ),
      {
        events: {
          runStarted: (e) => log.push(`run ${e.attempt}`),
          stepStarted: (e) => log.push(`start ${e.step.id} @${e.index}`),
          stepFinished: (e) => log.push(`finish ${e.result.uuid} ${e.result.result}`),
        },
      },
    );
    assert.deepEqual(log, [
      'run 1',
      'start first @0',
      'finish first pass',
      'start cond @1',
      'finish cond pass',
      'start inner @1',
      'finish inner pass',
      'start inner-pause @1',
      'finish inner-pause pass',
      'start pause @2',
      'finish pause pass',
    ]);
  });

  test('a retried run announces its second attempt', async () => {
    const attempts: number[] = [];
    let calls = 0;
    const http = fakeHttp(() => response(++calls === 1 ? 500 : 200));
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(
      definition(
        steps(
          get('s', 'http://api.test/', {
            assertions: [{ source: 'response_status', comparison: 'equal', value: 200 }],
          }),
        ),
        {
          settings: { retry_on_failure: true },
        },
      ),
      { events: { runStarted: (e) => attempts.push(e.attempt) } },
    );
    assert.deepEqual(attempts, [1, 2]);
    assert.equal(outcome.result, 'pass');
    assert.equal(outcome.previous_attempt?.result, 'fail');
    assert.equal(outcome.previous_attempt?.requests[0]?.response_status_code, 500);
    assert.equal(http.sent.length, 2);
  });

  test('a run that passes first time is not retried', async () => {
    const http = fakeHttp();
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(definition(steps(get('s')), { settings: { retry_on_failure: true } }));
    assert.equal(outcome.result, 'pass');
    assert.equal(outcome.previous_attempt, undefined);
    assert.equal(http.sent.length, 1);
  });
});

describe('cancel and time limit', () => {
  test('a cancel during a pause ends the run canceled at once; later steps do not run', async () => {
    const http = fakeHttp();
    const blocking = blockingSleep();
    const engine = engineWith({ openSession: http.openSession, sleep: blocking.sleep });
    const controller = new AbortController();
    const running = engine.run(
      definition(steps({ id: 'wait', step_type: 'pause', duration: 180 }, get('after'))),
      { signal: controller.signal },
    );
    await blocking.waiting;
    controller.abort();
    const outcome = await running;
    assert.equal(outcome.result, 'canceled');
    assert.equal(outcome.error, 'the run was canceled');
    assert.deepEqual(
      outcome.requests.map((r) => [r.uuid, r.result]),
      [['wait', 'fail']],
    );
    assert.equal(outcome.requests[0]?.error, 'the run stopped during the pause');
    assert.equal(http.sent.length, 0);
    assert.equal(http.closed(), 1);
  });

  test('the real sleep stops waiting when the run is canceled', async () => {
    const engine = engineWith({ sleep: undefined });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    const outcome = await engine.run(definition(steps({ id: 'wait', step_type: 'pause', duration: 180 })), {
      signal: controller.signal,
    });
    assert.equal(outcome.result, 'canceled');
    assert.ok(Date.now() - started < 5_000);
  });

  test('a run canceled before it starts runs no step', async () => {
    const http = fakeHttp();
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(definition(steps(get('a'))), { signal: AbortSignal.abort() });
    assert.equal(outcome.result, 'canceled');
    assert.deepEqual(outcome.requests, []);
    assert.equal(http.sent.length, 0);
  });

  test('a cancel during a request ends the run canceled, not failed', async () => {
    const http = fakeHttp(hangingRequest);
    const engine = engineWith({ openSession: http.openSession });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    const outcome = await engine.run(definition(steps(get('slow'))), { signal: controller.signal });
    assert.equal(outcome.result, 'canceled');
    assert.equal(outcome.error, 'the run was canceled');
  });

  test('the run time limit fails the run with the limit in its error', async () => {
    const blocking = blockingSleep();
    const http = fakeHttp();
    const engine = engineWith({
      openSession: http.openSession,
      sleep: blocking.sleep,
      limits: { runTimeoutMs: 30 },
    });
    const outcome = await engine.run(
      definition(steps(get('before'), { id: 'wait', step_type: 'pause', duration: 60 }, get('after'))),
    );
    assert.equal(outcome.result, 'fail');
    assert.equal(outcome.error, 'the run exceeded its time limit of 0.03 s');
    assert.deepEqual(
      outcome.requests.map((r) => [r.uuid, r.result]),
      [
        ['before', 'pass'],
        ['wait', 'fail'],
      ],
    );
    assert.equal(http.sent.length, 1);
  });

  test('the run time limit also stops a request that hangs, as the last step', async () => {
    const http = fakeHttp(hangingRequest);
    const engine = engineWith({ openSession: http.openSession, limits: { runTimeoutMs: 30 } });
    const outcome = await engine.run(definition(steps(get('hangs'))));
    assert.equal(outcome.result, 'fail');
    assert.equal(outcome.error, 'the run exceeded its time limit of 0.03 s');
    assert.equal(outcome.requests[0]?.error, 'the request was aborted');
  });
});

describe('counters', () => {
  test('requests, assertions, scripts and variables are counted by outcome', async () => {
    const http = fakeHttp((request) =>
      request.url.endsWith('/bad') ? response(500, { id: 1 }) : response(200, { id: 7, name: 'x' }),
    );
    const scripts = fakeScripts();
    const engine = engineWith({ openSession: http.openSession, scripts });
    const outcome = await engine.run(
      definition(
        steps(
          get('one', 'http://api.test/ok', {
            assertions: [
              { source: 'response_status', comparison: 'equal', value: 200 },
              { source: 'response_json', property: 'id', comparison: 'equal', value: 8 },
            ],
            variables: [
              { name: 'id', source: 'response_json', property: 'id' },
              { name: 'missing', source: 'response_json', property: 'nope' },
            ],
            before_scripts: ['pass'],
            scripts: ['pass', 'fail', 'pass'],
          }),
          get('two', 'http://api.test/bad', {
            assertions: [{ source: 'response_status', comparison: 'is_less_than', value: 400 }],
          }),
          get('skipped', 'http://api.test/ok', {
            skipped: true,
            assertions: [{ source: 'response_status', comparison: 'equal', value: 200 }],
          }),
          get('broken', 'http://api.test/{{undefined_variable}}'),
          { id: 'wait', step_type: 'pause', duration: 1 },
        ),
      ),
    );
    assert.equal(outcome.result, 'fail');
    assert.deepEqual(
      {
        requests_executed: outcome.requests_executed,
        assertions_defined: outcome.assertions_defined,
        assertions_passed: outcome.assertions_passed,
        assertions_failed: outcome.assertions_failed,
        scripts_defined: outcome.scripts_defined,
        scripts_passed: outcome.scripts_passed,
        scripts_failed: outcome.scripts_failed,
        variables_defined: outcome.variables_defined,
        variables_passed: outcome.variables_passed,
        variables_failed: outcome.variables_failed,
      },
      {
        requests_executed: 2,
        assertions_defined: 3,
        assertions_passed: 1,
        assertions_failed: 2,
        // The script after the failing one does not run.
        scripts_defined: 3,
        scripts_passed: 2,
        scripts_failed: 1,
        variables_defined: 2,
        variables_passed: 1,
        variables_failed: 1,
      },
    );
    assert.deepEqual(
      outcome.requests.map((r) => [r.uuid, r.result]),
      [
        ['one', 'fail'],
        ['two', 'fail'],
        ['skipped', 'skipped'],
        ['broken', 'fail'],
        ['wait', 'pass'],
      ],
    );
    assert.deepEqual(
      scripts.jobs.map((job) => [job.code, job.requestWritable === true, job.response?.status ?? null]),
      [
        ['pass', true, null],
        ['pass', false, 200],
        ['fail', false, 200],
      ],
    );
    assert.equal(outcome.requests[0]?.response_time_ms, 12.346);
  });
});

describe('variables', () => {
  test('precedence: environment < trigger < context variables < environment script', async () => {
    const http = fakeHttp();
    const scripts = fakeScripts();
    const engine = engineWith({ openSession: http.openSession, scripts });
    const outcome = await engine.run(
      definition(steps(get('s', 'http://api.test/{{a}}/{{b}}/{{c}}/{{vigil_region}}')), {
        settings: {
          initial_variables: { a: 'env-a', b: 'env-b', c: 'env-c', vigil_region: 'env-region' },
          script: 'set c=script-c, from_script=yes',
        },
        variables: { b: 'trigger-b', c: 'trigger-c', vigil_region: 'trigger-region' },
      }),
    );
    assert.equal(outcome.result, 'pass');
    assert.deepEqual(scripts.jobs[0]?.variables, {
      a: 'env-a',
      b: 'trigger-b',
      c: 'trigger-c',
      vigil_region: 'eu-west',
      vigil_bucket: 'bucket',
      vigil_bucket_name: 'Bucket',
      vigil_test_uuid: 'test-1',
      vigil_test_name: 'Engine test',
      vigil_environment: 'Env',
      vigil_environment_uuid: 'env-1',
      vigil_agent: '',
    });
    assert.equal(outcome.initial_variables.c, 'script-c');
    assert.equal(outcome.initial_variables.from_script, 'yes');
    assert.deepEqual(outcome.environment_script, {
      result: 'pass',
      output: 'ran set c=script-c, from_script=yes',
      error: null,
    });
    assert.equal(http.sent[0]?.url, 'http://api.test/env-a/trigger-b/script-c/eu-west');
  });

  test('a failing environment script fails the run before any step', async () => {
    const http = fakeHttp();
    const engine = engineWith({ openSession: http.openSession, scripts: fakeScripts() });
    const outcome = await engine.run(definition(steps(get('s')), { settings: { script: 'fail' } }));
    assert.equal(outcome.result, 'fail');
    assert.equal(outcome.error, 'the environment script failed: AssertionError: expected 1 to equal 2');
    assert.deepEqual(outcome.requests, []);
    assert.equal(http.sent.length, 0);
  });

  test('a variable extracted by one step is used by the next; its result is recorded', async () => {
    const http = fakeHttp((request) => response(200, { token: `t-${request.url.split('/').pop()}` }));
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(
      definition(
        steps(
          get('login', 'http://api.test/1', {
            variables: [{ name: 'token', source: 'response_json', property: 'token' }],
          }),
          get('use', 'http://api.test/{{token}}'),
        ),
      ),
    );
    assert.equal(http.sent[1]?.url, 'http://api.test/t-1');
    assert.equal(outcome.variables.token, 't-1');
    assert.deepEqual(outcome.requests[0]?.variables, [
      {
        result: 'pass',
        source: 'response_json',
        property: 'token',
        name: 'token',
        value: 't-1',
        error: null,
      },
    ]);
  });
});

describe('unexpected errors', () => {
  test('a session that throws a non-HTTP error fails that step; the run goes on', async () => {
    const http = fakeHttp((request) => {
      if (request.url.endsWith('/explodes')) throw new TypeError('cannot read properties of undefined');
      return response(200);
    });
    const events: string[] = [];
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(
      definition(steps(get('boom', 'http://api.test/explodes'), get('next'))),
      {
        events: { stepFinished: (e) => events.push(`${e.result.uuid} ${e.result.result}`) },
      },
    );
    assert.equal(outcome.result, 'fail');
    assert.equal(outcome.error, null);
    assert.equal(outcome.requests[0]?.result, 'fail');
    assert.equal(outcome.requests[0]?.error, 'the step could not run: cannot read properties of undefined');
    assert.equal(outcome.requests[1]?.result, 'pass');
    assert.deepEqual(events, ['boom fail', 'next pass']);
  });

  test('an HTTP failure keeps its message and the timings measured so far', async () => {
    const timings = { ...ZERO_TIMINGS, dns_lookup_ms: 1.5, dial_ms: 3 };
    const http = fakeHttp(() => {
      throw new HttpFailure('connect', 'the connection to api.test:80 was refused', timings);
    });
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(definition(steps(get('refused'))));
    assert.equal(outcome.result, 'fail');
    const step = outcome.requests[0];
    assert.equal(step?.error, 'the connection to api.test:80 was refused');
    assert.deepEqual(step?.timings, timings);
    assert.equal(step?.response, null);
    assert.notEqual(step?.request, null);
  });

  test('a script runner that rejects during a step fails that step', async () => {
    const http = fakeHttp();
    const engine = engineWith({ openSession: http.openSession, scripts: fakeScripts() });
    const outcome = await engine.run(
      definition(steps(get('s', 'http://api.test/', { before_scripts: ['throw'] }), get('next'))),
    );
    assert.equal(outcome.result, 'fail');
    assert.equal(
      outcome.requests[0]?.error,
      'the step could not run: the script sandbox threads fail to start',
    );
    assert.equal(outcome.requests[1]?.result, 'pass');
    assert.equal(http.sent.length, 1);
  });

  test('a script runner that rejects during the environment script fails the run instead of crashing it', async () => {
    const http = fakeHttp();
    const engine = engineWith({ openSession: http.openSession, scripts: fakeScripts() });
    let outcome: RunOutcome;
    try {
      outcome = await engine.run(definition(steps(get('s')), { settings: { script: 'throw' } }));
    } catch (error) {
      assert.fail(`engine.run rejected instead of failing the run: ${String(error)}`);
    }
    assert.equal(outcome.result, 'fail');
    assert.match(outcome.error ?? '', /the script sandbox threads fail to start/);
    assert.equal(http.sent.length, 0);
    assert.equal(http.closed(), 1);
  });
});

describe('subtests', () => {
  test('nesting deeper than the limit fails the deepest subtest step', async () => {
    const resolved: string[] = [];
    const recorded: RunOutcome[] = [];
    let depth = 0;
    const subtests: SubtestPort = {
      async resolve(step) {
        resolved.push(step.test_uuid);
        depth++;
        return definition(steps({ id: `sub-${depth}`, step_type: 'subtest', test_uuid: `t-${depth}` }), {
          testId: step.test_uuid,
        });
      },
      async record(child, outcome) {
        recorded.push(outcome);
        return `run-${child.test.id}`;
      },
    };
    const engine = engineWith({ subtests, limits: { maxSubtestDepth: 3 } });
    const outcome = await engine.run(
      definition(steps({ id: 'sub-0', step_type: 'subtest', test_uuid: 't-0' })),
    );
    assert.equal(outcome.result, 'fail');
    assert.deepEqual(resolved, ['t-0', 't-1', 't-2']);
    assert.equal(outcome.requests[0]?.error, 'the run it started failed');
    assert.equal(outcome.requests[0]?.subtest_run_id, 'run-t-0');
    // Children finish innermost first; the deepest one could not start its own subtest.
    assert.equal(recorded[0]?.requests[0]?.error, 'subtests nest deeper than 3 levels');
  });

  test('without a subtest port a subtest step fails saying so', async () => {
    const engine = engineWith();
    const outcome = await engine.run(
      definition(steps({ id: 'sub', step_type: 'subtest', test_uuid: 't-x' })),
    );
    assert.equal(outcome.requests[0]?.error, 'subtests cannot run here');
  });
});

describe('stop on failure', () => {
  test('a failing embedded step of a condition ends the run', async () => {
    const http = fakeHttp((request) => response(request.url.endsWith('/bad') ? 500 : 200));
    const engine = engineWith({ openSession: http.openSession });
    const outcome = await engine.run(
      definition(
        steps(
          {
            id: 'cond',
            step_type: 'condition',
            left_value: '1',
            comparison: 'equal_number',
            right_value: '1.0',
            steps: [
              get('bad', 'http://api.test/bad', {
                assertions: [{ source: 'response_status', comparison: 'equal', value: 200 }],
              }),
              get('inner-after'),
            ],
          },
          get('outer-after'),
        ),
        { settings: { stop_on_failure: true } },
      ),
    );
    assert.equal(outcome.result, 'fail');
    assert.deepEqual(
      outcome.requests.map((r) => r.uuid),
      ['cond', 'bad'],
    );
    assert.equal(http.sent.length, 1);
  });
});

describe('checks that could take long', () => {
  /** About 18 KB of XML and an XPath quadratic in it: seconds of work without a time limit. */
  const xml = `<r>${'<a/>'.repeat(4_500)}</r>`;
  const hostile = 'count(//a[count(//a) > 0])';
  const xmlAnswer = () => response(200, xml, { 'content-type': ['application/xml'] });

  test('XPath runs off the event loop: timers fire while a hostile XPath runs, and the step fails at the limit', async () => {
    const http = fakeHttp(xmlAnswer);
    // The limit leaves the cheap XPath variable time even on a busy machine with a cold thread.
    const engine = engineWith({ openSession: http.openSession, limits: { checkTimeMs: 1000 } });
    let ticks = 0;
    let ticksWhenFinished = -1;
    const timer = setInterval(() => ticks++, 5);
    const outcome = await engine.run(
      definition(
        steps(
          get('a', 'http://api.test/xml', {
            variables: [{ name: 'count', source: 'response_xml', property: 'count(//a)' }],
            assertions: [
              { source: 'response_xml', property: hostile, comparison: 'equal_number', value: 4500 },
              { source: 'response_status', comparison: 'equal_number', value: 200 },
            ],
          }),
          get('b', 'http://api.test/next?count={{count}}'),
        ),
      ),
      {
        events: {
          stepFinished: ({ result }) => {
            if (result.uuid === 'a') ticksWhenFinished = ticks;
          },
        },
      },
    );
    clearInterval(timer);
    assert.ok(ticksWhenFinished > 0, 'the event loop turned while the XPath ran');
    const [first, second] = outcome.requests;
    assert.equal(first?.result, 'fail');
    assert.equal(first?.error, 'xpath: took longer than 1 s');
    assert.deepEqual(
      first?.variables.map((v) => [v.result, v.value]),
      [['pass', '4500']],
    );
    assert.deepEqual(
      first?.assertions.map((a) => [a.result, a.error]),
      [
        ['fail', 'xpath: took longer than 1 s'],
        ['fail', 'not evaluated (xpath: took longer than 1 s)'],
      ],
    );
    // The run goes on, with the variable extracted before the limit.
    assert.equal(second?.result, 'pass');
    assert.equal(http.sent[1]?.url, 'http://api.test/next?count=4500');
  });

  test('after a limit is reached in the variables, the assertions after the scripts are not evaluated', async () => {
    const scripts = fakeScripts();
    const http = fakeHttp(xmlAnswer);
    const engine = engineWith({ openSession: http.openSession, scripts, limits: { checkTimeMs: 200 } });
    const outcome = await engine.run(
      definition(
        steps(
          get('a', 'http://api.test/xml', {
            variables: [{ name: 'slow', source: 'response_xml', property: hostile }],
            scripts: ['pass'],
            assertions: [
              { source: 'response_xml', property: 'count(//a)', comparison: 'equal_number', value: 4500 },
            ],
          }),
        ),
      ),
    );
    const [step] = outcome.requests;
    assert.equal(step?.error, 'xpath: took longer than 200 ms');
    assert.equal(step?.variables[0]?.error, 'xpath: took longer than 200 ms');
    assert.equal(scripts.jobs.length, 1, 'the post-response script still runs');
    assert.equal(step?.assertions[0]?.error, 'not evaluated (xpath: took longer than 200 ms)');
  });

  test('XPath checks in a thread give the same results as inline ones, before and after scripts', async () => {
    const scripts = fakeScripts();
    const http = fakeHttp(() =>
      response(200, '<order id="17"><item>a</item><item>b</item></order>', {
        'content-type': ['application/xml'],
      }),
    );
    const engine = engineWith({ openSession: http.openSession, scripts });
    const outcome = await engine.run(
      definition(
        steps(
          get('a', 'http://api.test/xml', {
            variables: [
              { name: 'id', source: 'response_xml', property: 'string(/order/@id)' },
              { name: 'second', source: 'response_xml', property: '/order/item[{{id}} - 15]' },
            ],
            scripts: ['set from_script=b'],
            assertions: [
              { source: 'response_xml', property: 'count(//item)', comparison: 'equal_number', value: 2 },
              {
                source: 'response_xml',
                property: '//item[2]',
                comparison: 'equal',
                value: '{{from_script}}',
              },
            ],
          }),
        ),
      ),
    );
    const [step] = outcome.requests;
    assert.equal(step?.result, 'pass', JSON.stringify(step));
    assert.deepEqual(outcome.variables.second, 'b');
    assert.deepEqual(
      step?.assertions.map((a) => [a.result, a.actual_value]),
      [
        ['pass', 2],
        ['pass', 'b'],
      ],
    );
  });
});

describe('template bounds', () => {
  test('the fields of one step share one template budget; the next step gets a new one', async () => {
    const http = fakeHttp();
    const engine = engineWith({ openSession: http.openSession });
    const half = '{{uuid}}'.repeat(500);
    const outcome = await engine.run(
      definition(
        steps(
          get('a', `http://api.test/a?x=${half}`, { body: half }),
          get('b', `http://api.test/b?x=${half}`, { body: `${half}{{uuid}}` }),
        ),
      ),
    );
    const [first, second] = outcome.requests;
    assert.equal(first?.result, 'pass', first?.error ?? '');
    assert.equal(second?.result, 'fail');
    assert.equal(second?.error, 'body: templates call functions more than 1000 times');
    assert.equal(http.sent.length, 1);
  });
});
