import type { VariableInput } from '../domain/assertions.js';
import type { MessageRequest, MessageResponse, StoredMessage } from '../domain/messages.js';
import {
  addHeader,
  asArray,
  asString,
  type ImportedRequestStep,
  type ImportResult,
  isHeaderName,
  isRecord,
  jsonPath,
  stepNote,
  testName,
  toVariableName,
} from './result.js';

/**
 * Recorded traffic (HAR files, the bucket's captured messages) → one test with a request step per
 * exchange, checking the recorded status. With `chain`, a value an answer produced (a JSON string or
 * number of 6 characters or more, or a token-like header) that a later request sends again becomes a
 * variable extracted from that answer and `{{name}}` in the later requests.
 */

export interface TrafficOptions {
  chain?: boolean;
  name?: string;
}

/** One request and its answer, with text bodies (binary ones are null). */
export interface Exchange {
  method: string;
  url: string;
  headers: [string, string][];
  body: string | null;
  form: Record<string, string[]> | null;
  response: { status: number; headers: [string, string][]; body: string | null } | null;
}

/** Headers the runner sets itself, or that only make sense for the recorded connection. */
const DROPPED_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'accept-encoding',
]);

/** Answer headers whose values are worth carrying to later requests. */
const TOKEN_HEADER = /token|auth|session|csrf|xsrf|api-?key|(^|-)id$|^location$/i;

const MIN_VALUE_LENGTH = 6;
const MAX_LEAVES = 5_000;

export function isHar(doc: unknown): boolean {
  return isRecord(doc) && isRecord(doc.log) && Array.isArray(doc.log.entries);
}

function decodeText(body: string, encoding: unknown): string | null {
  if (encoding !== 'base64') return body;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(body, 'base64'));
  } catch {
    return null;
  }
}

function pairs(list: unknown): [string, string][] {
  return asArray(list)
    .filter(isRecord)
    .map((h) => [asString(h.name), asString(h.value)] as [string, string])
    .filter(([name]) => name !== '');
}

export function exchangesFromHar(doc: unknown): Exchange[] {
  if (!isHar(doc)) return [];
  const entries = (doc as { log: { entries: unknown[] } }).log.entries;
  const out: Exchange[] = [];
  for (const entry of entries) {
    if (!isRecord(entry) || !isRecord(entry.request)) continue;
    const request = entry.request;
    const post = isRecord(request.postData) ? request.postData : {};
    const params = pairs(post.params);
    const form: Record<string, string[]> = {};
    for (const [name, value] of params) (form[name] ??= []).push(value);
    const response = isRecord(entry.response) ? entry.response : null;
    const content = response && isRecord(response.content) ? response.content : {};
    const status = response ? Number(response.status) : 0;
    out.push({
      method: asString(request.method) || 'GET',
      url: asString(request.url),
      headers: pairs(request.headers),
      body: typeof post.text === 'string' ? post.text : null,
      form: typeof post.text !== 'string' && params.length ? form : null,
      response:
        response && Number.isInteger(status) && status > 0
          ? {
              status,
              headers: pairs(response.headers),
              body: typeof content.text === 'string' ? decodeText(content.text, content.encoding) : null,
            }
          : null,
    });
  }
  return out;
}

function headerPairs(headers: Record<string, string[]>): [string, string][] {
  return Object.entries(headers).flatMap(([name, values]) =>
    values.map((v) => [name, v] as [string, string]),
  );
}

export function exchangesFromMessages(messages: readonly StoredMessage[]): Exchange[] {
  return messages
    .filter((m): m is StoredMessage & { request: MessageRequest } => m.request !== null)
    .map((m) => {
      const response: MessageResponse | null = m.response;
      return {
        method: m.request.method,
        url: m.request.url,
        headers: headerPairs(m.request.headers),
        body: m.request.body === '' ? null : decodeText(m.request.body, m.request.body_encoding),
        form: m.request.body === '' && m.request.form ? m.request.form : null,
        response: response
          ? {
              status: response.status,
              headers: headerPairs(response.headers),
              body: decodeText(response.body, response.body_encoding),
            }
          : null,
      };
    });
}

interface Candidate {
  value: string;
  step: number;
  variable: Omit<VariableInput, 'name'>;
  /** The name the variable is called by when it is chosen. */
  hint: string;
}

/** JSON leaves (strings and numbers) long enough to be worth chaining, with their paths. */
function leaves(
  node: unknown,
  path: (string | number)[],
  out: { value: string; path: (string | number)[] }[],
) {
  if (out.length >= MAX_LEAVES || path.length > 12) return;
  if (typeof node === 'string' || (typeof node === 'number' && Number.isFinite(node))) {
    const value = String(node);
    if (value.length >= MIN_VALUE_LENGTH && value.length <= 4_096) out.push({ value, path });
    return;
  }
  if (Array.isArray(node)) node.slice(0, 200).forEach((v, i) => leaves(v, [...path, i], out));
  else if (isRecord(node)) for (const [k, v] of Object.entries(node)) leaves(v, [...path, k], out);
}

function candidates(exchange: Exchange, step: number): Candidate[] {
  const out: Candidate[] = [];
  const response = exchange.response;
  if (!response) return out;
  for (const [name, value] of response.headers) {
    if (TOKEN_HEADER.test(name) && value.length >= MIN_VALUE_LENGTH && isHeaderName(name))
      out.push({ value, step, variable: { source: 'response_headers', property: name }, hint: name });
  }
  if (response.body) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body);
    } catch {
      return out;
    }
    const found: { value: string; path: (string | number)[] }[] = [];
    leaves(parsed, [], found);
    for (const { value, path } of found) {
      const last = [...path].reverse().find((s): s is string => typeof s === 'string') ?? 'value';
      out.push({ value, step, variable: { source: 'response_json', property: jsonPath(path) }, hint: last });
    }
  }
  return out;
}

/** Where `value` occurs in `text` as a whole (not inside a longer word or number). */
function occurs(text: string, value: string): boolean {
  let at = text.indexOf(value);
  while (at !== -1) {
    const before = text[at - 1] ?? '';
    const after = text[at + value.length] ?? '';
    if (!/[A-Za-z0-9_{}]/.test(before) && !/[A-Za-z0-9_{}]/.test(after)) return true;
    at = text.indexOf(value, at + 1);
  }
  return false;
}

function replaceWhole(text: string, value: string, by: string): string {
  let out = '';
  let from = 0;
  let at = text.indexOf(value);
  while (at !== -1) {
    const before = text[at - 1] ?? '';
    const after = text[at + value.length] ?? '';
    if (!/[A-Za-z0-9_{}]/.test(before) && !/[A-Za-z0-9_{}]/.test(after)) {
      out += text.slice(from, at) + by;
      from = at + value.length;
    }
    at = text.indexOf(value, at + value.length);
  }
  return out + text.slice(from);
}

function requestTexts(step: ImportedRequestStep): string[] {
  return [
    step.url,
    step.body ?? '',
    ...Object.values(step.headers ?? {}).flat(),
    ...Object.values(step.form ?? {}).flat(),
  ];
}

function mapRequest(step: ImportedRequestStep, f: (text: string) => string): void {
  step.url = f(step.url);
  if (step.body !== undefined) step.body = f(step.body);
  for (const [name, values] of Object.entries(step.headers ?? {})) step.headers![name] = values.map(f);
  if (step.form)
    for (const [name, value] of Object.entries(step.form))
      step.form[name] = Array.isArray(value) ? value.map(f) : f(value);
}

/** Turns repeated values into variables; answers a note per chained value. */
function chain(exchanges: readonly Exchange[], steps: ImportedRequestStep[], remarks: string[][]): string[] {
  const notes: string[] = [];
  const sent = steps.map((s) => requestTexts(s).join('\n'));
  const chosen: Candidate[] = [];
  const seen = new Set<string>();
  exchanges.forEach((exchange, i) => {
    for (const c of candidates(exchange, i)) {
      if (seen.has(c.value)) continue;
      seen.add(c.value);
      // A value the client already sent (up to this exchange) did not come from this answer.
      if (sent.slice(0, i + 1).some((t) => occurs(t, c.value))) continue;
      if (sent.slice(i + 1).some((t) => occurs(t, c.value))) chosen.push(c);
    }
  });
  const names = new Set<string>();
  for (const c of chosen.sort((a, b) => b.value.length - a.value.length)) {
    const users = steps
      .map((_, j) => j)
      .filter((j) => j > c.step && requestTexts(steps[j]!).some((t) => occurs(t, c.value)));
    if (users.length === 0) continue;
    let name = toVariableName(c.hint);
    for (let n = 2; names.has(name); n += 1) name = `${toVariableName(c.hint).slice(0, 95)}_${n}`;
    names.add(name);
    const step = steps[c.step]!;
    (step.variables ??= []).push({ name, ...c.variable });
    for (const j of users) mapRequest(steps[j]!, (t) => replaceWhole(t, c.value, `{{${name}}}`));
    const from =
      c.variable.source === 'response_headers'
        ? `header ${c.variable.property}`
        : c.variable.property || 'body';
    remarks[c.step]!.push(`extracts {{${name}}} (${from})`);
    for (const j of users) remarks[j]!.push(`uses {{${name}}} from step ${c.step + 1}`);
    notes.push(
      `{{${name}}}: ${from} of step ${c.step + 1}, used by step${users.length > 1 ? 's' : ''} ${users.map((j) => j + 1).join(', ')}`,
    );
  }
  return notes;
}

export function importExchanges(exchanges: readonly Exchange[], options: TrafficOptions = {}): ImportResult {
  const notes: string[] = [];
  const remarks: string[][] = exchanges.map(() => []);
  const steps: ImportedRequestStep[] = exchanges.map((exchange, i) => {
    const headers: Record<string, string[]> = {};
    for (const [name, value] of exchange.headers) {
      if (name.startsWith(':') || DROPPED_HEADERS.has(name.toLowerCase())) continue;
      if (isHeaderName(name)) addHeader(headers, name, value);
      else remarks[i]!.push(`header "${name.slice(0, 80)}" dropped`);
    }
    let method = exchange.method.toUpperCase();
    if (!/^[A-Z]{1,20}$/.test(method)) {
      remarks[i]!.push(`method "${method.slice(0, 40)}" replaced by GET`);
      method = 'GET';
    }
    const step: ImportedRequestStep = { step_type: 'request', method, url: exchange.url, headers };
    if (exchange.body !== null) step.body = exchange.body;
    else if (exchange.form)
      step.form = Object.fromEntries(
        Object.entries(exchange.form).map(([k, v]) => [k, v.length === 1 ? v[0]! : v]),
      );
    step.assertions = exchange.response
      ? [{ source: 'response_status', comparison: 'equal', value: exchange.response.status }]
      : [{ source: 'response_status', comparison: 'is_less_than', value: 400 }];
    if (!exchange.response) remarks[i]!.push('no answer was recorded: checks the status is below 400');
    return step;
  });
  if (options.chain) notes.push(...chain(exchanges, steps, remarks));
  steps.forEach((step, i) => {
    let path = step.url;
    try {
      path = new URL(step.url.replace(/\{\{[^}]*\}\}/g, 'x')).pathname;
    } catch {
      /* not a URL: the whole text */
    }
    step.note = stepNote(`${step.method} ${path}`.slice(0, 200), remarks[i]!);
  });
  if (steps.length === 0) return { tests: [], notes: ['no requests to import'] };
  const first = steps[0]!;
  let host = '';
  try {
    host = new URL(first.url).host;
  } catch {
    /* keep it empty */
  }
  return {
    tests: [
      {
        name: testName(options.name ?? `Recorded traffic${host ? ` ${host}` : ''}`, 'Recorded traffic'),
        steps,
      },
    ],
    notes,
  };
}
