import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { type Account, type ApiHarness, describeApi } from '../helpers/api.js';

/**
 * Hostile input on every route of the OpenAPI document (DESIGN §2): no client input may produce a
 * 5xx; bad input gets the error envelope whose `status` equals the HTTP status; nothing already
 * stored is lost or changed by a refused request.
 *
 * Cases are generated from the route schemas and a fixed-seed PRNG, so both dialects see the same
 * barrage. Input that is certainly invalid goes to the protected fixtures (whose state is compared
 * before and after); input that may legitimately succeed goes to a scratch bucket instead.
 */

type Schema = Record<string, any>;
type Path = (string | number)[];
/** invalid: must be refused (4xx); valid: must succeed (2xx); either: anything but a 5xx. */
type Kind = 'invalid' | 'valid' | 'either';

const SEED = 0x5eed_2024;
const BODY_LIMIT = 1024 * 1024;
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const STEP_KINDS = ['request', 'pause', 'condition', 'embedded', 'subtest', 'partner-inspector'] as const;
type StepKind = (typeof STEP_KINDS)[number];

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Awkward but well-formed Unicode: RTL override, zero-width and combining marks, BOM, emoji, CJK, quotes. */
const UNICODE_POOL = [
  0x41, 0x7a, 0xe9, 0x202e, 0x200b, 0x0301, 0xfeff, 0x1f642, 0x1f4a9, 0x4e2d, 0x0647, 0x22, 0x27, 0x5c, 0x3c,
  0x7b, 0x24, 0xfffd, 0x10fffd,
];
function unicodeString(rng: () => number, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++)
    s += String.fromCodePoint(UNICODE_POOL[Math.floor(rng() * UNICODE_POOL.length)]!);
  return s;
}

function pick<T>(rng: () => number, items: readonly T[], n: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}

// ---------------------------------------------------------------------------------------------
// JSON text with literals JSON.stringify cannot write (1e400, -0, deep nesting)

class Raw {
  constructor(readonly text: string) {}
}

function encode(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => (v instanceof Raw ? `@@RAW${raws.push(v.text) - 1}@@` : v));
  return (text ?? '').replace(/"@@RAW(\d+)@@"/g, (_m, i: string) => raws[Number(i)]!);
}

const deepArray = (depth: number, inner = '') => '['.repeat(depth) + inner + ']'.repeat(depth);
const deepObject = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);

// ---------------------------------------------------------------------------------------------
// A small JSON Schema reader over the OpenAPI document: expectations come from the documented
// schema, checked here independently of the service's validator.

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The JSON types a schema admits, or undefined when it does not say. */
function typesOf(s: Schema | undefined): Set<string> | undefined {
  if (!s) return undefined;
  if (s.type) return new Set(Array.isArray(s.type) ? s.type : [s.type]);
  if (s.enum) return new Set((s.enum as unknown[]).map(jsonType));
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (!branches) return undefined;
  const out = new Set<string>();
  for (const b of branches) {
    const t = typesOf(b);
    if (!t) return undefined;
    for (const x of t) out.add(x);
  }
  return out;
}

const FORMATS: Record<string, RegExp> = {
  uuid: /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: /^[a-z][a-z0-9+.-]*:[^\s]*$/i,
};

/** Whether `v` satisfies schema `s`: true, false, or undefined when this reader cannot tell. */
function accepts(s: Schema | undefined, v: unknown): boolean | undefined {
  if (!s) return undefined;
  if (s.if) {
    const branch = accepts(s.if, v);
    if (branch === undefined) return undefined;
    return accepts(branch ? s.then : s.else, v);
  }
  if (s.discriminator) {
    if (!isObject(v)) return false;
    const tag = s.discriminator.propertyName as string;
    const branch = (s.oneOf as Schema[]).find((b) => {
      const t = b.properties?.[tag];
      return t?.const === v[tag] || (t?.enum as unknown[] | undefined)?.includes(v[tag]);
    });
    return branch ? accepts(branch, v) : false;
  }
  if (s.enum) return (s.enum as unknown[]).some((e) => e === v);
  if (s.const !== undefined) return s.const === v;
  const t = jsonType(v);
  if (s.type) {
    const types = new Set(Array.isArray(s.type) ? s.type : [s.type]);
    if (!types.has(t) && !(t === 'integer' && types.has('number'))) return false;
  }
  let verdict: boolean | undefined = true;
  const and = (r: boolean | undefined) => {
    if (r === false) verdict = false;
    else if (r === undefined && verdict === true) verdict = undefined;
  };
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return false;
    if (s.minimum !== undefined && v < s.minimum) return false;
    if (s.maximum !== undefined && v > s.maximum) return false;
    if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) return false;
    if (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum) return false;
  }
  if (typeof v === 'string') {
    const length = [...v].length;
    if (s.minLength !== undefined && length < s.minLength) return false;
    if (s.maxLength !== undefined && length > s.maxLength) return false;
    if (s.pattern && !new RegExp(s.pattern, 'u').test(v)) return false;
    if (s.format) {
      const format = FORMATS[s.format as string];
      if (!format) and(undefined);
      else if (!format.test(v)) return false;
    }
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) return false;
    if (s.maxItems !== undefined && v.length > s.maxItems) return false;
    if (s.items) for (const item of v) and(accepts(s.items, item));
  }
  if (isObject(v)) {
    const keys = Object.keys(v);
    if (s.maxProperties !== undefined && keys.length > s.maxProperties) return false;
    for (const key of (s.required as string[] | undefined) ?? []) if (!(key in v)) return false;
    for (const key of keys) {
      const ps = s.properties?.[key];
      if (ps) and(accepts(ps, v[key]));
      else if (s.additionalProperties === false) return false;
      else if (isObject(s.additionalProperties)) and(accepts(s.additionalProperties, v[key]));
      else if (s.patternProperties) and(undefined);
    }
  }
  if (s.anyOf || s.oneOf) {
    const results = ((s.anyOf ?? s.oneOf) as Schema[]).map((b) => accepts(b, v));
    if (results.includes(true)) return verdict;
    if (results.includes(undefined)) return undefined;
    return false;
  }
  return verdict;
}

/** The smallest value a schema accepts, as far as this reader can make one. */
function minimal(s: Schema | undefined): unknown {
  if (!s) return undefined;
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  if (s.discriminator || s.if) return minimal(s.oneOf?.[0] ?? s.else);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      if (s.anyOf) return '';
      if (s.format === 'uuid') return UNKNOWN_UUID;
      if (s.format === 'email') return 'someone@example.com';
      if (s.format === 'uri' || String(s.pattern ?? '').includes('https?')) return 'https://example.com/';
      return 'a'.repeat(Math.max(1, s.minLength ?? 1));
    case 'integer':
    case 'number':
      return s.minimum ?? 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of (s.required as string[] | undefined) ?? []) out[key] = minimal(s.properties?.[key]);
      return out;
    }
  }
  const branch = (s.anyOf ?? s.oneOf)?.[0];
  return branch ? minimal(branch) : undefined;
}

/** The object form of a schema: itself, or its first object branch. */
function objectView(s: Schema | undefined): Schema | undefined {
  if (!s) return undefined;
  if (s.properties) return s;
  if (s.if) return objectView(s.else);
  if (!s.discriminator) {
    for (const b of (s.anyOf ?? s.oneOf ?? []) as Schema[]) if (b.properties) return b;
  }
  return undefined;
}

function childSchema(s: Schema | undefined, key: string | number): Schema | undefined {
  if (!s) return undefined;
  if (typeof key === 'number') {
    const items = s.items ?? ((s.anyOf ?? s.oneOf ?? []) as Schema[]).find((b) => b.items)?.items;
    return items;
  }
  const view = objectView(s);
  return view?.properties?.[key] ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
}

interface Leaf {
  path: Path;
  schema: Schema;
}

/** Every property reachable from a schema (nested objects, array items, map values), three levels deep. */
function leavesOf(root: Schema | undefined): Leaf[] {
  const out: Leaf[] = [];
  const seen = new Set<string>();
  const add = (path: Path, schema: Schema, depth: number) => {
    const key = JSON.stringify(path);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ path, schema });
    if (path.length < 3) walk(schema, path, depth + 1);
  };
  const walk = (s: Schema, path: Path, depth: number) => {
    if (depth > 3) return;
    const view = objectView(s);
    for (const [key, ps] of Object.entries<Schema>(view?.properties ?? {})) add([...path, key], ps, depth);
    if (isObject(s.additionalProperties)) add([...path, 'zz_key'], s.additionalProperties as Schema, depth);
    const items = childSchema(s, 0);
    if (items && !items.discriminator) add([...path, 0], items, depth);
  };
  if (root) walk(root, [], 0);
  return out;
}

/** A copy of `root` with `value` at `path`, containers on the way made minimal-valid. */
function setAt(root: unknown, schema: Schema | undefined, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...Path];
  const child = childSchema(schema, head);
  if (typeof head === 'number') {
    const list = Array.isArray(root) ? [...root] : [];
    const current = head < list.length ? list[head] : minimal(child);
    list[head] = setAt(current, child, rest, value);
    return list;
  }
  const obj: Record<string, unknown> = isObject(root) ? { ...root } : {};
  obj[head] = setAt(obj[head] ?? minimal(child), child, rest, value);
  return obj;
}

const show = (path: Path) => `/${path.join('/')}`;

// ---------------------------------------------------------------------------------------------
// Requests and the judgement of each response

interface Case {
  label: string;
  method: string;
  url: string;
  /** undefined: alice's token; null: no Authorization header; a string: that header value. */
  authorization?: string | null;
  payload?: string;
  /** undefined: application/json when there is a payload; null: no Content-Type header. */
  contentType?: string | null;
  headers?: Record<string, string>;
  kind: Kind;
  /** For invalid input: the acceptable statuses. */
  status?: number[];
  /** For a 405: the methods Allow must list. */
  allow?: string[];
  /** Success bodies of this route are not the envelope (/health). */
  plainSuccess?: boolean;
}

interface Report {
  requests: number;
  failures: string[];
}

const clip = (text: string, n = 240) =>
  text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text;

/** Routes whose success is not the envelope: health, and documents meant for other tools (HAR, test files). */
const PLAIN_SUCCESS = new Set([
  '/health',
  '/buckets/{bucket_key}/messages.har',
  '/buckets/{bucket_key}/tests/{test_id}/export',
]);

function judge(c: Case, res: LightMyRequestResponse): string[] {
  const problems: string[] = [];
  const s = res.statusCode;
  if (s >= 500) problems.push('server error for client input');
  if (s >= 400) {
    let body: any;
    try {
      body = JSON.parse(res.body);
    } catch {
      problems.push('error body is not JSON');
    }
    if (body !== undefined) {
      if (body?.data !== null) problems.push('error envelope: data is not null');
      if (body?.meta?.status !== 'error') problems.push('error envelope: meta.status is not "error"');
      const e = body?.error;
      if (!isObject(e)) problems.push('error envelope: no error object');
      else {
        if (e.status !== s) problems.push(`error.status ${String(e.status)} differs from the HTTP status`);
        if (typeof e.code !== 'string' || e.code === '') problems.push('error.code is not a string');
        if (typeof e.message !== 'string' || e.message.trim() === '') problems.push('error.message is empty');
        if (typeof e.more_info !== 'string' || e.more_info === '')
          problems.push('error.more_info is missing');
        if (e.field !== undefined && typeof e.field !== 'string')
          problems.push('error.field is not a string');
      }
    }
    if (!String(res.headers['content-type'] ?? '').startsWith('application/json'))
      problems.push(`error Content-Type is ${String(res.headers['content-type'])}`);
  }
  if (s === 401 && !/^Bearer\b/i.test(String(res.headers['www-authenticate'] ?? '')))
    problems.push('401 without WWW-Authenticate: Bearer');
  if (s === 405) {
    const allow = String(res.headers.allow ?? '')
      .split(',')
      .map((m) => m.trim().toUpperCase())
      .filter(Boolean)
      .sort();
    if (allow.length === 0) problems.push('405 without Allow');
    else if (c.allow && JSON.stringify(allow) !== JSON.stringify([...c.allow].sort()))
      problems.push(`Allow is "${allow.join(', ')}", expected "${[...c.allow].sort().join(', ')}"`);
  }
  if (c.kind === 'invalid' && s < 400) problems.push('accepted input that is invalid');
  if (c.kind === 'invalid' && c.status && s >= 400 && s < 500 && !c.status.includes(s))
    problems.push(`expected ${c.status.join(' or ')}`);
  if (c.kind === 'valid' && (s < 200 || s >= 300)) problems.push('refused input that is valid');
  if (s >= 200 && s < 300) {
    if (s === 204) {
      if (res.body !== '') problems.push('204 with a body');
    } else if (!c.plainSuccess) {
      try {
        const body = JSON.parse(res.body);
        if (body?.meta?.status !== 'success' || body?.error !== null)
          problems.push('success envelope malformed');
      } catch {
        problems.push('success body is not JSON');
      }
    }
  }
  return problems;
}

async function send(h: ApiHarness, report: Report, c: Case): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...(c.headers ?? {}) };
  const authorization = c.authorization === undefined ? `Bearer ${h.alice.token}` : c.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const contentType =
    c.contentType === undefined && c.payload !== undefined ? 'application/json' : c.contentType;
  if (contentType) headers['content-type'] = contentType;
  const res = await h.app.inject({
    method: c.method as InjectOptions['method'],
    url: c.url,
    headers,
    ...(c.payload !== undefined && { payload: c.payload }),
  });
  report.requests++;
  const problems = judge(c, res);
  if (problems.length > 0) {
    const input = c.payload === undefined ? '' : ` body ${clip(c.payload, 160)}`;
    const ct = contentType ? ` content-type "${contentType}"` : '';
    const auth = c.authorization === undefined ? '' : ` authorization ${clip(String(c.authorization), 60)}`;
    report.failures.push(
      `${c.method} ${clip(c.url, 160)} [${c.label}]${ct}${auth}${input} → ${res.statusCode}: ` +
        `${problems.join('; ')} — ${clip(res.body)}`,
    );
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// Fixtures

interface Fixture {
  bucketKey: string;
  testId: string;
  childId: string;
  envId: string;
  sharedId: string;
  scheduleId: string;
  steps: Record<StepKind, string>;
  /** The steps as stored, by id (the base of a step PUT). */
  stepById: Map<string, Record<string, unknown>>;
  /** A reorder body naming every step of the test. */
  order: unknown[];
  /** The team of the bucket, and a remote agent registered in it. */
  teamId: string;
  agentId: string;
  /** An integration of the team. */
  integrationId: string;
  /** A saved stream view of the bucket, and a revision of the protected test. */
  viewId: string;
  revisionId: string;
}

async function populate(h: ApiHarness, who: Account, bucketKey: string): Promise<Fixture> {
  const req = async (method: InjectOptions['method'], url: string, body?: unknown) => {
    const r = await h.call({ method, url, body, as: who });
    assert.ok(r.statusCode >= 200 && r.statusCode < 300, `${method} ${url} → ${r.statusCode} ${r.body}`);
    return r.json().data;
  };
  const b = `/buckets/${bucketKey}`;
  const child = await req('POST', `${b}/tests`, { name: 'Child', description: null });
  const shared = await req('POST', `${b}/environments`, {
    name: 'Shared base',
    initial_variables: { token: 'abc', host: 'https://api.example.com' },
    verify_ssl: false,
  });
  const created = await req('POST', `${b}/tests`, {
    name: 'Protected',
    description: 'must survive the barrage',
  });
  const tb = `${b}/tests/${created.id}`;
  await req('PUT', `${tb}/steps/${created.steps[0].id}`, {
    method: 'post',
    url: '{{host}}/users?x=1',
    body: '{"name":"ünï"}',
    headers: { Accept: 'application/json', 'X-Many': ['a', 'b'] },
    form: {},
    auth: { auth_type: 'basic', username: 'u', password: 'p' },
    variables: [{ name: 'user', source: 'response_json', property: 'data.id' }],
    scripts: ['assert.equal(response.status, 201)'],
    before_scripts: ['log("before")'],
    note: 'creates a user',
  });
  await req('POST', `${tb}/steps`, { step_type: 'pause', duration: 5 });
  await req('POST', `${tb}/steps`, {
    step_type: 'condition',
    left_value: '{{user}}',
    comparison: 'not_empty',
    right_value: '',
    steps: [
      {
        step_type: 'request',
        method: 'DELETE',
        url: '{{host}}/users/{{user}}',
        assertions: [{ source: 'response_time', comparison: 'is_less_than', value: 1000 }],
      },
    ],
  });
  await req('POST', `${tb}/steps`, {
    step_type: 'subtest',
    test_uuid: child.id,
    environment_uuid: child.default_environment_id,
    params: [{ name: 'user', value: '{{user}}' }],
    assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
  });
  await req('POST', `${tb}/steps`, {
    step_type: 'partner-inspector',
    suite_id: 'suite-1',
    test_id: 'external-1',
    is_custom_start_url: true,
    start_url: 'https://example.com/start',
  });
  const env = await req('POST', `${tb}/environments`, {
    name: 'Staging',
    parent_environment_id: shared.id,
    initial_variables: { user: 'u1' },
    emails: {
      notify_on: 'threshold',
      notify_threshold: 3,
      recipients: [{ email: 'ops@example.com', name: 'Ops' }],
    },
    regions: ['eu-west-1'],
    webhooks: ['https://hooks.example.com/vigil'],
    script: 'variables.set("a", "1")',
  });
  const schedule = await req('POST', `${tb}/schedules`, {
    environment_id: env.id,
    interval: '1h',
    note: 'hourly',
  });
  const detail = await req('GET', tb);
  const view = await req('POST', `${b}/views`, {
    name: 'Protected view',
    stream: 'errors',
    filters: { method: 'GET', status: '5xx', window: '1h' },
  });
  const revisionId = (await req('GET', `${tb}/revisions`)).test_revisions[0].uuid as string;
  const teamId = (await req('GET', '/account')).teams[0].id as string;
  const agent = await req('POST', `/teams/${teamId}/agents`, { name: 'Probe', region: 'office-1' });
  const integration = await req('POST', `/teams/${teamId}/integrations`, {
    integration_type: 'webhook',
    description: 'Protected hook',
    config: { url: 'https://hooks.example.com/team', secret: 'whsec_protected' },
  });
  const stepById = new Map<string, Record<string, unknown>>();
  for (const s of detail.steps) {
    stepById.set(s.id, s);
    for (const inner of s.steps ?? []) stepById.set(inner.id, inner);
  }
  const byType = (type: string) => detail.steps.find((s: any) => s.step_type === type).id as string;
  const condition = detail.steps.find((s: any) => s.step_type === 'condition');
  return {
    bucketKey,
    testId: created.id,
    childId: child.id,
    envId: env.id,
    sharedId: shared.id,
    scheduleId: schedule.id,
    steps: {
      request: byType('request'),
      pause: byType('pause'),
      condition: condition.id,
      embedded: condition.steps[0].id,
      subtest: byType('subtest'),
      'partner-inspector': byType('partner-inspector'),
    },
    stepById,
    order: detail.steps.map((s: any) =>
      s.step_type === 'condition' ? { id: s.id, steps: s.steps.map((i: any) => i.id) } : s.id,
    ),
    teamId,
    agentId: agent.id,
    integrationId: integration.id,
    viewId: view.id,
    revisionId,
  };
}

/**
 * Everything a reader of the bucket can see, by URL, to compare after the barrage. `known` are URLs
 * of an earlier snapshot, read again even when no listing leads to them any more.
 */
async function snapshot(
  h: ApiHarness,
  who: Account,
  bucketKey: string,
  known: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  // An unreadable resource is recorded as such, so the comparison shows what was lost.
  const read = async (url: string) => {
    if (url in state) return state[url] as any;
    const r = await h.call({ method: 'GET', url, as: who });
    state[url] =
      r.statusCode === 200 ? r.json().data : { unreadable: `GET ${url} → ${r.statusCode} ${r.body}` };
    return state[url] as any;
  };
  const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
  const b = `/buckets/${bucketKey}`;
  await read(b);
  for (const view of list(await read(`${b}/views`))) await read(`${b}/views/${view.id}`);
  for (const env of list(await read(`${b}/environments`))) await read(`${b}/environments/${env.id}`);
  for (const t of list(await read(`${b}/tests?count=1000`))) {
    const tb = `${b}/tests/${t.id}`;
    const detail = await read(tb);
    await read(`${tb}/environments`);
    await read(`${tb}/schedules`);
    await read(`${tb}/revisions`);
    await read(`${tb}/export`);
    for (const step of list(detail.steps)) {
      await read(`${tb}/steps/${step.id}`);
      for (const inner of list(step.steps)) await read(`${tb}/steps/${inner.id}`);
    }
    for (const env of list(detail.environments)) await read(`${tb}/environments/${env.id}`);
    for (const schedule of list(detail.schedules)) await read(`${tb}/schedules/${schedule.id}`);
  }
  for (const url of Object.keys(known)) await read(url);
  return state;
}

/** What differs between two snapshots, one line per resource. */
function differences(after: Record<string, unknown>, before: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const now = after[key];
    const then = before[key];
    if (isDeepStrictEqual(now, then)) continue;
    if (!(key in after)) out.push(`${key}: not read`);
    else if (!(key in before)) out.push(`${key}: appeared: ${clip(JSON.stringify(now), 300)}`);
    else if (isObject(now) && 'unreadable' in now) out.push(`${key}: ${clip(String(now.unreadable), 400)}`);
    else out.push(`${key}: was ${clip(JSON.stringify(then), 300)}, now ${clip(JSON.stringify(now), 300)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Routes from the OpenAPI document

interface Route {
  path: string;
  methods: string[];
  ops: Record<string, Schema>;
}

function routesOf(h: ApiHarness): Route[] {
  const doc = h.app.swagger() as Schema;
  return Object.entries<Schema>(doc.paths).map(([path, ops]) => ({
    path,
    methods: Object.keys(ops)
      .map((m) => m.toUpperCase())
      .filter((m) => (METHODS as readonly string[]).includes(m)),
    ops: Object.fromEntries(Object.entries<Schema>(ops).map(([m, op]) => [m.toUpperCase(), op])),
  }));
}

const paramNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

/** The path with its parameters replaced (values already URL-encoded); undefined when one is unknown. */
function fill(path: string, params: Record<string, string>): string | undefined {
  let missing = false;
  const url = path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (value === undefined) missing = true;
    return value ?? '';
  });
  return missing ? undefined : url;
}

function realParams(path: string, fx: Fixture, step: StepKind = 'request'): Record<string, string> {
  return {
    bucket_key: fx.bucketKey,
    test_id: fx.testId,
    step_id: fx.steps[step],
    schedule_id: fx.scheduleId,
    environment_id: path.includes('/tests/{test_id}/environments/') ? fx.envId : fx.sharedId,
    team_id: fx.teamId,
    agent_id: fx.agentId,
    integration_id: fx.integrationId,
    view_id: fx.viewId,
    revision_uuid: fx.revisionId,
  };
}

const bodySchemaOf = (op: Schema | undefined): Schema | undefined =>
  op?.requestBody?.content?.['application/json']?.schema;

/** A valid body for each step type, for adding a step. */
function stepBodies(fx: Fixture): Record<Exclude<StepKind, 'embedded'>, Record<string, unknown>> {
  return {
    request: { step_type: 'request', method: 'GET', url: 'https://example.com/health' },
    pause: { step_type: 'pause', duration: 2 },
    condition: { step_type: 'condition', left_value: 'a', comparison: 'equal', right_value: 'a', steps: [] },
    subtest: { step_type: 'subtest', test_uuid: fx.childId },
    'partner-inspector': { step_type: 'partner-inspector', suite_id: 'suite' },
  };
}

/** A valid body for each write route the suite knows; routes it does not know get generic cases only. */
function baseBody(method: string, path: string, fx: Fixture): unknown {
  const key = `${method} ${path}`;
  const bases: Record<string, unknown> = {
    'POST /buckets': { name: 'Hostile bucket' },
    'PUT /buckets/{bucket_key}': { name: 'Renamed bucket' },
    'POST /buckets/{bucket_key}/tests': { name: 'Hostile' },
    'PUT /buckets/{bucket_key}/tests/{test_id}': { name: 'Renamed' },
    'POST /buckets/{bucket_key}/tests/{test_id}/steps': stepBodies(fx).request,
    'PUT /buckets/{bucket_key}/tests/{test_id}/steps': fx.order,
    'PUT /buckets/{bucket_key}/tests/{test_id}/steps/{step_id}': { note: 'changed' },
    'POST /buckets/{bucket_key}/tests/{test_id}/environments': { name: 'Hostile env' },
    'PUT /buckets/{bucket_key}/tests/{test_id}/environments/{environment_id}': { name: 'Renamed env' },
    'POST /buckets/{bucket_key}/environments': { name: 'Hostile shared' },
    'PUT /buckets/{bucket_key}/environments/{environment_id}': { name: 'Renamed shared' },
    'POST /buckets/{bucket_key}/tests/{test_id}/schedules': { interval: '1d' },
    'POST /buckets/{bucket_key}/maintenance_windows': { mode: 'mute', starts_at: 1, ends_at: 2 },
    'POST /teams/{team_id}/agents': { name: 'Hostile agent', region: 'hostile-1' },
    // Team routes are reached since fixtures name their team (team_id).
    'POST /teams/{team_id}/integrations': {
      integration_type: 'pagerduty',
      config: { routing_key: 'abc123' },
    },
    'PUT /teams/{team_id}/integrations/{integration_id}': { notify_on: 'switch' },
    'PUT /buckets/{bucket_key}/tests/{test_id}/schedules/{schedule_id}': { note: 'changed' },
    // `PUT /account` and `POST /account/password` get refusals only (no base body): a valid rename
    // would change alice's name in every snapshot (created_by), and a valid password change needs
    // the current password, so schema-valid bodies are refused by the service.

    'POST /teams/{team_id}/roles': { name: 'Hostile role', permissions: ['view'] },
    'POST /teams/{team_id}/invitations': { email: 'hostile@example.com' },
    'POST /buckets/{bucket_key}/views': { name: 'Hostile view', stream: 'messages', filters: { q: 'x' } },
    'PUT /buckets/{bucket_key}/views/{view_id}': { name: 'Renamed view', stream: 'errors' },
    'POST /buckets/{bucket_key}/imports': { content: 'curl https://api.example.com/items', dry_run: true },
    'POST /buckets/{bucket_key}/tests/{test_id}/notification-preview': {
      channel: 'slack',
      template: { body: '{{test_name}}' },
    },
    'POST /buckets/{bucket_key}/status-pages': {
      slug: 'hostile-page',
      title: 'Hostile',
      groups: [{ name: 'All', tests: [{ test_id: fx.testId, name: 'Hostile' }] }],
    },
    'POST /buckets/{bucket_key}/messages': {
      request: { method: 'GET', url: 'https://api.example.com/items?a=1' },
      response: { status: 200, body: 'ok' },
    },
  };
  return bases[key];
}

/** One write route aimed at one fixture resource, with what a valid body looks like there. */
interface Target {
  name: string;
  method: string;
  path: string;
  protectedUrl: string;
  scratchUrl?: string;
  base: unknown;
  /** The schema the leaves come from (the step type's branch for step routes). */
  schema: Schema | undefined;
  /** Whether a body is valid for this route as the service sees it (a step PUT merges first). */
  verdict(body: unknown): boolean | undefined;
  /** Whether every field gets its own cases (off where another target has the same fields). */
  matrix: boolean;
  /** Whether the route documents a form body too (POST /buckets, as go-runscope sends it). */
  forms?: boolean;
}

function targetsFor(
  route: Route,
  method: string,
  routes: Route[],
  prot: Fixture,
  scratch: Fixture,
): Target[] {
  const op = route.ops[method];
  const schema = bodySchemaOf(op);
  const { path } = route;
  const stepRoute = path.endsWith('/steps/{step_id}');
  const addStep = method === 'POST' && path.endsWith('/steps');
  if (stepRoute || addStep) {
    // The step types' schemas are those of adding a step; a step PUT takes properties of the same shape.
    const stepsPath = addStep ? path : path.replace(/\/\{step_id\}$/, '');
    const addSchema = bodySchemaOf(routes.find((r) => r.path === stepsPath)?.ops.POST);
    const branches = addSchema?.oneOf as Schema[] | undefined;
    const branchOf = (type: string) =>
      branches?.find((b) =>
        (b.properties?.step_type?.enum ?? [b.properties?.step_type?.const]).includes(type),
      );
    const kinds = addStep ? STEP_KINDS.filter((k) => k !== 'embedded') : STEP_KINDS;
    return kinds.map((kind) => {
      const stepType = kind === 'embedded' ? 'request' : kind;
      const branch = branchOf(stepType);
      const current = prot.stepById.get(prot.steps[kind]);
      const protectedUrl = fill(path, realParams(path, prot, kind))!;
      const scratchUrl = fill(path, realParams(path, scratch, kind));
      if (addStep) {
        return {
          name: `${method} ${path} (${kind})`,
          method,
          path,
          protectedUrl,
          scratchUrl,
          base: stepBodies(prot)[kind as Exclude<StepKind, 'embedded'>],
          schema: branch,
          verdict: (body: unknown) => accepts(schema ?? branch, body),
          matrix: true,
        };
      }
      return {
        name: `${method} ${path} (${kind})`,
        method,
        path,
        protectedUrl,
        scratchUrl,
        base: {},
        schema: branch,
        // The service merges the patch into the stored step and validates the whole; the type stays.
        verdict: (body: unknown) => {
          if (!isObject(body)) return false;
          if (!current) return undefined;
          if ('step_type' in body && body.step_type !== current.step_type) return false;
          return accepts(branch, { ...current, ...body, id: current.id, step_type: current.step_type });
        },
        // An embedded request step has the fields of a top-level one, which get the full matrix.
        matrix: kind !== 'embedded',
      };
    });
  }
  const protectedUrl = fill(path, realParams(path, prot));
  if (protectedUrl === undefined) return [];
  const reorder = method === 'PUT' && path.endsWith('/steps');
  const importing = method === 'POST' && path.endsWith('/imports');
  const base = baseBody(method, path, prot);
  return [
    {
      name: `${method} ${path}`,
      method,
      path,
      protectedUrl,
      scratchUrl: reorder ? undefined : fill(path, realParams(path, scratch)),
      base,
      schema,
      verdict: (body: unknown) => {
        // A reorder must name every step of the test; an empty or partial list is refused.
        if (reorder && Array.isArray(body) && JSON.stringify(body) !== JSON.stringify(prot.order)) {
          return accepts(schema, body) === false ? false : body.length === 0 ? false : undefined;
        }
        // A one-off maintenance window must end after it starts.
        if (
          path.endsWith('/maintenance_windows') &&
          isObject(body) &&
          typeof body.starts_at === 'number' &&
          typeof body.ends_at === 'number' &&
          body.ends_at <= body.starts_at
        ) {
          return false;
        }
        // Whether another `content` (or an `environment`) is a file it can read is the importer's to
        // say: schema-valid ones may be refused (test/api/imports.test.ts fuzzes them).
        if (
          importing &&
          isObject(body) &&
          isObject(base) &&
          (JSON.stringify(body.content) !== JSON.stringify(base.content) || 'environment' in body)
        )
          return accepts(schema, body) === false ? false : undefined;
        // A status page names tests and an environment of its own bucket, which no schema can say.
        if (path === '/buckets/{bucket_key}/status-pages')
          return accepts(schema, body) === false ? false : undefined;
        return accepts(schema, body);
      },
      matrix: true,
      forms: op?.requestBody?.content?.['application/x-www-form-urlencoded'] !== undefined,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Body cases for one target

interface BodyCase {
  label: string;
  payload?: string;
  contentType?: string | null;
  headers?: Record<string, string>;
  kind: Kind;
  status?: number[];
}

const WRONG_TYPES: [string, unknown][] = [
  ['null', null],
  ['boolean', true],
  ['integer', 12345],
  ['fraction', 1.5],
  ['string', 'wrong type'],
  ['array', []],
  ['object', {}],
];

const NUMBER_LITERALS = ['1e400', '-1e400', '-0', '9223372036854775808', '1e-400', '"NaN"'];

function bodyCases(target: Target, rng: () => number): BodyCase[] {
  const cases: BodyCase[] = [];
  const { base, schema } = target;
  const leaves = leavesOf(schema).filter(
    // A step PUT keeps the step's id whatever the body says.
    (leaf) => !(target.method === 'PUT' && target.path.endsWith('/{step_id}') && leaf.path[0] === 'id'),
  );
  const kindOf = (verdict: boolean | undefined, surely = true): Kind =>
    verdict === false ? 'invalid' : verdict === true && surely ? 'valid' : 'either';
  const withValue = (label: string, path: Path, value: unknown, proxy: unknown = value, surely = true) => {
    const body = setAt(base, schema, path, value);
    const verdict = target.verdict(setAt(base, schema, path, proxy));
    cases.push({ label, payload: encode(body), kind: kindOf(verdict, surely), status: [400] });
  };
  const invalid = (label: string, payload: string, status = [400], contentType?: string | null) =>
    cases.push({
      label,
      payload,
      kind: 'invalid',
      status,
      ...(contentType !== undefined && { contentType }),
    });

  const baseText = encode(base ?? {});
  const isObj = isObject(base) || base === undefined;
  /** Inserts `"key": valueText` as the first member of the top-level object (or of the first array item). */
  const withMember = (keyText: string, valueText: string): string => {
    if (isObj)
      return baseText === '{}'
        ? `{${keyText}:${valueText}}`
        : `{${keyText}:${valueText},${baseText.slice(1)}`;
    return `[{${keyText}:${valueText},"id":"x","steps":[]}]`;
  };
  // The field most hostile values go into: a plain text field, not a reference to another resource.
  const plain = (l: Leaf) => {
    const t = typesOf(l.schema);
    return l.path.length === 1 && t?.has('string') && !l.schema.enum && !l.schema.pattern && !l.schema.format;
  };
  const primary = leaves.find((l) => plain(l) && !/(?:^id|_id|uuid)$/.test(String(l.path[0])))?.path ??
    leaves.find(plain)?.path ??
    leaves[0]?.path ?? ['zz_field'];
  const primarySchema = leaves.find((l) => JSON.stringify(l.path) === JSON.stringify(primary))?.schema;

  // Broken JSON
  invalid('malformed JSON', isObj ? `{"${String(primary[0])}": "x",,}` : '["x",,]');
  invalid('truncated JSON', baseText.slice(0, Math.max(1, Math.ceil(baseText.length / 2))));
  invalid('two JSON documents', `${baseText}${baseText}`);
  invalid('single quotes', `{'${String(primary[0])}': 'x'}`);
  invalid('leading zero', isObj ? `{"zz":01}` : '[01]');
  invalid('bare word', 'undefined');
  invalid('NUL byte outside strings', `${baseText}\u0000`);
  invalid('only a NUL escape', '"\\u0000"');
  invalid('empty body', '');
  invalid('whitespace body', ' \n\t ');
  cases.push({ label: 'BOM before valid JSON', payload: `\ufeff${baseText}`, kind: 'either' });

  // Wrong top-level types
  for (const [label, value] of WRONG_TYPES) {
    cases.push({
      label: `top-level ${label}`,
      payload: encode(value),
      kind: kindOf(target.verdict(value)),
      status: [400],
    });
  }

  // Deep nesting (10k levels; the whole body also 100k)
  for (const depth of [10_000]) {
    withValue(`array nested ${depth} deep in ${show(primary)}`, primary, new Raw(deepArray(depth)), [[]]);
    withValue(`object nested ${depth} deep in ${show(primary)}`, primary, new Raw(deepObject(depth)), {
      a: { a: 1 },
    });
    cases.push({
      label: `object nested ${depth} deep with a NUL at the bottom in ${show(primary)}`,
      payload: encode(setAt(base, schema, primary, new Raw(deepObject(depth, '"\\u0000"')))),
      kind: 'invalid',
      status: [400],
    });
    // The NUL elsewhere makes the server look for it through the whole (deep) body.
    cases.push({
      label: `object nested ${depth} deep in an unknown field, NUL in ${show(primary)}`,
      payload: encode(
        setAt(setAt(base, schema, primary, 'a\u0000b'), schema, ['zz_deep'], new Raw(deepObject(depth))),
      ),
      kind: 'invalid',
      status: [400],
    });
    cases.push({
      label: `object nested ${depth} deep in an unknown field`,
      payload: isObj
        ? encode(setAt(base, schema, ['zz_deep'], new Raw(deepObject(depth))))
        : deepArray(depth),
      kind: isObj
        ? kindOf(target.verdict(setAt(base, schema, ['zz_deep'], { a: { a: 1 } })), false)
        : 'invalid',
      status: [400],
    });
  }
  invalid('whole body an array nested 100000 deep', deepArray(100_000));

  // Prototype pollution
  invalid('__proto__ key', withMember('"__proto__"', '{"polluted":"yes"}'));
  invalid('escaped __proto__ key', withMember('"\\u005f_proto__"', '{"polluted":"yes"}'));
  invalid('constructor.prototype', withMember('"constructor"', '{"prototype":{"polluted":"yes"}}'));
  const objectLeaf = leaves.find((l) => typesOf(l.schema)?.has('object'));
  if (objectLeaf) {
    const text = encode(setAt(base, schema, objectLeaf.path, new Raw('{"__proto__":{"polluted":"yes"}}')));
    invalid(`__proto__ inside ${show(objectLeaf.path)}`, text);
    const text2 = encode(
      setAt(base, schema, objectLeaf.path, new Raw('{"constructor":{"prototype":{"polluted":"yes"}}}')),
    );
    invalid(`constructor.prototype inside ${show(objectLeaf.path)}`, text2);
  }

  // NUL characters
  invalid('NUL in a property name', withMember('"na\\u0000me"', '"x"'));
  const stringLeaves = leaves.filter((l) => typesOf(l.schema)?.has('string'));
  for (const leaf of pick(rng, stringLeaves, 3)) {
    cases.push({
      label: `NUL in ${show(leaf.path)}`,
      payload: encode(setAt(base, schema, leaf.path, 'a\u0000b')),
      kind: 'invalid',
      status: [400],
    });
  }

  // Lone surrogates (well-formed JSON escapes, ill-formed Unicode): refused or kept, never a crash.
  for (const [i, leaf] of pick(rng, stringLeaves, 2).entries()) {
    const value = i === 0 ? '\ud800' : 'x\udfffy';
    withValue(
      `lone surrogate ${JSON.stringify(value)} in ${show(leaf.path)}`,
      leaf.path,
      value,
      value,
      false,
    );
  }

  // Awkward but valid Unicode
  if (primarySchema && typesOf(primarySchema)?.has('string')) {
    withValue(`Unicode in ${show(primary)}`, primary, unicodeString(rng, 24));
  }
  withValue(`number 1e400 in ${show(primary)}`, primary, new Raw('1e400'), Number.POSITIVE_INFINITY);

  // Unknown fields
  if (isObj) {
    const extra = {
      ...(isObject(base) ? base : {}),
      zz_unknown: 'x',
      zz_number: 1,
      zz_list: [1, { a: null }],
    };
    cases.push({
      label: 'extra unknown fields',
      payload: encode(extra),
      kind: kindOf(target.verdict(extra), false),
    });
  }

  // Every field: each wrong JSON type, bounds, formats, numbers
  for (const leaf of target.matrix ? leaves : []) {
    const at = show(leaf.path);
    const s = leaf.schema;
    for (const [label, value] of WRONG_TYPES) {
      if (accepts(s, value) !== false) continue;
      const t = typesOf(s);
      // Only values of another type here; bounds get their own cases below.
      if (t && (t.has(jsonType(value)) || (jsonType(value) === 'integer' && t.has('number')))) continue;
      withValue(`${at} as ${label}`, leaf.path, value);
    }
    const types = typesOf(s);
    if (types?.has('string')) {
      if (s.enum) withValue(`${at} not one of the listed values`, leaf.path, 'not_a_listed_value');
      const formed = [s, ...((s.anyOf ?? []) as Schema[])].some((b) => b.pattern || b.format);
      if (formed) withValue(`${at} in a wrong form`, leaf.path, 'not a valid value ✗');
      if (s.minLength > 0) withValue(`${at} empty`, leaf.path, '');
      if (s.maxLength !== undefined && s.maxLength + 1 < BODY_LIMIT - 8_192) {
        withValue(`${at} over maxLength ${s.maxLength}`, leaf.path, 'x'.repeat(s.maxLength + 1));
      }
      if (s.maxLength === undefined && !s.enum && (s.pattern || s.format)) {
        withValue(`${at} of 100000 characters`, leaf.path, 'x'.repeat(100_000));
      }
    }
    if (types?.has('integer') || types?.has('number')) {
      for (const literal of NUMBER_LITERALS) {
        withValue(`${at} = ${literal}`, leaf.path, new Raw(literal), JSON.parse(literal));
      }
      if (s.minimum !== undefined) withValue(`${at} below minimum`, leaf.path, s.minimum - 1);
      if (s.maximum !== undefined) withValue(`${at} above maximum`, leaf.path, s.maximum + 1);
    }
    if (types?.has('array') && s.maxItems !== undefined && s.maxItems <= 1_000) {
      const item = minimal(s.items) ?? 'a';
      withValue(
        `${at} with ${s.maxItems + 1} items`,
        leaf.path,
        Array.from({ length: s.maxItems + 1 }, () => item),
      );
    }
    if (types?.has('object') && s.maxProperties !== undefined && s.maxProperties <= 1_000) {
      const value = minimal(s.additionalProperties) ?? 'v';
      const many = Object.fromEntries(
        Array.from({ length: s.maxProperties + 1 }, (_, i) => [`k${i}`, value]),
      );
      withValue(`${at} with ${s.maxProperties + 1} properties`, leaf.path, many);
    }
    if (types?.has('object') && isObject(s.additionalProperties)) {
      // Names the documented schema does not describe: refused or kept, never a crash.
      withValue(
        `${at} with an odd property name`,
        leaf.path,
        { 'bad name\u0007 \u202e': 'v' },
        undefined,
        false,
      );
    }
  }

  // Content types, size and framing, with an otherwise valid body
  if (base !== undefined) {
    invalid('no Content-Type', baseText, [415], null);
    invalid('text/plain', baseText, [415], 'text/plain');
    if (target.forms) {
      cases.push({
        label: 'form encoded',
        payload: 'name=x',
        kind: 'either',
        contentType: 'application/x-www-form-urlencoded',
      });
    } else invalid('form encoded', 'name=x', [415], 'application/x-www-form-urlencoded');
    invalid('application/jsonp', baseText, [415], 'application/jsonp');
    cases.push({
      label: 'charset=latin1',
      payload: baseText,
      contentType: 'application/json; charset=latin1',
      kind: 'either',
    });
    cases.push({
      label: 'upper-case media type',
      payload: baseText,
      contentType: 'APPLICATION/JSON',
      kind: 'either',
    });
    cases.push({
      label: 'Content-Length larger than the body',
      payload: baseText,
      headers: { 'content-length': String(Buffer.byteLength(baseText) + 10) },
      kind: 'invalid',
      status: [400],
    });
  }
  invalid('malformed JSON with charset=latin1', '{"x":', [400, 415], 'application/json; charset=latin1');
  invalid(
    'body over the 1 MiB limit',
    isObj
      ? encode({ [String(primary[0])]: 'x'.repeat(BODY_LIMIT + 1_024) })
      : encode(['x'.repeat(BODY_LIMIT + 1_024)]),
    [413],
  );
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Path parameters and query strings

const BOGUS_SEGMENTS = (rng: () => number): [string, string][] => [
  ['malformed id', 'not-an-id'],
  ['unknown uuid', UNKNOWN_UUID],
  ['10k characters', 'a'.repeat(10_000)],
  ['unicode', encodeURIComponent('ünïcødé-🙂-\u202e-名前')],
  ['random unicode', encodeURIComponent(unicodeString(rng, 12))],
  ['dot-dot slash', '..%2F..'],
  ['percent-encoded NUL', '%00'],
  ['SQL', encodeURIComponent("' OR 1=1 --")],
  ['bad percent-encoding', '%E0%A4%A'],
  ['upper-case uuid', UNKNOWN_UUID.toUpperCase()],
];

const QUERIES: { query: string; key: string; valid: boolean | undefined }[] = [
  { query: 'count=-1', key: 'count', valid: false },
  { query: 'count=abc', key: 'count', valid: false },
  { query: 'offset=1e999', key: 'offset', valid: false },
  { query: 'count=1&count=2', key: 'count', valid: false },
  { query: 'offset=-1', key: 'offset', valid: false },
  { query: 'count=0', key: 'count', valid: false },
  // Infinity as a page size: refused, or capped like any large count (DESIGN: larger values are capped).
  { query: 'count=1e400', key: 'count', valid: undefined },
  { query: 'count=1.5', key: 'count', valid: false },
  { query: 'count=%00', key: 'count', valid: false },
  { query: 'count=', key: 'count', valid: false },
  { query: 'offset=9223372036854775808', key: 'offset', valid: false },
  { query: 'count=9223372036854775808', key: 'count', valid: true },
  { query: 'count[]=1', key: 'count[]', valid: true },
  { query: '__proto__=1&constructor[prototype][polluted]=yes', key: '__proto__', valid: true },
  { query: '%ZZ=1&=&&', key: '%ZZ', valid: true },
];

// ---------------------------------------------------------------------------------------------

await describeApi('hostile input', (get) => {
  let prot: Fixture;
  let scratch: Fixture;
  let foreign: Fixture;
  let before: Record<string, unknown>;
  let foreignBefore: Record<string, unknown>;
  let bucketsBefore: any[];
  let routes: Route[];
  let publicPaths: Set<string>;
  let bucketsCreated = 0;
  const total: Report = { requests: 0, failures: [] };
  const rng = mulberry32(SEED);

  /** Runs cases, then fails once with every problem found. */
  const barrage = async (cases: Case[]) => {
    const report: Report = { requests: 0, failures: [] };
    for (const c of cases) {
      const res = await send(get(), report, c);
      if (c.method === 'POST' && c.url.split('?')[0] === '/buckets' && res.statusCode === 201)
        bucketsCreated++;
    }
    total.requests += report.requests;
    total.failures.push(...report.failures);
    assert.deepEqual(
      report.failures,
      [],
      `${report.failures.length} of ${report.requests} requests went wrong`,
    );
  };

  test('fixtures: a test with every step type, environments, a shared one and a schedule', async () => {
    const h = get();
    prot = await populate(h, h.alice, h.alice.bucketKey);
    const scratchBucket = await h.data('POST', '/buckets', { name: 'Scratch' });
    scratch = await populate(h, h.alice, scratchBucket.key);
    foreign = await populate(h, h.bob, h.bob.bucketKey);
    before = await snapshot(h, h.alice, h.alice.bucketKey);
    foreignBefore = await snapshot(h, h.bob, h.bob.bucketKey);
    bucketsBefore = await h.data('GET', '/buckets');
    routes = routesOf(h);
    assert.ok(routes.length >= 15, `only ${routes.length} paths in the OpenAPI document`);
    publicPaths = new Set<string>();
    for (const route of routes) {
      if (!route.methods.includes('GET') || paramNames(route.path).length > 0) continue;
      const res = await h.app.inject({ method: 'GET', url: route.path });
      if (res.statusCode !== 401) publicPaths.add(route.path);
    }
    assert.ok(publicPaths.has('/health'));
  });

  test('every documented GET answers with the real ids', async () => {
    const cases: Case[] = [];
    for (const route of routes) {
      if (!route.methods.includes('GET')) continue;
      for (const fx of [prot, scratch]) {
        const url = fill(route.path, realParams(route.path, fx));
        if (url === undefined) continue;
        cases.push({
          label: 'real ids',
          method: 'GET',
          url,
          kind: 'valid',
          plainSuccess: PLAIN_SUCCESS.has(route.path),
        });
      }
    }
    await barrage(cases);
  });

  test('hostile path parameters answer 404 (or 400) in the error envelope', async () => {
    const cases: Case[] = [];
    const segments = BOGUS_SEGMENTS(rng);
    for (const route of routes) {
      const names = paramNames(route.path);
      if (names.length === 0) continue;
      for (const method of route.methods) {
        const real = realParams(route.path, prot);
        const base = WRITE_METHODS.has(method) ? baseBody(method, route.path, prot) : undefined;
        const payload = base === undefined ? undefined : encode(base);
        for (const name of names) {
          for (const [label, segment] of segments) {
            const url = fill(route.path, { ...real, [name]: segment });
            if (url === undefined) continue;
            const long = segment.length > 1_000;
            cases.push({
              label: `${name} ${label}`,
              method,
              url,
              ...(payload !== undefined && { payload }),
              kind: 'invalid',
              status: long ? [404, 414] : [400, 404],
            });
          }
          // Another account's resource, with everything else real: as if it did not exist.
          const foreignUrl = fill(route.path, { ...real, [name]: realParams(route.path, foreign)[name]! });
          if (foreignUrl)
            cases.push({
              label: `${name} of another account`,
              method,
              url: foreignUrl,
              ...(payload !== undefined && { payload }),
              kind: 'invalid',
              status: [404],
            });
        }
        // Every parameter bogus at once, and the whole URL over 10k characters.
        const allBogus = fill(route.path, Object.fromEntries(names.map((n) => [n, `%27%22${n}%3C`])));
        if (allBogus)
          cases.push({
            label: 'all parameters bogus',
            method,
            url: allBogus,
            ...(payload !== undefined && { payload }),
            kind: 'invalid',
            status: [400, 404],
          });
      }
    }
    await barrage(cases);
  });

  test('wrong methods answer 405 with Allow', async () => {
    const cases: Case[] = [];
    for (const route of routes) {
      const url = fill(route.path, realParams(route.path, prot));
      if (url === undefined) continue;
      for (const method of [...METHODS, 'OPTIONS']) {
        if (route.methods.includes(method)) continue;
        const base = WRITE_METHODS.has(method) ? { name: 'should not land' } : undefined;
        cases.push({
          label: 'wrong method',
          method,
          url,
          ...(base !== undefined && { payload: encode(base) }),
          kind: 'invalid',
          status: [405],
          allow: route.methods,
        });
      }
    }
    await barrage(cases);
  });

  test('missing, garbled, foreign and under-scoped credentials', async () => {
    const h = get();
    const readOnly = await h.tokenWith(['api:read']);
    const noRead = await h.tokenWith(['message:write']);
    const token = h.alice.token;
    const garbled: [string, string | null][] = [
      ['no Authorization', null],
      ['scheme only', 'Bearer'],
      ['empty token', 'Bearer    '],
      ['Basic credentials', 'Basic YWxpY2U6c2VjcmV0'],
      ['unknown token', 'Bearer vgl_this-token-was-never-issued'],
      ['token with a suffix', `Bearer ${token}x`],
      ['truncated token', `Bearer ${token.slice(0, -1)}`],
      ['two tokens', `Bearer ${token} ${token}`],
      ['two headers folded', `Bearer ${token}, Bearer ${token}`],
      ['10k-character token', `Bearer ${'A'.repeat(10_000)}`],
      ['other scheme', `Token ${token}`],
      ['Latin-1 bytes', 'Bearer \u00ff\u00fe\u00e9'],
      ['SQL', "Bearer ' OR 1=1 --"],
    ];
    const cases: Case[] = [];
    for (const route of routes) {
      if (publicPaths.has(route.path)) continue;
      const url = fill(route.path, realParams(route.path, prot));
      if (url === undefined) continue;
      for (const method of route.methods) {
        const base = WRITE_METHODS.has(method) ? baseBody(method, route.path, prot) : undefined;
        const payload = base === undefined ? undefined : encode(base);
        const common = { method, url, ...(payload !== undefined && { payload }) };
        for (const [label, authorization] of garbled) {
          cases.push({ ...common, label, authorization, kind: 'invalid', status: [401] });
        }
        if (method === 'GET') {
          cases.push({
            ...common,
            label: 'token without api:read',
            authorization: `Bearer ${noRead}`,
            kind: 'invalid',
            status: [403],
          });
        } else {
          cases.push({
            ...common,
            label: 'read-only token',
            authorization: `Bearer ${readOnly}`,
            kind: 'invalid',
            status: [403],
          });
        }
        if (paramNames(route.path).includes('bucket_key')) {
          cases.push({
            ...common,
            label: "another account's token",
            authorization: `Bearer ${h.bob.token}`,
            kind: 'invalid',
            status: [404],
          });
        }
      }
    }
    await barrage(cases);
  });

  test('hostile query strings', async () => {
    const cases: Case[] = [];
    for (const route of routes) {
      const url = fill(route.path, realParams(route.path, prot));
      if (url === undefined) continue;
      for (const method of route.methods) {
        const op = route.ops[method];
        const declared = new Set<string>(
          ((op?.parameters ?? []) as Schema[]).filter((p) => p.in === 'query').map((p) => p.name as string),
        );
        if (method === 'GET') {
          for (const q of QUERIES) {
            const kind: Kind =
              !declared.has(q.key) || q.valid ? 'valid' : q.valid === false ? 'invalid' : 'either';
            cases.push({
              label: `?${q.query}`,
              method,
              url: `${url}?${q.query}`,
              kind,
              status: [400],
              plainSuccess: PLAIN_SUCCESS.has(route.path),
            });
          }
        } else if (declared.size > 0) {
          // A write that takes query parameters (POST /buckets?name=): only refusals here.
          for (const name of declared) {
            for (const value of ['', '%00', 'x'.repeat(256), 'a&' + name + '=b', 'a%00b']) {
              cases.push({
                label: `?${name}=${clip(value, 20)}`,
                method,
                url: `${url}?${name}=${value}`,
                kind: 'invalid',
                status: [400],
              });
            }
          }
        }
      }
    }
    await barrage(cases);
  });

  test('hostile bodies on every write route', async (t) => {
    for (const route of routes) {
      for (const method of route.methods) {
        if (!WRITE_METHODS.has(method)) continue;
        for (const target of targetsFor(route, method, routes, prot, scratch)) {
          await t.test(target.name, async () => {
            const cases: Case[] = [];
            for (const bc of bodyCases(target, rng)) {
              // Input that may succeed goes to the scratch bucket; the protected fixtures only see refusals.
              const url = bc.kind === 'invalid' ? target.protectedUrl : target.scratchUrl;
              if (url === undefined) continue;
              if (target.base === undefined && bc.kind !== 'invalid') continue;
              cases.push({
                label: bc.label,
                method,
                url,
                ...(bc.payload !== undefined && { payload: bc.payload }),
                ...(bc.contentType !== undefined && { contentType: bc.contentType }),
                ...(bc.headers && { headers: bc.headers }),
                kind: bc.kind,
                ...(bc.status && { status: bc.status }),
              });
            }
            t.diagnostic(`${target.name}: ${cases.length} requests`);
            await barrage(cases);
          });
        }
      }
    }
  });

  test('nothing stored was lost or changed, and no prototype was polluted', async (t) => {
    const h = get();
    t.diagnostic(`${total.requests} hostile requests, ${total.failures.length} went wrong`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    const lost = [
      ...differences(await snapshot(h, h.alice, h.alice.bucketKey, before), before),
      ...differences(await snapshot(h, h.bob, h.bob.bucketKey, foreignBefore), foreignBefore),
    ];
    // Buckets: the ones there before are unchanged (but the scratch bucket, which valid PUTs may
    // rename); new ones only from a POST /buckets answered 201.
    const buckets: any[] = await h.data('GET', '/buckets');
    for (const bucket of bucketsBefore) {
      if (bucket.key === scratch.bucketKey) continue;
      const now = buckets.find((b) => b.key === bucket.key);
      if (!isDeepStrictEqual(now, bucket))
        lost.push(`bucket ${bucket.key}: now ${clip(JSON.stringify(now))}`);
    }
    if (buckets.length !== bucketsBefore.length + bucketsCreated)
      lost.push(`${buckets.length - bucketsBefore.length} buckets appeared, ${bucketsCreated} were created`);
    assert.deepEqual(lost, [], `${lost.length} stored resources changed or became unreadable`);
  });
});
