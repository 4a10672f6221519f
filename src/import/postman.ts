import { keptScript, translateTestScript } from './postman-scripts.js';
import {
  addHeader,
  asArray,
  asString,
  type ImportedRequestStep,
  type ImportedTest,
  type ImportResult,
  isHeaderName,
  isRecord,
  isVariableName,
  stepNote,
  testName,
} from './result.js';

/**
 * Postman collections (v2.0 and v2.1, as Postman exports them) → tests. Folders become tests
 * (`split: "folder"`, requests outside folders form one more test) or every request its own test
 * (`split: "request"`). Collection and environment variables become the test environment's
 * initial variables; `{{variables}}` in URLs, headers and bodies are kept as they are, Vigil's
 * templates read the same syntax.
 */

export interface PostmanOptions {
  split?: 'folder' | 'request';
  /** An exported Postman environment (`_postman_variable_scope: "environment"`). */
  environment?: unknown;
}

export function isPostmanCollection(doc: unknown): boolean {
  if (!isRecord(doc) || !isRecord(doc.info)) return false;
  return (
    '_postman_id' in doc.info ||
    /schema\.getpostman\.com|schema\.postman\.com/.test(asString(doc.info.schema)) ||
    Array.isArray(doc.item)
  );
}

/** Postman's dynamic variables that have a Vigil template function of the same meaning. */
const DYNAMIC: Record<string, string> = {
  $guid: 'uuid',
  $randomUUID: 'uuid',
  $timestamp: 'timestamp',
  $isoTimestamp: 'utc_datetime',
  $randomInt: 'random_int(0,1000)',
};

interface Context {
  /** Auth inherited from the enclosing folders and the collection. */
  auth: unknown;
  /** Scripts of the enclosing folders and the collection, outermost first. */
  events: unknown[];
  notes: Set<string>;
}

/** Replaces Postman's dynamic variables; unknown ones are reported. */
function templated(text: string, remarks: Set<string>): string {
  return text.replace(/\{\{\s*(\$[A-Za-z]+)\s*\}\}/g, (whole, name: string) => {
    const fn = DYNAMIC[name];
    if (fn) return `{{${fn}}}`;
    remarks.add(`dynamic variable {{${name}}} has no equivalent and is sent as written`);
    return whole;
  });
}

function keyValues(list: unknown): { key: string; value: string }[] {
  return asArray(list)
    .filter(
      (kv): kv is Record<string, unknown> => isRecord(kv) && kv.disabled !== true && kv.enabled !== false,
    )
    .map((kv) => ({ key: asString(kv.key), value: asString(kv.value) }));
}

/** An auth block's parameters, from v2.1's `[{key, value}]` or v2.0's `{key: value}` form. */
function authParams(auth: Record<string, unknown>, type: string): Record<string, string> {
  const params = auth[type];
  if (Array.isArray(params)) return Object.fromEntries(keyValues(params).map((kv) => [kv.key, kv.value]));
  if (isRecord(params)) return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, asString(v)]));
  return {};
}

function urlOf(url: unknown, remarks: Set<string>): string {
  if (typeof url === 'string') return url;
  if (!isRecord(url)) return '';
  let raw = asString(url.raw);
  if (!raw) {
    const protocol = asString(url.protocol);
    const host = Array.isArray(url.host) ? url.host.map(asString).join('.') : asString(url.host);
    const path = Array.isArray(url.path) ? url.path.map(asString).join('/') : asString(url.path);
    const port = asString(url.port);
    const query = keyValues(url.query)
      .map((q) => (q.value === '' ? q.key : `${q.key}=${q.value}`))
      .join('&');
    raw = `${protocol ? `${protocol}://` : ''}${host}${port ? `:${port}` : ''}${path ? `/${path}` : ''}${query ? `?${query}` : ''}`;
  } else if (Array.isArray(url.query)) {
    // Disabled query parameters are in `raw` too; take them out.
    for (const q of asArray(url.query)) {
      if (!isRecord(q) || q.disabled !== true) continue;
      const pair =
        q.value === undefined || q.value === null
          ? asString(q.key)
          : `${asString(q.key)}=${asString(q.value)}`;
      raw = raw.replace(`&${pair}`, '').replace(`?${pair}&`, '?').replace(`?${pair}`, '');
    }
  }
  // Path variables (`/users/:id`) take their values.
  for (const v of asArray(url.variable)) {
    if (!isRecord(v)) continue;
    const key = asString(v.key);
    if (!key) continue;
    const value = asString(v.value);
    const pattern = new RegExp(`/:${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[/?#]|$)`, 'g');
    if (value === '') remarks.add(`path variable :${key} has no value`);
    raw = raw.replace(pattern, `/${value}`);
  }
  return raw;
}

function applyAuth(step: ImportedRequestStep, auth: unknown, remarks: Set<string>): void {
  if (!isRecord(auth)) return;
  const type = asString(auth.type);
  const p = authParams(auth, type);
  const headers = (step.headers ??= {});
  switch (type) {
    case '':
    case 'noauth':
    case 'inherit':
      return;
    case 'basic':
      step.auth = { auth_type: 'basic', username: p.username ?? '', password: p.password ?? '' };
      return;
    case 'bearer':
      addHeader(headers, 'Authorization', `Bearer ${p.token ?? ''}`);
      return;
    case 'apikey': {
      const key = p.key ?? 'X-API-Key';
      if ((p.in ?? 'header') === 'query') {
        step.url += `${step.url.includes('?') ? '&' : '?'}${encodeURIComponent(key)}=${p.value ?? ''}`;
      } else if (isHeaderName(key)) addHeader(headers, key, p.value ?? '');
      else remarks.add(`API key header name "${key}" is not a valid header name`);
      return;
    }
    case 'oauth1': {
      const where = p.addParamsToHeader === 'false' || p.addParamsToHeader === '' ? 'body' : 'auth_header';
      step.auth = {
        auth_type: 'oauth_1',
        consumer_key: p.consumerKey ?? '',
        consumer_secret: p.consumerSecret ?? '',
        access_token: p.token ?? '',
        token_secret: p.tokenSecret ?? '',
        signature_type: where,
      };
      if ((p.signatureMethod ?? 'HMAC-SHA1') !== 'HMAC-SHA1')
        remarks.add(`OAuth 1.0 signature method ${p.signatureMethod} is signed as HMAC-SHA1`);
      return;
    }
    default:
      remarks.add(`${type} authentication is not translated`);
  }
}

function applyBody(step: ImportedRequestStep, body: unknown, remarks: Set<string>): void {
  if (!isRecord(body) || body.disabled === true) return;
  const mode = asString(body.mode);
  switch (mode) {
    case 'raw': {
      step.body = templated(asString(body.raw), remarks);
      const language =
        isRecord(body.options) && isRecord(body.options.raw) ? asString(body.options.raw.language) : '';
      const types: Record<string, string> = {
        json: 'application/json',
        xml: 'application/xml',
        html: 'text/html',
        text: 'text/plain',
        javascript: 'application/javascript',
      };
      const headers = (step.headers ??= {});
      if (types[language] && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        addHeader(headers, 'Content-Type', types[language]!);
      return;
    }
    case 'urlencoded':
    case 'formdata': {
      const form: Record<string, string[]> = {};
      for (const field of asArray(body[mode])) {
        if (!isRecord(field) || field.disabled === true) continue;
        const key = asString(field.key);
        if (!key) continue;
        if (field.type === 'file') {
          remarks.add(`form field "${key}" is a file: not sent`);
          continue;
        }
        (form[key] ??= []).push(templated(asString(field.value), remarks));
      }
      step.form = Object.fromEntries(Object.entries(form).map(([k, v]) => [k, v.length === 1 ? v[0]! : v]));
      if (mode === 'formdata') remarks.add('multipart form data is sent as a form');
      return;
    }
    case 'graphql': {
      const graphql = isRecord(body.graphql) ? body.graphql : {};
      let variables: unknown = {};
      try {
        variables = asString(graphql.variables) ? JSON.parse(asString(graphql.variables)) : {};
      } catch {
        remarks.add('GraphQL variables are not JSON: left out');
      }
      step.body = JSON.stringify({ query: asString(graphql.query), variables });
      addHeader((step.headers ??= {}), 'Content-Type', 'application/json');
      return;
    }
    case 'file':
      remarks.add('file body is not sent');
      return;
    default:
      if (mode) remarks.add(`body mode "${mode}" is not translated`);
  }
}

/** Source of a script event (`exec` is an array of lines or one string). */
function scriptSource(events: unknown, listen: string): string[] {
  return asArray(events)
    .filter((e): e is Record<string, unknown> => isRecord(e) && e.listen === listen && e.disabled !== true)
    .map((e) => {
      const script = isRecord(e.script) ? e.script : {};
      return Array.isArray(script.exec) ? script.exec.map(asString).join('\n') : asString(script.exec);
    })
    .filter((s) => s.trim() !== '');
}

function requestStep(item: Record<string, unknown>, ctx: Context): ImportedRequestStep {
  const remarks = new Set<string>();
  const request: Record<string, unknown> =
    typeof item.request === 'string' ? { url: item.request } : isRecord(item.request) ? item.request : {};
  const step: ImportedRequestStep = {
    step_type: 'request',
    method: asString(request.method).toUpperCase() || 'GET',
    url: templated(urlOf(request.url, remarks), remarks),
    headers: {},
  };
  if (!/^[A-Za-z]{1,20}$/.test(step.method)) {
    remarks.add(`method "${step.method.slice(0, 40)}" replaced by GET`);
    step.method = 'GET';
  }
  const headerList = Array.isArray(request.header)
    ? keyValues(request.header)
    : typeof request.header === 'string'
      ? request.header
          .split('\n')
          .filter((l) => l.includes(':'))
          .map((l) => ({ key: l.slice(0, l.indexOf(':')).trim(), value: l.slice(l.indexOf(':') + 1).trim() }))
      : [];
  for (const { key, value } of headerList) {
    if (isHeaderName(key)) addHeader(step.headers!, key, templated(value, remarks));
    else remarks.add(`header "${key.slice(0, 80)}" dropped (not a valid header name)`);
  }
  applyBody(step, request.body, remarks);
  const auth = request.auth !== undefined && request.auth !== null ? request.auth : ctx.auth;
  // An Authorization header written by hand (often a stale signature) gives way to the request's auth.
  const authType = isRecord(auth) ? asString(auth.type) : '';
  const written = Object.keys(step.headers!).find((h) => h.toLowerCase() === 'authorization');
  if (written && ['basic', 'bearer', 'oauth1'].includes(authType)) {
    delete step.headers![written];
    remarks.add(`its own Authorization header gives way to its ${authType} auth`);
  }
  applyAuth(step, auth, remarks);

  const assertions = [];
  const variables = [];
  const scripts: string[] = [];
  const tests = [...ctx.events.flatMap((e) => scriptSource(e, 'test')), ...scriptSource(item.event, 'test')];
  for (const source of tests) {
    const t = translateTestScript(source);
    assertions.push(...t.assertions);
    variables.push(...t.variables);
    if (t.leftover !== null) {
      scripts.push(
        keptScript(
          'Postman test script not translated (uses the pm API): port it to a Vigil script',
          t.leftover,
        ),
      );
      remarks.add('part of the test script was not translated: kept commented out as a script');
    }
  }
  const before = [
    ...ctx.events.flatMap((e) => scriptSource(e, 'prerequest')),
    ...scriptSource(item.event, 'prerequest'),
  ];
  if (before.length) {
    step.before_scripts = before.map((s) =>
      keptScript('Postman pre-request script not translated (uses the pm API): port it to a Vigil script', s),
    );
    remarks.add('pre-request script not translated: kept commented out');
  }
  // A request without any check still fails on a server error.
  if (assertions.length === 0)
    assertions.push({ source: 'response_status' as const, comparison: 'is_less_than' as const, value: 400 });
  step.assertions = assertions;
  if (variables.length) step.variables = variables;
  if (scripts.length) step.scripts = scripts;
  step.note = stepNote(asString(item.name), [...remarks]);
  for (const r of remarks) ctx.notes.add(`${asString(item.name) || step.url}: ${r}`);
  return step;
}

interface Group {
  name: string;
  steps: ImportedRequestStep[];
}

function walk(items: unknown, ctx: Context, path: string[], groups: Group[], split: 'folder' | 'request') {
  const loose: ImportedRequestStep[] = [];
  for (const raw of asArray(items)) {
    if (!isRecord(raw)) continue;
    const name = asString(raw.name);
    if (Array.isArray(raw.item)) {
      const inner: Context = {
        auth: raw.auth !== undefined && raw.auth !== null ? raw.auth : ctx.auth,
        events: [...ctx.events, raw.event],
        notes: ctx.notes,
      };
      walk(raw.item, inner, [...path, name || 'Folder'], groups, split);
      continue;
    }
    if (!('request' in raw)) continue;
    const step = requestStep(raw, ctx);
    if (split === 'request') groups.push({ name: [...path, name || step.url].join(' / '), steps: [step] });
    else loose.push(step);
  }
  if (loose.length) groups.push({ name: path.join(' / '), steps: loose });
}

export function importPostman(doc: unknown, options: PostmanOptions = {}): ImportResult {
  if (!isRecord(doc)) return { tests: [], notes: ['not a Postman collection'] };
  const info = isRecord(doc.info) ? doc.info : {};
  const title = asString(info.name) || 'Postman collection';
  const notes = new Set<string>();
  if (/v1\.0\.0/.test(asString(info.schema)))
    notes.add('collection format v1 is not supported: export it as v2.1');

  const variables: Record<string, string> = {};
  const addVariables = (list: unknown, from: string) => {
    for (const { key, value } of keyValues(list)) {
      if (isVariableName(key)) variables[key] = value;
      else if (key) notes.add(`${from} variable "${key.slice(0, 80)}" has a name Vigil cannot use: left out`);
    }
  };
  addVariables(doc.variable, 'collection');
  if (options.environment !== undefined && options.environment !== null) {
    const env = isRecord(options.environment) ? options.environment : {};
    if (!Array.isArray(env.values)) notes.add('the environment file has no "values": not used');
    addVariables(env.values, 'environment');
  }

  const groups: Group[] = [];
  const ctx: Context = { auth: doc.auth, events: [doc.event], notes };
  walk(doc.item, ctx, [], groups, options.split ?? 'folder');
  const envName =
    isRecord(options.environment) && asString(options.environment.name)
      ? asString(options.environment.name)
      : 'Postman';
  const tests: ImportedTest[] = groups.map((g) => ({
    name: testName(g.name ? `${title} / ${g.name}` : title, title),
    description: asString(info.description).slice(0, 10_000) || null,
    environments: [{ name: testName(envName, 'Postman'), initial_variables: { ...variables } }],
    steps: g.steps,
  }));
  if (tests.length === 0) notes.add('the collection has no requests');
  return { tests, notes: [...notes] };
}
