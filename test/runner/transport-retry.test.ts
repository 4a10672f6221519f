import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { after, describe, test } from 'node:test';
import { DEFAULT_SETTINGS, type EnvironmentSettings } from '../../src/domain/environments.js';
import { ZERO_TIMINGS } from '../../src/domain/results.js';
import { normalizeStep, type Step, type StepInput } from '../../src/domain/steps.js';
import {
  HttpFailure,
  type HttpFailureKind,
  type HttpSession,
  type InboundResponse,
  isTransportFailure,
} from '../../src/net/client.js';
import { createEngine, type EngineOptions, type RunDefinition } from '../../src/runner/engine.js';

function response(status: number): InboundResponse {
  return {
    status,
    reason: 'OK',
    headers: {},
    body: Buffer.from('{}'),
    truncated: false,
    sizeBytes: 2,
    timeMs: 5,
    timings: { ...ZERO_TIMINGS, wait_for_response_ms: 4 },
    remoteAddress: '192.0.2.1',
    url: 'http://api.test/',
    redirects: 0,
  };
}

/** A session that plays `answers` in order, one per send: a status, or a failure to throw. */
function scripted(answers: (number | HttpFailure)[]) {
  let sends = 0;
  const session: HttpSession = {
    async send() {
      const answer = answers[Math.min(sends++, answers.length - 1)]!;
      if (answer instanceof HttpFailure) throw answer;
      return response(answer);
    },
    async close() {},
  };
  return { openSession: () => session, sends: () => sends };
}

function definition(step: StepInput, settings: Partial<EnvironmentSettings>): RunDefinition {
  const stepList: Step[] = [normalizeStep(step, () => 'step-1')];
  return {
    test: { id: 'test-1', name: 'Retry test', steps: stepList },
    environment: { id: 'env-1', name: 'Env', settings: { ...DEFAULT_SETTINGS, ...settings } },
    bucket: { key: 'bucket', name: 'Bucket', verify_ssl: true },
    region: 'eu-west',
    agent: null,
    variables: {},
  };
}

const statusIs200: StepInput = {
  id: 'step-1',
  step_type: 'request',
  method: 'GET',
  url: 'http://api.test/x',
  assertions: [{ source: 'response_status', comparison: 'equal', value: 200 }],
};

function engineWith(overrides: Partial<EngineOptions>) {
  let now = 1_700_000_000_000;
  return createEngine({
    scripts: { run: () => Promise.reject(new Error('no script should run')) },
    egress: 'allow-all',
    clock: { now: () => now++ },
    sleep: async () => undefined,
    ...overrides,
  });
}

const refused = () => new HttpFailure('connect', 'connection refused by 127.0.0.1:1');

describe('transport failure classification', () => {
  const cases: [HttpFailureKind, boolean][] = [
    ['dns', true],
    ['connect', true],
    ['tls', true],
    ['timeout', true],
    ['protocol', true],
    ['invalid_url', false],
    ['invalid_request', false],
    ['egress_refused', false],
    ['aborted', false],
  ];
  for (const [kind, retried] of cases) {
    test(`${kind} before any answer ${retried ? 'is' : 'is not'} a transport failure`, () => {
      assert.equal(isTransportFailure(new HttpFailure(kind, kind)), retried);
    });
  }

  test('a failure after the status line arrived is never a transport failure', () => {
    for (const kind of ['timeout', 'protocol'] as const) {
      assert.equal(isTransportFailure(new HttpFailure(kind, kind, undefined, undefined, true)), false);
    }
  });
});

describe('retry_transport_errors', () => {
  test('without the policy a transport error fails the step after one send, with no attempts list', async () => {
    const http = scripted([refused(), 200]);
    const outcome = await engineWith({ openSession: http.openSession }).run(definition(statusIs200, {}));
    assert.equal(outcome.result, 'fail');
    assert.equal(http.sends(), 1);
    assert.equal(outcome.requests[0]?.attempts, undefined);
  });

  test('a step is sent again after transport errors and every attempt is kept, the last one described by the step', async () => {
    const http = scripted([refused(), new HttpFailure('timeout', 'no response within 10 ms'), 200]);
    const waits: number[] = [];
    const outcome = await engineWith({
      openSession: http.openSession,
      sleep: async (ms) => {
        waits.push(ms);
      },
    }).run(definition(statusIs200, { retry_transport_errors: { attempts: 3, backoff_ms: 250 } }));
    assert.equal(outcome.result, 'pass');
    assert.equal(http.sends(), 3);
    assert.deepEqual(waits, [250, 250]);
    const step = outcome.requests[0]!;
    assert.equal(outcome.requests.length, 1, 'the step is reported once');
    assert.deepEqual(
      step.attempts?.map((a) => [a.error, a.response_status_code]),
      [
        ['connection refused by 127.0.0.1:1', null],
        ['no response within 10 ms', null],
        [null, 200],
      ],
    );
    for (const attempt of step.attempts ?? []) assert.ok(attempt.finished_at >= attempt.started_at);
    assert.equal(step.response_status_code, 200);
    assert.equal(step.error, null);
  });

  test('the sends stop after `attempts` resends; the step carries the last error', async () => {
    const http = scripted([refused()]);
    const outcome = await engineWith({ openSession: http.openSession }).run(
      definition(statusIs200, { retry_transport_errors: { attempts: 2, backoff_ms: 0 } }),
    );
    assert.equal(outcome.result, 'fail');
    assert.equal(http.sends(), 3);
    assert.equal(outcome.requests[0]?.attempts?.length, 3);
    assert.equal(outcome.requests[0]?.error, 'connection refused by 127.0.0.1:1');
  });

  test('a step that got an HTTP answer is never sent again, whatever its assertions say', async () => {
    const http = scripted([500, 200]);
    const outcome = await engineWith({ openSession: http.openSession }).run(
      definition(statusIs200, { retry_transport_errors: { attempts: 5, backoff_ms: 0 } }),
    );
    assert.equal(outcome.result, 'fail');
    assert.equal(http.sends(), 1);
    assert.deepEqual(
      outcome.requests[0]?.attempts?.map((a) => a.response_status_code),
      [500],
    );
  });

  test('a body cut short after the status line is not sent again', async () => {
    const cut = new HttpFailure('protocol', 'the body ended early', undefined, undefined, true);
    const http = scripted([cut, 200]);
    const outcome = await engineWith({ openSession: http.openSession }).run(
      definition(statusIs200, { retry_transport_errors: { attempts: 5, backoff_ms: 0 } }),
    );
    assert.equal(outcome.result, 'fail');
    assert.equal(http.sends(), 1);
  });

  test('retry_on_failure still reruns the whole run, each run resending on its own', async () => {
    const http = scripted([refused(), refused(), refused(), 200]);
    const outcome = await engineWith({ openSession: http.openSession }).run(
      definition(statusIs200, {
        retry_on_failure: true,
        retry_transport_errors: { attempts: 1, backoff_ms: 0 },
      }),
    );
    assert.equal(outcome.result, 'pass');
    assert.equal(http.sends(), 4);
    assert.equal(outcome.previous_attempt?.requests[0]?.attempts?.length, 2);
    assert.equal(outcome.requests[0]?.attempts?.length, 2);
  });

  test('a cancel during the backoff ends the run canceled without another send', async () => {
    const http = scripted([refused(), 200]);
    const controller = new AbortController();
    const outcome = await engineWith({
      openSession: http.openSession,
      sleep: (_ms, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          controller.abort();
        }),
    }).run(definition(statusIs200, { retry_transport_errors: { attempts: 3, backoff_ms: 60_000 } }), {
      signal: controller.signal,
    });
    assert.equal(outcome.result, 'canceled');
    assert.equal(http.sends(), 1);
    assert.equal(outcome.requests[0]?.attempts?.length, 1);
  });
});

describe('retry_transport_errors over real sockets', () => {
  const servers: net.Server[] = [];
  after(() => {
    for (const server of servers) server.close();
  });

  test('an upstream that resets the first connection and then answers: the step passes on its second attempt', async () => {
    let connections = 0;
    const upstream = http.createServer((_req, res) => res.end('{"ok":true}'));
    upstream.on('connection', (socket: net.Socket) => {
      if (++connections === 1) socket.resetAndDestroy();
    });
    servers.push(upstream);
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as net.AddressInfo;
    const engine = createEngine({
      scripts: { run: () => Promise.reject(new Error('no script should run')) },
      egress: 'allow-all',
    });
    const outcome = await engine.run(
      definition(
        { ...statusIs200, url: `http://127.0.0.1:${port}/` },
        { retry_transport_errors: { attempts: 2, backoff_ms: 10 } },
      ),
    );
    upstream.closeAllConnections();
    assert.equal(outcome.result, 'pass', JSON.stringify(outcome.requests[0]));
    const attempts = outcome.requests[0]?.attempts ?? [];
    assert.equal(attempts.length, 2);
    assert.notEqual(attempts[0]?.error, null);
    assert.equal(attempts[1]?.response_status_code, 200);
  });
});
