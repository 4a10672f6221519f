/**
 * The request a pre-request script hands back comes from untrusted code: every field is checked and
 * coerced to the shape the runner sends (strings, header values as arrays of strings).
 */
import type { ScriptRequest } from './sandbox.js';

type Coerced<T> = { value: T } | { error: string };

const STRING_FIELDS = ['method', 'url', 'host', 'path', 'scheme'] as const;

export function coerceRequest(value: unknown): { request: ScriptRequest } | { error: string } {
  if (!isRecord(value)) return { error: 'request must stay an object' };
  const strings: Partial<Record<(typeof STRING_FIELDS)[number], string>> = {};
  for (const field of STRING_FIELDS) {
    const coerced = scalar(value[field], `request.${field}`);
    if ('error' in coerced) return coerced;
    strings[field] = coerced.value;
  }
  const body = value.body;
  const bodyText =
    typeof body === 'string'
      ? { value: body }
      : isRecord(body) || Array.isArray(body)
        ? { value: JSON.stringify(body) }
        : scalar(body, 'request.body');
  if ('error' in bodyText) return bodyText;
  const params = lists(value.params, 'request.params');
  if ('error' in params) return params;
  const headers = lists(value.headers, 'request.headers');
  if ('error' in headers) return headers;
  const form = formFields(value.form);
  if ('error' in form) return form;
  return {
    request: {
      method: strings.method ?? '',
      url: strings.url ?? '',
      host: strings.host ?? '',
      path: strings.path ?? '',
      scheme: strings.scheme ?? '',
      params: params.value,
      headers: headers.value,
      body: bodyText.value,
      form: form.value,
    },
  };
}

function scalar(value: unknown, where: string): Coerced<string> {
  if (value === undefined || value === null) return { value: '' };
  if (typeof value === 'string') return { value };
  if (typeof value === 'number' || typeof value === 'boolean') return { value: String(value) };
  return { error: `${where} must be a string` };
}

/** `{name: value | value[]}` → `{name: string[]}`; a missing map is empty. */
function lists(value: unknown, where: string): Coerced<Record<string, string[]>> {
  if (value === undefined || value === null) return { value: {} };
  if (!isRecord(value)) return { error: `${where} must be an object of string arrays` };
  const out: Record<string, string[]> = {};
  for (const [name, entry] of Object.entries(value)) {
    const items = Array.isArray(entry) ? entry : [entry];
    const strings: string[] = [];
    for (const item of items) {
      if (item === undefined || item === null) continue;
      const coerced = scalar(item, `${where}.${name}`);
      if ('error' in coerced) return coerced;
      strings.push(coerced.value);
    }
    put(out, name, strings);
  }
  return { value: out };
}

function formFields(value: unknown): Coerced<Record<string, string | string[]>> {
  if (value === undefined || value === null) return { value: {} };
  if (!isRecord(value)) return { error: 'request.form must be an object' };
  const out: Record<string, string | string[]> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (Array.isArray(entry)) {
      const list = lists({ [name]: entry }, 'request.form');
      if ('error' in list) return list;
      put(out, name, list.value[name] ?? []);
    } else {
      const coerced = scalar(entry, `request.form.${name}`);
      if ('error' in coerced) return coerced;
      put(out, name, coerced.value);
    }
  }
  return { value: out };
}

/** Assignment that treats `__proto__` as the plain name it is in JSON. */
function put<T>(target: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
