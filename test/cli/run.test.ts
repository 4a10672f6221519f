import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { runCommand } from '../../src/cli/run.js';
import { attribute, text } from '../../src/cli/reporters/junit.js';
import type { TestRun } from '../../src/cli/reporters/reporter.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, 'fixtures/run');

interface Received {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

const USERS: Record<string, { name: string; team: { id: number } }> = {
  '1': { name: 'Ada', team: { id: 7 } },
  '2': { name: 'Bob', team: { id: 7 } },
};

let server: http.Server;
let baseUrl: string;
const received: Received[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      });
      const url = new URL(req.url ?? '/', 'http://upstream');
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const user = /^\/users\/(\w+)$/.exec(url.pathname);
      if (url.pathname === '/slow') return; // never answers; the client's timeout ends it
      if (user && USERS[user[1]!]) return json(200, USERS[user[1]!]);
      if (url.pathname === '/teams/7') return json(200, { name: 'Engine' });
      if (url.pathname === '/audit') return json(200, { team: url.searchParams.get('team') });
      if (url.pathname === '/echo' && req.method === 'POST') return json(200, { received: JSON.parse(body) });
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received.length = 0;
});

/** `vigil run` in this process, with captured output, fixture paths and no inherited settings. */
async function vigilRun(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(args, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    cwd: FIXTURES,
    env,
  });
  return { code, stdout, stderr };
}

const withBase = () => ['--var', `base_url=${baseUrl}`];
const paths = () => received.map((r) => `${r.method} ${r.url}`);
/** The output's lines with times replaced by N and the upstream's address by BASE. */
const linesOf = (output: string) =>
  output
    .replaceAll(baseUrl, 'BASE')
    .replace(/\d+ ms\b/g, 'N ms')
    .split('\n');

describe('vigil run: cli reporter', () => {
  test('a passing test: templated URLs, variable chain, condition, skipped step; exit 0', async () => {
    const { code, stdout, stderr } = await vigilRun(['users.json', ...withBase()]);
    assert.equal(code, 0, stderr + stdout);
    assert.deepEqual(paths(), ['GET /users/1', 'GET /teams/7', 'GET /audit?team=7']);
    // The token comes from the shared parent of the default environment.
    assert.equal(received[0]!.authorization, 'Bearer shared-token');

    const lines = linesOf(stdout);
    for (const line of [
      'Users API · environment "Default"',
      '  ✔ GET BASE/users/1  200  N ms',
      '  ✔ GET BASE/teams/7  200  N ms',
      '  ✔ condition ("7" equal "7" is true: ran 1 embedded step)  N ms',
      '  ✔ GET BASE/audit?team=7  200  N ms',
      '  ✔ condition ("1" equal "999" is false: skipped 1 embedded step)  N ms',
      '  – GET {{base_url}}/never  skipped',
      '✔ passed Users API (users.json): 6 steps, 5 passed, 0 failed, 1 skipped in N ms',
    ]) {
      assert.ok(lines.includes(line), `${line}\n---\n${stdout}`);
    }
    assert.equal(lines.at(-2), '1 passed, 0 failed');
    assert.doesNotMatch(stdout, /\u001b\[/, 'no colour codes when stdout is not a terminal');
  });

  test('a failing assertion is shown under its step with expected and actual; exit 1', async () => {
    const { code, stdout } = await vigilRun(['failing.json', 'users.json', ...withBase()]);
    assert.equal(code, 1);
    const lines = linesOf(stdout);
    const failed = lines.indexOf('  ✘ GET BASE/users/1  200  N ms');
    assert.ok(failed > 0, stdout);
    assert.equal(
      lines[failed + 1],
      '      assertion response_json name: expected equal "Grace", actual "Ada"',
    );
    // Without stop_on_failure the next step still runs.
    assert.equal(lines[failed + 2], '  ✔ GET BASE/teams/7  200  N ms');
    assert.ok(
      lines.includes(
        '✘ failed Failing <&> test (failing.json): 2 steps, 1 passed, 1 failed, 0 skipped in N ms',
      ),
    );
    assert.match(stdout, /^✔ passed Users API/m);
    assert.equal(stdout.trimEnd().split('\n').at(-1), '1 passed, 1 failed');
  });

  test('a failed script shows its error and its output under the step', async () => {
    const { code, stdout } = await vigilRun(['scripted.json', ...withBase()]);
    assert.equal(code, 1);
    const lines = linesOf(stdout);
    const failed = lines.indexOf('  ✘ GET BASE/users/2  200  N ms');
    assert.ok(failed > 0, stdout);
    assert.match(lines[failed + 1]!, /^ {6}script 1: .*expected 200 to equal 201/);
    assert.equal(lines[failed + 2], '      script 1 output:');
    assert.match(lines[failed + 3]!, /^ {8}status was 200$/);
  });

  test('--bail stops after the first failed test', async () => {
    const { code, stdout } = await vigilRun(['failing.json', 'users.json', '--bail', ...withBase()]);
    assert.equal(code, 1);
    assert.deepEqual(paths(), ['GET /users/1', 'GET /teams/7']);
    assert.doesNotMatch(stdout, /Users API/);
    assert.equal(stdout.trimEnd().split('\n').at(-1), '0 passed, 1 failed, 1 not run (--bail)');
  });

  test('a JSON array of tests runs every test of it', async () => {
    const { code, stdout } = await vigilRun(['list.json', ...withBase()]);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /^✔ passed First of a list \(list\.json\)/m);
    assert.match(stdout, /^✔ passed Second of a list \(list\.json\)/m);
    assert.equal(stdout.trimEnd().split('\n').at(-1), '2 passed, 0 failed');
  });

  test('--timeout limits each request', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-run-'));
    try {
      const file = path.join(dir, 'slow.json');
      fs.writeFileSync(
        file,
        JSON.stringify({ name: 'Slow', steps: [{ step_type: 'request', url: '{{base_url}}/slow' }] }),
      );
      const started = Date.now();
      const { code, stdout } = await vigilRun([file, '--timeout', '0.3', ...withBase()]);
      assert.equal(code, 1);
      assert.ok(Date.now() - started < 10_000);
      assert.ok(linesOf(stdout).includes('  ✘ GET BASE/slow  N ms'), stdout);
      assert.match(stdout, /^ {6}error: no response within 300 ms$/m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('EGRESS_POLICY=public-only refuses the loopback upstream', async () => {
    const { code, stdout } = await vigilRun(['list.json', ...withBase()], { EGRESS_POLICY: 'public-only' });
    assert.equal(code, 1);
    assert.equal(received.length, 0);
    assert.match(stdout, /loopback/);
  });
});

describe('vigil run: environments and variables', () => {
  async function jsonRuns(args: string[]) {
    const { code, stdout, stderr } = await vigilRun([...args, '--reporter', 'json']);
    assert.equal(code, 0, stderr + stdout);
    return (JSON.parse(stdout) as { runs: TestRun[] }).runs;
  }

  test('--env is the nearest layer: its variables win and the rest is inherited', async () => {
    const runs = await jsonRuns(['users.json', '--env', 'overlay.json', ...withBase()]);
    assert.equal(received[0]!.url, '/users/2');
    assert.equal(received[0]!.authorization, 'Bearer shared-token');
    assert.equal(runs[0]!.environment_name, 'Local overlay');
    assert.equal(runs[0]!.outcome.initial_variables.expected_name, 'Bob');
    assert.equal(runs[0]!.outcome.initial_variables.token, 'shared-token');
  });

  test('--var wins over the environment, --env included', async () => {
    await jsonRuns([
      'users.json',
      '--env',
      'overlay.json',
      '--var',
      'user_id=1',
      '--var',
      'expected_name=Ada',
      ...withBase(),
    ]);
    assert.equal(received[0]!.url, '/users/1');
  });

  test('--environment picks another environment of the file, by name or by id', async () => {
    const byName = await jsonRuns(['users.json', '--environment', 'Other', ...withBase()]);
    assert.equal(byName[0]!.environment_name, 'Other');
    assert.equal(received[0]!.url, '/users/2');
    assert.equal(received[0]!.authorization, 'Bearer other-token');

    received.length = 0;
    const byId = await jsonRuns([
      'users.json',
      '--environment',
      'df401f3b-5b0c-487f-a1b6-049695ff5726',
      ...withBase(),
    ]);
    assert.equal(byId[0]!.environment_name, 'Other');
  });

  test('a subtest runs the test of that id from another file, with its params', async () => {
    const runs = await jsonRuns(['parent.json', 'child.json', ...withBase()]);
    assert.deepEqual(paths(), ['GET /users/2', 'POST /echo?name=Bob', 'GET /users/1']);
    assert.deepEqual(JSON.parse(received[1]!.body), { name: 'Bob' });
    const [subtest] = runs[0]!.outcome.requests;
    assert.equal(subtest!.step_type, 'subtest');
    assert.equal(subtest!.response_status_code, 200);
    assert.equal(subtest!.url, 'Child');
    assert.equal(runs[1]!.test_name, 'Child');
  });

  test('a subtest whose test is not among the files fails the step', async () => {
    const { code, stdout } = await vigilRun(['parent.json', ...withBase()]);
    assert.equal(code, 1);
    assert.match(stdout, /error: test_uuid: no test f64a58a7-d29a-4240-9129-15c71eb324cd among the files/);
  });
});

describe('vigil run: json and junit reporters', () => {
  test('json: one document with runs, passed and failed', async () => {
    const { code, stdout } = await vigilRun([
      'users.json',
      'failing.json',
      '--reporter',
      'json',
      ...withBase(),
    ]);
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as { runs: TestRun[]; passed: number; failed: number };
    assert.deepEqual(Object.keys(report), ['runs', 'passed', 'failed']);
    assert.equal(report.passed, 1);
    assert.equal(report.failed, 1);
    assert.deepEqual(
      report.runs.map((r) => [r.file, r.test_id, r.test_name, r.environment_name, r.outcome.result]),
      [
        ['users.json', 'ba38c161-4765-4dd0-96d3-a8a13351e714', 'Users API', 'Default', 'pass'],
        ['failing.json', '87bd9f56-a8ea-4b02-a82c-c26abeda47f3', 'Failing <&> test', 'Test Settings', 'fail'],
      ],
    );
    const users = report.runs[0]!.outcome;
    assert.equal(users.requests.length, 6);
    assert.equal(users.requests[0]!.url, `${baseUrl}/users/1`);
    assert.equal(users.variables.team_id, '7');
    assert.equal(users.assertions_failed, 0);
    const failing = report.runs[1]!.outcome;
    assert.equal(failing.assertions_failed, 1);
    const failed = failing.requests[0]!.assertions.find((a) => a.result === 'fail')!;
    assert.equal(failed.actual_value, 'Ada');
  });

  test('junit: a suite per test, a case per step, failures and skipped; --output writes the file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-run-'));
    try {
      const output = path.join(dir, 'report.xml');
      const { code, stdout } = await vigilRun([
        'users.json',
        'failing.json',
        '--reporter',
        'junit',
        '--output',
        output,
        ...withBase(),
      ]);
      assert.equal(code, 1);
      // With --output, stdout shows the progress instead of the report.
      assert.match(stdout, /^✔ passed Users API/m);
      const xml = fs.readFileSync(output, 'utf8');
      assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites /);
      assert.equal(xml.match(/<testsuite /g)?.length, 2);
      assert.equal(xml.match(/<testcase /g)?.length, 8);
      assert.equal(xml.match(/<failure /g)?.length, 1);
      assert.equal(xml.match(/<skipped\/>/g)?.length, 1);

      const errors: string[] = [];
      const doc = new DOMParser({
        onError: (level, message) => {
          if (level !== 'warning') errors.push(message);
        },
      }).parseFromString(xml, 'text/xml');
      assert.deepEqual(errors, []);
      const root = doc.documentElement!;
      assert.equal(root.getAttribute('tests'), '8');
      assert.equal(root.getAttribute('failures'), '1');
      assert.equal(root.getAttribute('skipped'), '1');
      const suites = Array.from(doc.getElementsByTagName('testsuite'));
      assert.deepEqual(
        suites.map((s) => [s.getAttribute('name'), s.getAttribute('tests'), s.getAttribute('failures')]),
        [
          ['Users API', '6', '0'],
          ['Failing <&> test', '2', '1'],
        ],
      );
      const failure = doc.getElementsByTagName('failure')[0]!;
      const failedCase = failure.parentNode as Element;
      assert.equal(failedCase.getAttribute('name'), `request GET ${baseUrl}/users/1`);
      assert.equal(failedCase.getAttribute('classname'), 'Failing <&> test');
      assert.match(failedCase.getAttribute('time') ?? '', /^\d+\.\d{3}$/);
      assert.equal(
        failure.getAttribute('message'),
        'assertion response_json name: expected equal "Grace", actual "Ada"',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('junit escaping: markup escaped, characters XML 1.0 forbids dropped', () => {
    assert.equal(text('a<b>&c'), 'a&lt;b&gt;&amp;c');
    assert.equal(attribute(`"x" 'y'\n\tz`), '&quot;x&quot; &apos;y&apos;&#10;&#9;z');
    assert.equal(text('nul\u0000 bell\u0007 fffe\uFFFE lone\uD800 ok😀'), 'nul bell fffe lone ok😀');
  });
});

describe('vigil run: usage and file errors exit 2 and run nothing', () => {
  test('an invalid file is named with the JSON pointer of the field', async () => {
    const { code, stdout, stderr } = await vigilRun(['users.json', 'invalid.json', ...withBase()]);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /^vigil run: invalid\.json: \/steps\/1\/assertions\/0\/comparison must be one of: /);
    assert.equal(received.length, 0);
  });

  test('bad options and unreadable files', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-run-'));
    try {
      const broken = path.join(dir, 'broken.json');
      fs.writeFileSync(broken, '{"name": ');
      const badEnv = path.join(dir, 'bad-env.json');
      fs.writeFileSync(badEnv, JSON.stringify({ initial_variables: { user_id: 2 } }));
      const cases: [string[], RegExp][] = [
        [[], /no test file given/],
        [['users.json', '--reporter', 'xml'], /--reporter must be one of cli, json, junit/],
        [['users.json', '--var', 'no_value'], /--var "no_value" must be NAME=VALUE/],
        [['users.json', '--var', '1x=2'], /--var "1x=2" must be NAME=VALUE/],
        [['users.json', '--nope'], /Unknown option '--nope'/],
        [['users.json', '--timeout', 'soon'], /--timeout must be a number of seconds/],
        [['users.json', '--output', 'x.txt'], /--output needs --reporter json, junit or html/],
        [['missing.json'], /missing\.json: cannot read the file/],
        [[broken], /broken\.json: not valid JSON/],
        [
          ['users.json', '--environment', 'Nowhere'],
          /users\.json: test "Users API" has no environment "Nowhere"/,
        ],
        [['users.json', '--env', badEnv], /bad-env\.json: \/initial_variables\/user_id must be string/],
        [
          ['users.json', 'users.json'],
          /users\.json: \/id ba38c161-4765-4dd0-96d3-a8a13351e714 is also the id of/,
        ],
      ];
      for (const [args, message] of cases) {
        const { code, stderr } = await vigilRun(args);
        assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
        assert.match(stderr, message, args.join(' '));
      }
      const bad = await vigilRun(['users.json'], { EGRESS_POLICY: 'sometimes' });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /EGRESS_POLICY must be allow-all or public-only/);
      assert.equal(received.length, 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--help prints the options and exits 0', async () => {
    const { code, stdout } = await vigilRun(['--help']);
    assert.equal(code, 0);
    for (const option of [
      '--env',
      '--environment',
      '--var',
      '--reporter',
      '--output',
      '--timeout',
      '--bail',
    ]) {
      assert.ok(stdout.includes(option), option);
    }
  });
});

describe('vigil run: the real command', () => {
  function spawnVigil(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(FIXTURES, 'entry.ts'), ...args], {
        cwd: FIXTURES,
        env: { ...process.env, EGRESS_POLICY: '', NO_COLOR: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('error', reject);
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  test('vigil run exits 1 on a failed test, and the process ends by itself', async () => {
    const failed = await spawnVigil(['run', 'failing.json', 'list.json', ...withBase()]);
    assert.equal(failed.status, 1, failed.stderr);
    assert.match(failed.stdout, /^✘ failed Failing <&> test/m);
    assert.match(failed.stdout, /^2 passed, 1 failed$/m);
    assert.doesNotMatch(failed.stdout, /\u001b\[/);
  });
});
