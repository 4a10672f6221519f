import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assert as chaiAssert } from 'chai';
import { RETIRE_GROWN_BYTES, ScriptEngine } from '../../src/runner/sandbox/engine.js';
import {
  DEFAULT_SCRIPT_LIMITS,
  type SandboxOptions,
  type ScriptJob,
  type ScriptOutcome,
  type ScriptRequest,
  type ScriptResponse,
  ScriptSandbox,
} from '../../src/runner/sandbox/sandbox.js';

const REQUEST: ScriptRequest = {
  method: 'POST',
  url: 'https://api.example.test/items?page=2',
  host: 'api.example.test',
  path: '/items',
  scheme: 'https',
  params: { page: ['2'] },
  headers: { Accept: ['application/json'] },
  body: '{"name":"a"}',
  form: {},
};

const RESPONSE: ScriptResponse = {
  status: 201,
  reason: 'Created',
  headers: { 'Content-Type': ['application/json'] },
  body: '{"ok":true,"id":42,"tags":["x","y"]}',
  response_time_ms: 12.5,
  size_bytes: 36,
};

/** Allocates 1 MiB at a time until the memory limit stops it; `mib` counts what it got. */
const BOMB = `for (let a = [], i = 1; ; i++) { a.push(new Uint8Array(1 << 20)); variables.set('mib', String(i)); }`;

let sandbox: ScriptSandbox;

before(() => {
  sandbox = ScriptSandbox.start({ threads: 2 });
});

after(async () => {
  await sandbox.close();
});

/** Runs `use` with a sandbox of its own, closed afterwards. */
async function withSandbox(
  options: SandboxOptions,
  use: (sandbox: ScriptSandbox) => Promise<void>,
): Promise<void> {
  const sandbox = ScriptSandbox.start(options);
  try {
    await use(sandbox);
  } finally {
    await sandbox.close();
  }
}

function run(code: string, job: Partial<ScriptJob> = {}): Promise<ScriptOutcome> {
  return sandbox.run({ code, variables: {}, ...job });
}

describe('script globals', () => {
  test('request, response and variables are readable', async () => {
    const outcome = await run(
      `log(request.method, request.host, request.headers.Accept[0]);
       log(response.status, response.reason, response.headers['Content-Type'][0], response.size_bytes);
       log(variables.get('token'), variables.get('missing'));`,
      { variables: { token: 'abc' }, request: REQUEST, response: RESPONSE },
    );
    assert.equal(outcome.error, null);
    assert.equal(outcome.ok, true);
    assert.equal(
      outcome.output,
      'POST api.example.test application/json\n201 Created application/json 36\nabc undefined',
    );
    assert.equal(outcome.request, undefined, 'a read-only request is not handed back');
  });

  test('a post-response script reads JSON and sets variables', async () => {
    const outcome = await run(
      `const b = JSON.parse(response.body); assert.equal(b.ok, true); variables.set('id', b.id);
       variables.set('tags', b.tags.length);`,
      { variables: { keep: 'me' }, request: REQUEST, response: RESPONSE },
    );
    assert.equal(outcome.ok, true);
    assert.deepEqual(outcome.variables, { keep: 'me', id: '42', tags: '2' });
  });

  test('a pre-request script changes headers, url and body and gets the request back', async () => {
    const outcome = await run(
      `request.headers['X-Signature'] = 'sig-' + variables.get('key');
       request.headers.Accept.push('text/plain');
       request.url = request.url.replace('page=2', 'page=3');
       request.params.page = ['3'];
       request.body = JSON.stringify({ name: 'b' });
       request.method = 'PUT';`,
      { variables: { key: 'k1' }, request: REQUEST, requestWritable: true },
    );
    assert.equal(outcome.error, null);
    assert.deepEqual(outcome.request, {
      ...REQUEST,
      method: 'PUT',
      url: 'https://api.example.test/items?page=3',
      params: { page: ['3'] },
      headers: { Accept: ['application/json', 'text/plain'], 'X-Signature': ['sig-k1'] },
      body: '{"name":"b"}',
    });
    assert.deepEqual(REQUEST.headers, { Accept: ['application/json'] }, 'the caller’s request is untouched');
  });

  test('what a script hands back as the request is coerced to strings', async () => {
    const outcome = await run(
      `request.headers['X-Count'] = 3; request.headers['X-Flags'] = [true, 'b']; request.body = { a: 1 };`,
      { request: REQUEST, requestWritable: true },
    );
    assert.equal(outcome.ok, true);
    assert.deepEqual(outcome.request?.headers['X-Count'], ['3']);
    assert.deepEqual(outcome.request?.headers['X-Flags'], ['true', 'b']);
    assert.equal(outcome.request?.body, '{"a":1}');

    const broken = await run(`request.headers = 'nope';`, { request: REQUEST, requestWritable: true });
    assert.equal(broken.ok, false);
    assert.match(broken.error ?? '', /request\.headers must be an object/);
  });

  test('response and a read-only request cannot be changed', async () => {
    const outcome = await run(`response.status = 500;`, { request: REQUEST, response: RESPONSE });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /^TypeError: .*read-only|^TypeError: .*read only/);
    const request = await run(`request.headers.Accept.push('x');`, { request: REQUEST });
    assert.equal(request.ok, false);
  });

  test('variables.set coerces values to strings', async () => {
    const outcome = await run(
      `variables.set('n', 1.5); variables.set('b', false); variables.set('o', { a: 1 }); variables.set('u', undefined);`,
    );
    assert.deepEqual(outcome.variables, { n: '1.5', b: 'false', o: '[object Object]', u: 'undefined' });
  });

  test('log prints strings as they are and other values as JSON, one line per call', async () => {
    const outcome = await run(
      `log('a', 1, true, null, { x: [1, 2] }, ['s']); log(undefined); log(new Error('boom'));
       const cyclic = {}; cyclic.self = cyclic; log(cyclic); log(10n);`,
    );
    assert.equal(
      outcome.output,
      'a 1 true null {"x":[1,2]} ["s"]\nundefined\nError: boom\n[object Object]\n10',
    );
  });

  test('log output beyond the limit is cut with a note', async () => {
    const outcome = await run(`for (let i = 0; i < 1000; i++) log('line ' + i + ' ' + 'é'.repeat(20));`, {
      limits: { outputBytes: 200 },
    });
    assert.equal(outcome.ok, true);
    const lines = outcome.output.split('\n');
    assert.equal(lines.at(-1), '… output cut at 200 bytes');
    assert.ok(Buffer.byteLength(lines.slice(0, -1).join('\n')) <= 200);
  });

  test('encode_base64 and decode_base64 use UTF-8', async () => {
    const outcome = await run(
      `log(encode_base64('user:pässwörd'), encode_base64('🙂'), encode_base64(''));
       log(decode_base64('${Buffer.from('héllo wörld 🙂').toString('base64')}'));
       log(decode_base64(encode_base64('round trip ✓')));`,
    );
    assert.equal(outcome.error, null);
    assert.equal(
      outcome.output,
      `${Buffer.from('user:pässwörd').toString('base64')} ${Buffer.from('🙂').toString('base64')} \n` +
        'héllo wörld 🙂\nround trip ✓',
    );
    const bad = await run(`decode_base64('not*base64')`);
    assert.equal(bad.ok, false);
    assert.match(bad.error ?? '', /not valid base64/);
  });

  test('assert is Chai’s assert interface', async () => {
    const outcome = await run(
      `assert.deepEqual({ a: [1, 2] }, { a: [1, 2] }); assert.isString('s'); assert.include('abc', 'b');
       assert.lengthOf([1, 2, 3], 3); assert.throws(() => { throw new TypeError('x'); }, TypeError);
       assert.match('abc', /b/); assert.isAbove(5, 2); log('passed');`,
    );
    assert.equal(outcome.error, null);
    assert.equal(outcome.output, 'passed');
  });

  test('Error subclasses and overriding inherited names still work', async () => {
    const outcome = await run(
      `class MyError extends Error { constructor(m) { super(m); this.name = 'MyError'; } }
       const o = {}; o.toString = () => 'custom'; log(String(o));
       throw new MyError('mine');`,
    );
    assert.equal(outcome.output, 'custom');
    assert.match(outcome.error ?? '', /^MyError: mine/);
  });
});

describe('script failures', () => {
  test('a failing assert fails with Chai’s message and keeps output and variables', async () => {
    const outcome = await run(
      `log('before'); variables.set('seen', 'yes'); assert.equal(2, 3); log('after');`,
      {
        variables: { a: '1' },
      },
    );
    assert.equal(outcome.ok, false);
    assert.equal(outcome.error, 'expected 2 to equal 3');
    assert.equal(outcome.output, 'before');
    assert.deepEqual(outcome.variables, { a: '1', seen: 'yes' });

    const custom = await run(`assert.isTrue(false, 'flag should be set')`);
    assert.equal(custom.error, 'flag should be set: expected false to be true');
  });

  test('a thrown error fails the script with its message and line', async () => {
    const outcome = await run(`const x = 1;\nnull.foo;`);
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /^TypeError: cannot read property 'foo' of null \(line 2/);
    const value = await run(`throw 'plain'`);
    assert.equal(value.error, 'uncaught exception: plain');
  });

  test('a syntax error says so, with its line', async () => {
    const outcome = await run(`const a = 1;\nconst b = ;\n`);
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /^syntax error: .* \(line 2, column \d+\)$/);
  });
});

for (const inline of [true, false]) {
  describe(`hostile scripts (${inline ? 'calling thread first' : 'threads only'})`, () => {
    let hostile: ScriptSandbox;
    before(() => {
      hostile = ScriptSandbox.start({ threads: 2, inline });
    });
    after(async () => {
      await hostile.close();
    });
    const run = (code: string, job: Partial<ScriptJob> = {}): Promise<ScriptOutcome> =>
      hostile.run({ code, variables: {}, ...job });

    test('an endless loop stops at the time limit and the host stays responsive', async () => {
      // The host's event loop goes on turning while the script spins: a timer keeps firing. (How
      // often depends on the machine; that it fires at all while a script that never yields runs
      // does not.)
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const outcome = await run('while (true) {}');
      clearInterval(ticker);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error, 'script exceeded its 1000 ms time limit');
      assert.ok(ticks >= 5, `the host's timer fired ${ticks} times during the endless loop`);
      const next = await run(`log('fine')`);
      assert.equal(next.ok, true);
      assert.equal(next.output, 'fine');
    });

    test('the time limit keeps output and variables set before it', async () => {
      const outcome = await run(`log('started'); variables.set('x', 'y'); for (;;) {}`, {
        limits: { timeMs: 100 },
      });
      assert.equal(outcome.error, 'script exceeded its 100 ms time limit');
      assert.equal(outcome.output, 'started');
      assert.deepEqual(outcome.variables, { x: 'y' });
    });

    test('a memory bomb fails cleanly', async () => {
      // Time enough that the memory limit is met first however slow the machine is at the moment.
      const outcome = await run(`let a = []; while (true) a.push('x'.repeat(1e6));`, {
        limits: { timeMs: 30_000 },
      });
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error, 'script exceeded its memory limit');
      const big = await run(`const b = new ArrayBuffer(1024 * 1024 * 1024);`);
      assert.equal(big.error, 'script exceeded its memory limit');
      assert.equal((await run(`log('fine')`)).output, 'fine');
    });

    test('the memory limit stays where it was after every memory bomb', async () => {
      // Each bomb allocates 1 MiB at a time and counts what it got before the limit stopped it. The
      // limit once rose by what the previous bomb had taken (about 30 MiB more every time).
      const reached: number[] = [];
      for (let i = 0; i < 6; i++) {
        const outcome = await run(BOMB);
        assert.equal(outcome.error, 'script exceeded its memory limit');
        reached.push(Number(outcome.variables.mib));
      }
      const [first = 0] = reached;
      assert.ok(first >= 32 && first < 64, `the first bomb got ${first} MiB`);
      for (const mib of reached) {
        assert.ok(Math.abs(mib - first) <= 2, `bombs got ${reached.join(', ')} MiB: the limit moved`);
      }
      assert.equal((await run(`log('fine')`)).output, 'fine');
    });

    test('in one engine, a rebuilt context gets the same memory limit as the first', async () => {
      // The threads above end after such a job; the engine itself must hold the limit too.
      const engine = await ScriptEngine.load();
      try {
        const reached: number[] = [];
        for (let i = 0; i < 4; i++) {
          const result = engine.run({
            code: BOMB,
            variables: {},
            request: null,
            requestWritable: false,
            response: null,
            limits: { ...DEFAULT_SCRIPT_LIMITS },
          });
          assert.equal(result.outcome.error, 'script exceeded its memory limit');
          assert.equal(result.recycled, true);
          reached.push(Number(result.outcome.variables.mib));
        }
        const [first = 0] = reached;
        for (const mib of reached) {
          assert.ok(Math.abs(mib - first) <= 2, `bombs got ${reached.join(', ')} MiB: the limit moved`);
        }
        assert.ok(engine.grownBytes() > RETIRE_GROWN_BYTES, 'a bomb grows the memory past the retire mark');
      } finally {
        engine.dispose();
      }
    });

    test('endless recursion fails cleanly', async () => {
      const outcome = await run('function f() { return f(); } f();');
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error, 'script exceeded its stack limit (too much recursion)');
      const nested = await run(`JSON.parse('['.repeat(100000) + ']'.repeat(100000));`);
      assert.equal(nested.ok, false);
      assert.equal((await run(`log('fine')`)).output, 'fine');
    });

    test('nothing of the host is reachable', async () => {
      const outcome = await run(`
      const probes = {
        constructorChain: () => ({}).constructor.constructor('return typeof process')(),
        thisChain: () => this.constructor.constructor('return process')(),
        functionThis: () => typeof Function('return this')().process,
        globalProcess: () => typeof globalThis.process,
        require: () => typeof require,
        requireFs: () => require('fs'),
        module: () => typeof module,
        fetch: () => typeof fetch,
        timers: () => typeof setTimeout + typeof setInterval + typeof queueMicrotask,
        buffer: () => typeof Buffer,
        std: () => typeof std + typeof os,
      };
      for (const [name, probe] of Object.entries(probes)) {
        let result;
        try { result = String(probe()); } catch (e) { result = 'threw ' + e.name; }
        log(name + ': ' + result);
      }
      import('fs').then(() => log('import: loaded'), (e) => log('import: refused'));
    `);
      assert.equal(outcome.error, null);
      for (const line of outcome.output.split('\n')) {
        assert.match(line, /^\w+: (undefined|(undefined)+|threw \w+|refused)$/, line);
      }
      assert.match(outcome.output, /import: refused/);
    });

    test('50 concurrent jobs all complete', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          run(`variables.set('n', Number(variables.get('n')) * 2); log(JSON.parse(response.body).id);`, {
            variables: { n: String(i) },
            response: RESPONSE,
          }),
        ),
      );
      outcomes.forEach((outcome, i) => {
        assert.equal(outcome.ok, true);
        assert.equal(outcome.output, '42');
        assert.equal(outcome.variables.n, String(i * 2));
      });
    });
  });

  describe(`isolation between jobs (${inline ? 'calling thread first' : 'threads only'})`, () => {
    // One engine: every job below runs in the same warm context.
    let single: ScriptSandbox;
    before(() => {
      single = ScriptSandbox.start({ threads: 1, inline });
    });
    after(async () => {
      await single.close();
    });

    const POLLUTE = `
    const attempts = [
      () => { Object.prototype.x = 1; },
      () => { Array.prototype.push = function () { return 'pwned'; }; },
      () => { globalThis.leak = 'secret'; },
      () => { assert.equal = () => {}; },
      () => { globalThis.assert = () => {}; },
      () => { assert = () => {}; },
      () => { JSON.parse = () => 'pwned'; },
      () => { Object.defineProperty(Object.prototype, 'y', { get() { return 'secret'; } }); },
      () => { Object.getPrototypeOf(function* () {}).z = 1; },
      () => { Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true }); },
      () => { String.prototype.trim = () => 'pwned'; },
      () => { Error.prototype.toString = () => 'pwned'; },
      () => { (0, eval)('var leakVar = 1'); },
      () => { (0, eval)('function leakFn() {}'); },
      () => { Function('}); let leakLet = 1; (function () {')(); },
      () => { Math.max = () => 0; },
      () => { Symbol.for('shared').description; },
    ];
    const succeeded = [];
    attempts.forEach((attempt, i) => {
      try { attempt(); succeeded.push(i); } catch (e) { /* refused */ }
    });
    variables.set('secret', 'tenant-a');
    log('succeeded ' + succeeded.join(','));
  `;

    const PROBE = `
    const seen = [];
    if (({}).x !== undefined || ({}).y !== undefined) seen.push('Object.prototype');
    const a = []; a.push(1); if (a.length !== 1) seen.push('Array.prototype.push');
    if (typeof leak !== 'undefined' || globalThis.leak !== undefined) seen.push('globalThis.leak');
    if (typeof leakVar !== 'undefined' || typeof leakFn !== 'undefined' || typeof leakLet !== 'undefined') seen.push('global binding');
    if (JSON.parse('1') !== 1) seen.push('JSON.parse');
    if (' a '.trim() !== 'a') seen.push('String.prototype.trim');
    if (Math.max(1, 2) !== 2) seen.push('Math.max');
    if (Object.getPrototypeOf(function* () {}).z !== undefined) seen.push('generator prototype');
    if ([...[1, 2]].length !== 2) seen.push('array iterator');
    if (String(new Error('e')) !== 'Error: e') seen.push('Error.prototype.toString');
    if (variables.get('secret') !== undefined) seen.push('variables');
    if (request !== undefined) seen.push('request');
    let threw = false;
    try { assert.equal(1, 2); } catch (e) { threw = true; }
    if (!threw) seen.push('assert');
    log(seen.length === 0 ? 'clean' : 'leaked: ' + seen.join(', '));
  `;

    test('prototype pollution and global writes in one job are invisible to the next', async () => {
      const polluted = await single.run({
        code: POLLUTE,
        variables: {},
        request: REQUEST,
        requestWritable: true,
      });
      assert.equal(polluted.ok, true, polluted.error ?? '');
      // Every write to shared state is refused. What "succeeds" stays local: rebinding the `assert`
      // parameter, a `let` inside Function(), reading a registered symbol.
      assert.equal(polluted.output, 'succeeded 5,14,16');
      const probe = await single.run({ code: PROBE, variables: {} });
      assert.equal(probe.error, null);
      assert.equal(probe.output, 'clean');
    });

    test('a job that throws halfway through polluting leaves nothing behind either', async () => {
      const failing = await single.run({
        code: `globalThis.leak = 'secret';`,
        variables: { secret: 'tenant-a' },
      });
      assert.equal(failing.ok, false);
      assert.match(failing.error ?? '', /^TypeError/);
      const probe = await single.run({ code: PROBE, variables: {} });
      assert.equal(probe.output, 'clean');
    });

    test('pending promise callbacks of a job run before it ends, never in the next', async () => {
      const first = await single.run({
        code: `Promise.resolve().then(() => variables.set('late', 'yes')); log('sync');`,
        variables: {},
      });
      assert.deepEqual(first.variables, { late: 'yes' });
      const second = await single.run({ code: `log(variables.get('late'))`, variables: {} });
      assert.equal(second.output, 'undefined');
    });
  });
}

describe('the sandbox', () => {
  test('a job aborted while queued is rejected', async () => {
    const small = ScriptSandbox.start({ threads: 1 });
    try {
      const busy = small.run({ code: 'for (;;) {}', variables: {}, limits: { timeMs: 200 } });
      const controller = new AbortController();
      const queued = small.run({ code: `log('x')`, variables: {} }, controller.signal);
      controller.abort(new Error('run canceled'));
      await assert.rejects(queued, /run canceled/);
      assert.equal((await busy).error, 'script exceeded its 200 ms time limit');
      assert.equal((await small.run({ code: `log('after')`, variables: {} })).output, 'after');
    } finally {
      await small.close();
    }
  });

  test('after close() jobs are refused', async () => {
    const closing = ScriptSandbox.start({ threads: 1 });
    assert.equal((await closing.run({ code: `log(1)`, variables: {} })).output, '1');
    await closing.close();
    await assert.rejects(closing.run({ code: `log(1)`, variables: {} }), /closed/);
  });
});

describe('scripts on the calling thread', () => {
  /** Resolves once timers and the build they start have run. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  /** Runs for about `ms` of wall-clock time, longer than the inline limit, then sets `done`. */
  const busy = (ms: number) =>
    `const end = Date.now() + ${ms}; let n = 0; while (Date.now() < end) n++; variables.set('done', 'yes');`;

  test('a short script runs on the calling thread and starts no thread', async () => {
    await withSandbox({ threads: 1 }, async (sandbox) => {
      const outcome = await sandbox.run({
        code: `variables.set('id', JSON.parse(response.body).id)`,
        variables: {},
        response: RESPONSE,
      });
      assert.deepEqual(outcome.variables, { id: '42' });
      const failed = await sandbox.run({ code: `assert.equal(1, 2)`, variables: {} });
      assert.match(failed.error ?? '', /expected 1 to equal 2/);
      assert.deepEqual(sandbox.stats(), { inline: 2, threads: 0 });
    });
  });

  test('a script past the inline time limit runs again in a thread with its own limit, and goes there next time', async () => {
    await withSandbox({ threads: 1, inline: { timeMs: 20, rebuildIntervalMs: 0 } }, async (sandbox) => {
      await sandbox.run({ code: `log('warm')`, variables: {} });
      const outcome = await sandbox.run({ code: `log('start'); ${busy(200)}`, variables: { kept: '1' } });
      assert.equal(outcome.error, null);
      // Nothing of the first attempt shows: one line of output, the variables of the second run.
      assert.equal(outcome.output, 'start');
      assert.deepEqual(outcome.variables, { kept: '1', done: 'yes' });
      assert.deepEqual(sandbox.stats(), { inline: 1, threads: 1 });
      await settle();
      await sandbox.run({ code: `log('start'); ${busy(200)}`, variables: {} });
      assert.deepEqual(sandbox.stats(), { inline: 1, threads: 2 }, 'the same code goes straight to a thread');
      await sandbox.run({ code: `log('short')`, variables: {} });
      assert.deepEqual(
        sandbox.stats(),
        { inline: 2, threads: 2 },
        'other scripts run on the calling thread again',
      );
    });
  });

  test('a context that served its jobs is rebuilt at once, without the threads', async () => {
    await withSandbox(
      { threads: 1, inline: { maxUses: 3, rebuildIntervalMs: 3_600_000 } },
      async (sandbox) => {
        for (let i = 0; i < 10; i++) {
          assert.equal((await sandbox.run({ code: `log(${i})`, variables: {} })).output, String(i));
        }
        assert.deepEqual(sandbox.stats(), { inline: 10, threads: 0 });
      },
    );
  });

  test('after a limit ended its context, scripts go to the threads until the next build is due', async () => {
    await withSandbox({ threads: 1, inline: { rebuildIntervalMs: 3_600_000 } }, async (sandbox) => {
      await sandbox.run({ code: `log('warm')`, variables: {} });
      const looped = await sandbox.run({ code: 'for (;;) {}', variables: {}, limits: { timeMs: 100 } });
      assert.equal(looped.error, 'script exceeded its 100 ms time limit');
      await settle();
      assert.equal((await sandbox.run({ code: `log('next')`, variables: {} })).output, 'next');
      assert.deepEqual(sandbox.stats(), { inline: 1, threads: 2 });
    });
  });

  test('a script whose error gets out of its session does not make the calling thread rebuild at once', async () => {
    // Reading `name` of what was thrown, to describe it, throws again.
    const escaping = `throw { get name() { throw new Error('boom'); } };`;
    await withSandbox({ threads: 1, inline: { rebuildIntervalMs: 3_600_000 } }, async (sandbox) => {
      await sandbox.run({ code: `log('warm')`, variables: {} });
      const first = await sandbox.run({ code: escaping, variables: {} });
      assert.equal(first.ok, false);
      assert.match(first.error ?? '', /boom/);
      assert.deepEqual(sandbox.stats(), { inline: 2, threads: 0 });
      const again = await sandbox.run({ code: escaping, variables: {} });
      assert.equal(again.error, first.error);
      assert.equal((await sandbox.run({ code: `log('next')`, variables: {} })).output, 'next');
      assert.deepEqual(sandbox.stats(), { inline: 2, threads: 2 });
    });
  });

  test('a script gets its own memory and stack limits, not the tighter ones of the calling thread', async () => {
    await withSandbox({ threads: 1, inline: { rebuildIntervalMs: 0 } }, async (sandbox) => {
      const bomb = await sandbox.run({ code: BOMB, variables: {} });
      assert.equal(bomb.error, 'script exceeded its memory limit');
      const mib = Number(bomb.variables.mib);
      assert.ok(mib >= 32, `the bomb got ${mib} MiB, not its 32 MiB`);
      await settle();
      // Recursion that the calling thread's 128 KiB stack refuses but 512 KiB allows.
      const deep = await sandbox.run({
        code: `function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); } variables.set('d', depth(2000));`,
        variables: {},
      });
      assert.equal(deep.error, null);
      assert.equal(deep.variables.d, '2000');
      await settle();
      const nested = await sandbox.run({
        code: `JSON.parse('['.repeat(100000) + ']'.repeat(100000));`,
        variables: {},
      });
      assert.equal(nested.ok, false);
      await settle();
      assert.equal((await sandbox.run({ code: `log('fine')`, variables: {} })).output, 'fine');
      assert.equal(sandbox.stats().inline, 1, 'the last script ran on the calling thread again');
    });
  });

  test('large bodies go to the threads', async () => {
    await withSandbox({ threads: 1, inline: { inputBytes: 1024 } }, async (sandbox) => {
      const response = { ...RESPONSE, body: JSON.stringify({ pad: 'x'.repeat(2048) }) };
      const outcome = await sandbox.run({
        code: `log(JSON.parse(response.body).pad.length)`,
        variables: {},
        response,
      });
      assert.equal(outcome.output, '2048');
      assert.deepEqual(sandbox.stats(), { inline: 0, threads: 1 });
    });
  });
});

describe('assert', () => {
  // Calls that the sandbox answers before Chai when they pass, and edge cases around them. Each
  // must pass or fail exactly as Chai itself (the same package, run by Node) does, with its message.
  const CALLS = [
    'assert.isOk(1)',
    'assert.isOk(0)',
    'assert.ok("")',
    'assert.ok("x")',
    'assert.isNotOk(null)',
    'assert.notOk(1)',
    'assert.isTrue(true)',
    'assert.isTrue(1)',
    'assert.isFalse(false)',
    'assert.isFalse(0)',
    'assert.isNotTrue(1)',
    'assert.isNotTrue(true)',
    'assert.isNotFalse(0)',
    'assert.isNotFalse(false)',
    'assert.isNull(null)',
    'assert.isNull(undefined)',
    'assert.isNotNull(0)',
    'assert.isNotNull(null)',
    'assert.isUndefined(undefined)',
    'assert.isUndefined(null)',
    'assert.isDefined(null)',
    'assert.isDefined(undefined)',
    'assert.isString("s")',
    'assert.isString(new String("s"))',
    'assert.isString(1)',
    'assert.isNumber(NaN)',
    'assert.isNumber(new Number(1))',
    'assert.isNumber("1")',
    'assert.isBoolean(false)',
    'assert.isBoolean(0)',
    'assert.equal(1, "1")',
    'assert.equal(null, undefined)',
    'assert.equal(1, 2, "custom")',
    'assert.equal({}, {})',
    'assert.equal({ valueOf() { return 1; } }, 1)',
    'assert.equal(NaN, NaN)',
    'assert.notEqual(1, 2)',
    'assert.notEqual(1, "1")',
    'assert.notEqual({}, {})',
    'assert.strictEqual(1, 1)',
    'assert.strictEqual(1, "1")',
    'assert.strictEqual(NaN, NaN)',
    'assert.strictEqual(0, -0)',
    'assert.notStrictEqual(1, "1")',
    'assert.notStrictEqual(2, 2)',
    'assert.isAbove(5, 2)',
    'assert.isAbove(2, 2)',
    'assert.isAbove(2, 5)',
    'assert.isAbove(NaN, 0)',
    'assert.isAbove("5", 2)',
    'assert.isAbove(5, "2")',
    'assert.isAbove(5n, 2n)',
    'assert.isAbove(new Date(2), new Date(1))',
    'assert.isAtLeast(2, 2)',
    'assert.isAtLeast(1, 2)',
    'assert.isBelow(1, 2)',
    'assert.isBelow(2, 2)',
    'assert.isAtMost(2, 2)',
    'assert.isAtMost(3, 2)',
    'assert.isAtMost(Infinity, Infinity)',
    'assert.include("abc", "b")',
    'assert.include("abc", "d")',
    'assert.include("a1", 1)',
    'assert.include([1, 2], 2)',
    'assert.include("abc", "", "msg")',
  ];

  test('passes and fails as Chai does, with Chai’s messages', async () => {
    await withSandbox({ threads: 1 }, async (sandbox) => {
      for (const call of CALLS) {
        let expected: string | null = null;
        try {
          new Function('assert', call)(chaiAssert);
        } catch (error) {
          expected = (error as Error).message;
        }
        const outcome = await sandbox.run({ code: call, variables: {} });
        assert.equal(outcome.error, expected, call);
      }
      assert.equal(sandbox.stats().threads, 0);
    });
  });
});
