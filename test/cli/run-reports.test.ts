import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../../src/cli/run.js';
import type { TestRun } from '../../src/cli/reporters/reporter.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, 'fixtures/run');
const HOSTILE_BODY = '<script>alert("body")</script></pre><h1>owned</h1>';

const USERS: Record<string, string> = { '1': 'Ada', '2': 'Bob', '3': 'Cy' };

let server: http.Server;
let baseUrl: string;
let received: string[] = [];
let dir: string;

before(async () => {
  server = http.createServer((req, res) => {
    received.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://upstream');
    const json = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const user = /^\/users\/(\w+)$/.exec(url.pathname);
    if (user && USERS[user[1]!]) return json({ name: USERS[user[1]!], team: { id: 7 } });
    if (url.pathname === '/teams/7') return json({ name: 'Engine' });
    if (url.pathname === '/audit') return json({ team: url.searchParams.get('team') });
    if (url.pathname === '/hostile') {
      res.writeHead(200, { 'content-type': 'text/html', 'x-evil': '<svg onload=alert(3)>' });
      return res.end(HOSTILE_BODY);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received = [];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-reports-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** `vigil run` in this process, in a fresh directory (default report files land there). */
async function vigilRun(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(args, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    cwd: dir,
    env: {},
  });
  return { code, stdout, stderr };
}

const fixture = (name: string) => path.join(FIXTURES, name);
const withBase = () => ['--var', `base_url=${baseUrl}`];
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

describe('vigil run: html reporter', () => {
  test('one self-contained file: every step, failed assertions with expected and actual', async () => {
    const { code, stdout, stderr } = await vigilRun([
      fixture('users.json'),
      fixture('failing.json'),
      '--reporter',
      'html',
      ...withBase(),
    ]);
    assert.equal(code, 1, stderr);
    // The report goes to its default file; progress to stdout.
    assert.match(stdout, /^✘ failed Failing <&> test/m);
    const html = fs.readFileSync(path.join(dir, 'vigil-report.html'), 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /<script|<link|<img|src=|@import|url\(/i);
    assert.match(html, /<h1>vigil run <span class="badge fail">failed<\/span><\/h1>/);
    assert.match(html, /<dt>Runs<\/dt><dd>2<\/dd>/);
    assert.match(html, /<h2>Failing &lt;&amp;&gt; test<\/h2>/);
    assert.equal(html.match(/<details class="step /g)?.length, 8);
    // The failed step is open; the failed assertion shows both sides.
    assert.match(
      html,
      /<details class="step fail" open><summary><span class="badge fail">fail<\/span> 1\. GET http:\/\/127\.0\.0\.1:\d+\/users\/1 · 200/,
    );
    assert.match(
      html,
      /<tr class="r-fail"><td>fail<\/td><td>response_json name<\/td><td>equal<\/td><td class="expected">Grace<\/td><td class="actual">Ada<\/td><\/tr>/,
    );
    // Request and response of each step, pretty-printed JSON, variables and timings.
    assert.ok(html.includes('<pre>{\n  "name": "Ada",\n  "team": {\n    "id": 7\n  }\n}</pre>'));
    assert.match(html, /<th scope="row" style="width:35%">authorization<\/th><td>Bearer shared-token<\/td>/i);
    assert.match(html, /<td>team_id<\/td><td>response_json team\.id<\/td><td>7<\/td>/);
    assert.match(html, /<h3>Timings<\/h3>/);
  });

  test('hostile bodies, headers, URLs and names are escaped, never markup', async () => {
    const { code, stderr } = await vigilRun([
      fixture('hostile.json'),
      '--reporter',
      'html',
      '--reporter-html-output',
      'hostile.html',
      ...withBase(),
    ]);
    assert.equal(code, 1, stderr);
    const html = fs.readFileSync(path.join(dir, 'hostile.html'), 'utf8');
    // No element or attribute came from the run: only the report's own tags are there.
    assert.doesNotMatch(html, /<script|<svg|<img|<i>|<h1>owned/i);
    assert.deepEqual(
      [...new Set(html.match(/<[a-z0-9]+/g))].sort(),
      [
        '<body',
        '<code',
        '<details',
        '<div',
        '<dd',
        '<dl',
        '<dt',
        '<footer',
        '<h1',
        '<h2',
        '<h3',
        '<head',
        '<header',
        '<html',
        '<input',
        '<label',
        '<main',
        '<meta',
        '<p',
        '<pre',
        '<section',
        '<span',
        '<style',
        '<summary',
        '<table',
        '<tbody',
        '<td',
        '<th',
        '<thead',
        '<title',
        '<tr',
      ].sort(),
    );
    assert.ok(
      html.includes(
        '<pre>&lt;script&gt;alert("body")&lt;/script&gt;&lt;/pre&gt;&lt;h1&gt;owned&lt;/h1&gt;</pre>',
      ),
    );
    assert.ok(html.includes('&lt;svg onload=alert(3)&gt;'));
    assert.ok(html.includes('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;'));
    assert.ok(html.includes('<h2>Hostile &lt;script&gt;alert(1)&lt;/script&gt;</h2>'));
    assert.ok(html.includes('<td class="expected">&lt;i&gt;expected&lt;/i&gt;</td>'));
  });
});

describe('vigil run: several reporters at once', () => {
  test('--reporter cli,junit and a repeated --reporter html: progress on stdout, each report in its file', async () => {
    const { code, stdout, stderr } = await vigilRun([
      fixture('failing.json'),
      '--reporter',
      'cli,junit',
      '--reporter',
      'html',
      '--reporter-junit-output',
      'junit.xml',
      ...withBase(),
    ]);
    assert.equal(code, 1, stderr);
    assert.match(stdout, /^0 passed, 1 failed$/m);
    assert.doesNotMatch(stdout, /<\?xml|<!doctype/);
    assert.match(fs.readFileSync(path.join(dir, 'junit.xml'), 'utf8'), /^<\?xml /);
    assert.match(fs.readFileSync(path.join(dir, 'vigil-report.html'), 'utf8'), /^<!doctype html>/);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['junit.xml', 'vigil-report.html']);
  });

  test('json and junit without files: default file names; alone, json still goes to stdout', async () => {
    const both = await vigilRun([fixture('failing.json'), '--reporter', 'json,junit', ...withBase()]);
    assert.equal(both.code, 1, both.stderr);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['vigil-report.json', 'vigil-report.xml']);
    assert.match(both.stdout, /^✘ failed Failing/m);
    const alone = await vigilRun([fixture('failing.json'), '--reporter', 'json', ...withBase()]);
    assert.equal((JSON.parse(alone.stdout) as { failed: number }).failed, 1);
  });

  test('conflicting output options exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--reporter', 'json,html', '--output', 'x'], /--output names one file for json, html/],
      [['--reporter', 'json', '--reporter-html-output', 'x'], /--reporter-html-output needs --reporter html/],
      [['--reporter', 'json', '--output', 'x', '--reporter-json-output', 'y'], /not both/],
      [['--reporter', 'cli,pdf'], /--reporter must be one of cli, json, junit, html, got "pdf"/],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await vigilRun([fixture('failing.json'), ...args]);
      assert.equal(code, 2, args.join(' '));
      assert.match(stderr, message, args.join(' '));
    }
    assert.deepEqual(received, []);
  });
});

describe('vigil run: data-driven runs', () => {
  test('a CSV (BOM, quoted fields) runs the test once per row, in parallel, each row labelled', async () => {
    const data = write(
      'rows.csv',
      '\uFEFFuser_id,expected_name,comment\n1,Ada,"plain"\n2,Bob,"with, comma"\n3,"Ada","a ""quoted"" one"\n',
    );
    const { code, stdout, stderr } = await vigilRun([
      fixture('users.json'),
      '--data',
      data,
      '--parallel',
      '2',
      '--reporter',
      'cli,json,html',
      ...withBase(),
    ]);
    assert.equal(code, 1, stderr);
    // Each row ran its three requests, with the row's variables.
    for (const id of ['1', '2', '3']) assert.ok(received.includes(`/users/${id}`), id);
    assert.equal(received.filter((r) => r.startsWith('/audit')).length, 3);
    assert.match(stdout, /^✔ passed Users API · row 1 /m);
    assert.match(stdout, /^✔ passed Users API · row 2 /m);
    assert.match(stdout, /^✘ failed Users API · row 3 /m);
    assert.match(stdout, /^2 passed, 1 failed$/m);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'vigil-report.json'), 'utf8')) as {
      runs: TestRun[];
    };
    assert.deepEqual(
      report.runs.map((r) => [r.row, r.outcome.result, r.outcome.initial_variables.comment]),
      [
        [1, 'pass', 'plain'],
        [2, 'pass', 'with, comma'],
        [3, 'fail', 'a "quoted" one'],
      ],
    );
    const html = fs.readFileSync(path.join(dir, 'vigil-report.html'), 'utf8');
    for (const row of [1, 2, 3]) assert.ok(html.includes(`<h2>Users API · row ${row}</h2>`), `row ${row}`);
  });

  test('a JSON array of flat objects; the row wins over --var; junit names the row', async () => {
    const data = write(
      'rows.json',
      JSON.stringify([{ user_id: 2, expected_name: 'Bob', flag: true, none: null }]),
    );
    const { code, stdout, stderr } = await vigilRun([
      fixture('users.json'),
      '--data',
      data,
      '--var',
      'user_id=1',
      '--reporter',
      'junit',
      ...withBase(),
    ]);
    assert.equal(code, 0, stderr);
    assert.ok(received.includes('/users/2'));
    assert.match(stdout, /<testsuite name="Users API · row 1" /);
  });

  test('bad data files exit 2 naming the row, and run nothing', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'short.csv',
        'user_id,expected_name\n1,Ada\n2\n',
        /short\.csv: row 2: columns length is 2, got 1 on line 3/,
      ],
      ['quote.csv', 'user_id\n"1\n', /quote\.csv: .*Quote Not Closed/],
      [
        'header.csv',
        'user id,x\n1,2\n',
        /header\.csv: the header row, column 1: "user id" is not a variable name/,
      ],
      ['twice.csv', 'a,a\n1,2\n', /twice\.csv: the header row names column "a" twice/],
      ['empty.csv', 'a,b\n', /empty\.csv: there are no rows/],
      [
        'nested.json',
        '[{"a":"1"},{"a":{"b":1}}]',
        /nested\.json: row 2: column "a" must be a string, number, boolean or null/,
      ],
      ['scalar.json', '[{"a":"1"}, 5]', /scalar\.json: row 2: must be an object/],
      ['object.json', '{"a":"1"}', /object\.json: the document must be a JSON array of objects/],
      ['broken.json', '[{"a":', /broken\.json: not valid JSON/],
      ['rows.txt', 'a\n1\n', /--data .*rows\.txt: the file name must end in \.csv or \.json/],
    ];
    for (const [name, text, message] of cases) {
      const { code, stderr } = await vigilRun([
        fixture('users.json'),
        '--data',
        write(name, text),
        ...withBase(),
      ]);
      assert.equal(code, 2, `${name}: ${stderr}`);
      assert.match(stderr, message, name);
    }
    const missing = await vigilRun([fixture('users.json'), '--data', 'missing.csv', ...withBase()]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing\.csv: cannot read the file/);
    const parallel = await vigilRun([fixture('users.json'), '--parallel', '2', ...withBase()]);
    assert.match(parallel.stderr, /--parallel needs --data/);
    const zero = await vigilRun([
      fixture('users.json'),
      '--data',
      write('ok.csv', 'a\n1\n'),
      '--parallel',
      '0',
    ]);
    assert.match(zero.stderr, /--parallel must be a whole number from 1 to 64, got "0"/);
    assert.deepEqual(received, []);
  });
});
