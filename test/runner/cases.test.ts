/**
 * Golden cases for the test engine (Hurl-style integration folders). Each folder of `cases/` holds
 * a test in the export format, what a local upstream answers, and the expected outcome; see
 * `cases/README.md` for the format.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import {
  type EnvironmentSettingsInput,
  normalizeSettings,
  resolveSettings,
  type StoredSettings,
} from '../../src/domain/environments.js';
import type { RunOutcome } from '../../src/domain/results.js';
import { normalizeStep, type StepInput } from '../../src/domain/steps.js';
import {
  createEngine,
  type EngineLimits,
  type PartnerPort,
  type RunDefinition,
  type SubtestPort,
} from '../../src/runner/engine.js';
import type { PartnerOutcome } from '../../src/runner/context.js';
import { LazyScriptSandbox } from '../../src/runner/lazy-sandbox.js';

const CASES = new URL('cases/', import.meta.url);
const START_MS = 1_700_000_000_000;
/** Result fields that depend on the wall clock or the machine; never compared. */
const TIMING_KEYS = new Set(['response_time_ms', 'timings', 'started_at', 'finished_at']);

interface Route {
  method?: string;
  /** Exact path; the query is ignored unless `query` is given. */
  path: string;
  /** Exact raw query string (without `?`). */
  query?: string;
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string;
  json?: unknown;
  base64?: string;
  delay_ms?: number;
  /** Answers only the first N matching requests; later ones fall through to the next route. */
  times?: number;
}

interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface ExportedEnvironment extends EnvironmentSettingsInput {
  id: string;
  name: string;
  parent_environment_id?: string | null;
}

interface ExportedTest {
  vigil_export_version: 1;
  id: string;
  name: string;
  default_environment_id: string | null;
  environments?: ExportedEnvironment[];
  shared_environments?: ExportedEnvironment[];
  steps: StepInput[];
  schedules?: unknown[];
}

interface CaseOptions {
  limits?: Partial<EngineLimits>;
  region?: string;
  agent?: string | null;
  bucket?: RunDefinition['bucket'];
}

/** What the harness checks: a partial run outcome, plus what the upstream received and the pauses. */
interface Expected extends Record<string, unknown> {
  result: RunOutcome['result'];
  received?: unknown[];
  /** Milliseconds each pause asked to wait, in order. */
  sleeps?: number[];
  /** Child runs of subtest steps, partial outcomes in the order they finished. */
  subtests?: unknown[];
  /** What partner-inspector steps asked the partner port, in order. */
  partner_calls?: unknown[];
}

interface Upstream {
  baseUrl: string;
  received: Received[];
  close(): Promise<void>;
}

const scripts = new LazyScriptSandbox();
after(() => scripts.close());

describe('golden cases', () => {
  const names = readdirSync(CASES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const name of names) test(name, () => runCase(name));
});

async function runCase(name: string): Promise<void> {
  const dir = new URL(`${name}/`, CASES);
  const read = <T>(file: string): T => JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as T;
  const optional = <T>(file: string, fallback: T): T =>
    existsSync(new URL(file, dir)) ? read<T>(file) : fallback;

  const main = read<ExportedTest>('test.json');
  const tests = [
    main,
    ...(existsSync(new URL('subtest.json', dir)) ? [read<ExportedTest>('subtest.json')] : []),
  ];
  const routes = read<Route[]>('upstream.json');
  const options = optional<CaseOptions>('options.json', {});
  const triggerVariables = optional<Record<string, string>>('variables.json', {});
  const partnerResults = optional<Record<string, PartnerOutcome> | null>('partner.json', null);
  const upstream = await startUpstream(routes);
  const closedBaseUrl = await closedPortUrl();
  try {
    const replacements = { '{{base_url}}': upstream.baseUrl, '{{closed_base_url}}': closedBaseUrl };
    const expected = substitute(read<Expected>('expected.json'), replacements) as Expected;
    const sleeps: number[] = [];
    const children: RunOutcome[] = [];
    const partnerCalls: unknown[] = [];
    const random = mulberry32(20_231_114);
    let now = START_MS;
    const context = {
      bucket: options.bucket ?? { key: 'golden', name: 'Golden cases', verify_ssl: true },
      region: options.region ?? 'local',
      agent: options.agent ?? null,
    };
    const engine = createEngine({
      scripts,
      egress: 'allow-all',
      subtests: subtestPort(tests, context, children),
      ...(partnerResults === null ? {} : { partner: partnerPort(partnerResults, partnerCalls) }),
      limits: options.limits,
      clock: { now: () => now++, random },
      sleep: async (ms, signal) => {
        sleeps.push(ms);
        if (signal.aborted) throw new Error('aborted');
      },
    });
    const definition = definitionOf(main, null, context, {
      ...triggerVariables,
      base_url: upstream.baseUrl,
      closed_base_url: closedBaseUrl,
    });
    const outcome = await engine.run(definition);

    const {
      received,
      sleeps: expectedSleeps,
      subtests: expectedChildren,
      partner_calls: expectedPartnerCalls,
      ...run
    } = expected;
    const problems: string[] = [];
    collectMismatches(run, outcome, 'outcome', problems);
    if (received !== undefined) collectMismatches(received, upstream.received, 'received', problems);
    if (expectedSleeps !== undefined) collectMismatches(expectedSleeps, sleeps, 'sleeps', problems);
    if (expectedChildren !== undefined) collectMismatches(expectedChildren, children, 'subtests', problems);
    if (expectedPartnerCalls !== undefined) {
      collectMismatches(expectedPartnerCalls, partnerCalls, 'partner_calls', problems);
    }
    if (problems.length > 0) {
      assert.fail(
        `case ${name}: ${problems.length} mismatch${problems.length === 1 ? '' : 'es'}\n  ` +
          problems.slice(0, 25).join('\n  ') +
          `\n\nactual outcome:\n${JSON.stringify(summary(outcome), null, 2)}` +
          `\n\nreceived:\n${JSON.stringify(upstream.received, null, 2)}`,
      );
    }
  } finally {
    await upstream.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Run definitions

function definitionOf(
  test: ExportedTest,
  environmentId: string | null,
  context: Pick<RunDefinition, 'bucket' | 'region' | 'agent'>,
  variables: Record<string, string>,
): RunDefinition {
  const environments = [...(test.environments ?? []), ...(test.shared_environments ?? [])];
  const wanted = environmentId || test.default_environment_id || environments[0]?.id;
  const chain: ExportedEnvironment[] = [];
  for (let id = wanted; id;) {
    const environment = environments.find((e) => e.id === id);
    assert.ok(environment, `${test.name}: environment ${id} is not in the file`);
    assert.ok(!chain.includes(environment), `${test.name}: environment ${id} is its own ancestor`);
    chain.push(environment);
    id = environment.parent_environment_id ?? undefined;
  }
  const settings: StoredSettings[] = chain.map((environment) => normalizeSettings(environment));
  const own = chain[0];
  return {
    test: {
      id: test.id,
      name: test.name,
      steps: test.steps.map((step) => normalizeStep(step, (input) => input.id ?? randomUUID())),
    },
    environment: {
      id: own?.id ?? 'no-environment',
      name: own?.name ?? 'Test Settings',
      settings: resolveSettings(settings),
    },
    ...context,
    variables,
  };
}

/** Subtests resolve among the tests of the case folder and run in the parent's region. */
function subtestPort(
  tests: readonly ExportedTest[],
  context: Pick<RunDefinition, 'bucket' | 'agent'>,
  children: RunOutcome[],
): SubtestPort {
  return {
    async resolve(step, parent, variables) {
      const test = tests.find((t) => t.id === step.test_uuid);
      if (test === undefined) return { error: `test ${step.test_uuid} is not in this case` };
      return definitionOf(
        test,
        step.environment_uuid || null,
        { ...context, region: parent.region },
        variables,
      );
    },
    async record(child, outcome) {
      children.push(outcome);
      return `run-of-${child.test.id}`;
    },
  };
}

/** Browser tests answer from `partner.json` (test id → outcome); unknown ids throw. */
function partnerPort(results: Record<string, PartnerOutcome>, calls: unknown[]): PartnerPort {
  return {
    async execute(request) {
      calls.push(request);
      const outcome = Object.hasOwn(results, request.test_id) ? results[request.test_id] : undefined;
      if (outcome === undefined) throw new Error(`the partner knows no test ${request.test_id}`);
      return outcome;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Upstream

async function startUpstream(routes: readonly Route[]): Promise<Upstream> {
  const received: Received[] = [];
  const remaining = routes.map((route) => route.times ?? Infinity);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = req.url ?? '/';
      const query = target.includes('?') ? target.slice(target.indexOf('?') + 1) : '';
      const path = target.includes('?') ? target.slice(0, target.indexOf('?')) : target;
      received.push({
        method: req.method ?? '',
        path: target,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const index = routes.findIndex(
        (route, i) =>
          (remaining[i] ?? 0) > 0 &&
          (route.method ?? 'GET').toUpperCase() === req.method &&
          route.path === path &&
          (route.query === undefined || route.query === query),
      );
      const route = routes[index];
      if (route === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route for ${req.method} ${target}`);
        return;
      }
      remaining[index] = (remaining[index] ?? 0) - 1;
      const answer = () => {
        const headers: Record<string, string | string[]> = { ...route.headers };
        let body: Buffer = Buffer.alloc(0);
        if (route.json !== undefined) {
          body = Buffer.from(JSON.stringify(route.json), 'utf8');
          headers['content-type'] ??= 'application/json';
        } else if (route.base64 !== undefined) {
          body = Buffer.from(route.base64, 'base64');
        } else if (route.body !== undefined) {
          body = Buffer.from(route.body, 'utf8');
        }
        res.writeHead(route.status ?? 200, headers).end(body);
      };
      if (route.delay_ms) setTimeout(answer, route.delay_ms).unref();
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A URL on a port that was just free: connecting to it is refused. */
async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------------------------------------
// Comparing

/**
 * Partial deep match: every key of an expected object must match, arrays have the same length and
 * match element by element. `{"$match": "regex"}` matches a string, `{"$literal": "text"}` is that exact
 * text without substitutions, `{"$absent": true}` requires the key to be missing. Timing fields are
 * skipped.
 */
function collectMismatches(expected: unknown, actual: unknown, at: string, out: string[]): void {
  if (isMatcher(expected)) {
    if (typeof actual !== 'string' || !new RegExp(expected.$match).test(actual)) {
      out.push(`${at}: expected a string matching /${expected.$match}/, actual ${show(actual)}`);
    }
    return;
  }
  if (isLiteral(expected)) {
    if (expected.$literal !== actual) {
      out.push(`${at}: expected ${show(expected.$literal)}, actual ${show(actual)}`);
    }
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      out.push(`${at}: expected an array of ${expected.length}, actual ${show(actual)}`);
      return;
    }
    if (actual.length !== expected.length) {
      out.push(`${at}: expected ${expected.length} elements, actual ${actual.length}`);
    }
    const shared = Math.min(actual.length, expected.length);
    for (let i = 0; i < shared; i++) collectMismatches(expected[i], actual[i], `${at}[${i}]`, out);
    return;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
      out.push(`${at}: expected an object, actual ${show(actual)}`);
      return;
    }
    const record = actual as Record<string, unknown>;
    for (const [key, value] of Object.entries(expected)) {
      if (TIMING_KEYS.has(key)) continue;
      if (isAbsent(value)) {
        if (Object.hasOwn(record, key))
          out.push(`${at}.${key}: expected no such key, actual ${show(record[key])}`);
        continue;
      }
      if (!Object.hasOwn(record, key)) {
        out.push(`${at}.${key}: expected ${show(value)}, actual (missing)`);
        continue;
      }
      collectMismatches(value, record[key], `${at}.${key}`, out);
    }
    return;
  }
  if (!Object.is(expected, actual)) out.push(`${at}: expected ${show(expected)}, actual ${show(actual)}`);
}

function isMatcher(value: unknown): value is { $match: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    typeof (value as { $match?: unknown }).$match === 'string'
  );
}

function isAbsent(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    (value as { $absent?: unknown }).$absent === true
  );
}

/** `{"$literal": "…"}` is compared as written: `{{base_url}}` in it is not replaced. */
function isLiteral(value: unknown): value is { $literal: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    typeof (value as { $literal?: unknown }).$literal === 'string'
  );
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 297)}…` : text;
}

function substitute(value: unknown, replacements: Record<string, string>): unknown {
  if (isLiteral(value)) return value;
  if (typeof value === 'string') {
    return Object.entries(replacements).reduce((text, [from, to]) => text.split(from).join(to), value);
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, replacements));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, replacements)]));
  }
  return value;
}

/** The outcome without the bulky full exchanges, for a failure message. */
function summary(outcome: RunOutcome): unknown {
  return {
    ...outcome,
    requests: outcome.requests.map(({ request, response, timings: _timings, ...step }) => ({
      ...step,
      request: request && { ...request, body: request.body.slice(0, 500) },
      response: response && { ...response, body: response.body.slice(0, 500) },
    })),
  };
}

/** A small seeded PRNG, so that `random_*` and `uuid` render the same on every run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
