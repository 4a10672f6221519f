import type { AssertionInput } from '../domain/assertions.js';
import {
  addHeader,
  asArray,
  asString,
  type ImportedRequestStep,
  type ImportedTest,
  type ImportResult,
  isHeaderName,
  isRecord,
  stepNote,
  testName,
  toVariableName,
} from './result.js';

/**
 * OpenAPI 3.0/3.1 and Swagger 2.0 documents → tests: one per tag (or one per operation), a request
 * step per operation against `{{base_url}}`, with example (or generated) parameters and bodies and
 * assertions on the documented success status and the required properties of its JSON answer.
 * Only references inside the document (`#/…`) are followed; nothing is fetched.
 */

export interface OpenApiOptions {
  split?: 'tag' | 'operation';
  /** The value of `base_url` in the environment, instead of the document's server. */
  base_url?: string;
}

export function isOpenApi(doc: unknown): boolean {
  return isRecord(doc) && (typeof doc.openapi === 'string' || doc.swagger === '2.0' || doc.swagger === 2);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const MAX_DEPTH = 8;

type Json = Record<string, unknown>;

class Document {
  readonly notes = new Set<string>();
  constructor(readonly root: Json) {}

  /** The node a `$ref` points to (internal references only); other nodes as they are. */
  deref(node: unknown): unknown {
    let current = node;
    for (let hops = 0; isRecord(current) && typeof current.$ref === 'string'; hops += 1) {
      const ref = current.$ref;
      if (hops > 32 || !ref.startsWith('#')) {
        if (!ref.startsWith('#')) this.notes.add(`external reference ${ref.slice(0, 200)} is not followed`);
        return undefined;
      }
      current = this.pointer(ref.slice(1));
    }
    return current;
  }

  private pointer(pointer: string): unknown {
    let node: unknown = this.root;
    if (pointer === '') return node;
    for (const raw of pointer.split('/').slice(1)) {
      let key: string;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        return undefined;
      }
      if (Array.isArray(node) && /^\d+$/.test(key)) node = node[Number(key)];
      else if (isRecord(node) && Object.hasOwn(node, key)) node = node[key];
      else return undefined;
    }
    return node;
  }

  record(node: unknown): Json {
    const value = this.deref(node);
    return isRecord(value) ? value : {};
  }

  /** A value for a schema: its example, default, first enum value, or one made from its type. */
  sample(schemaNode: unknown, depth = 0): unknown {
    const schema = this.record(schemaNode);
    if ('example' in schema) return schema.example;
    if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
    if ('default' in schema) return schema.default;
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
    if (depth > MAX_DEPTH) return null;
    if (Array.isArray(schema.allOf)) {
      const merged: Json = {};
      for (const part of schema.allOf) {
        const value = this.sample(part, depth + 1);
        if (isRecord(value)) Object.assign(merged, value);
      }
      return merged;
    }
    for (const key of ['oneOf', 'anyOf'] as const)
      if (Array.isArray(schema[key]) && schema[key].length) return this.sample(schema[key][0], depth + 1);
    const types = Array.isArray(schema.type) ? schema.type.filter((t) => t !== 'null') : [schema.type];
    const type = asString(types[0]) || (isRecord(schema.properties) ? 'object' : schema.items ? 'array' : '');
    switch (type) {
      case 'object': {
        const out: Json = {};
        for (const [key, prop] of Object.entries(isRecord(schema.properties) ? schema.properties : {})) {
          if (this.record(prop).readOnly === true) continue;
          out[key] = this.sample(prop, depth + 1);
        }
        return out;
      }
      case 'array':
        return depth >= MAX_DEPTH ? [] : [this.sample(schema.items, depth + 1)];
      case 'integer':
      case 'number':
        return typeof schema.minimum === 'number' ? schema.minimum : 1;
      case 'boolean':
        return true;
      case 'string':
        switch (schema.format) {
          case 'date-time':
            return '2024-01-01T00:00:00Z';
          case 'date':
            return '2024-01-01';
          case 'email':
            return 'user@example.com';
          case 'uuid':
            return '00000000-0000-4000-8000-000000000000';
          case 'uri':
          case 'url':
            return 'https://example.com';
          case 'binary':
          case 'byte':
            return '';
          default:
            return 'string';
        }
      default:
        return null;
    }
  }

  /** Required property names of an object schema (through `allOf`). */
  required(schemaNode: unknown, depth = 0): string[] {
    const schema = this.record(schemaNode);
    const own = asArray(schema.required).map(asString).filter(Boolean);
    if (depth > MAX_DEPTH || !Array.isArray(schema.allOf)) return own;
    return [...new Set([...own, ...schema.allOf.flatMap((part) => this.required(part, depth + 1))])];
  }
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The server URL (OpenAPI 3 `servers[0]`, Swagger 2 `schemes`/`host`/`basePath`). */
function baseUrl(doc: Document): string {
  const root = doc.root;
  let url: string;
  if (typeof root.openapi === 'string') {
    const server = doc.record(asArray(root.servers)[0]);
    url = asString(server.url) || '/';
    for (const [name, variable] of Object.entries(isRecord(server.variables) ? server.variables : {}))
      url = url.replaceAll(`{${name}}`, asString(isRecord(variable) ? variable.default : ''));
  } else {
    const schemes = asArray(root.schemes).map(asString);
    const scheme = schemes.includes('https') ? 'https' : (schemes[0] ?? 'https');
    url = `${scheme}://${asString(root.host) || 'localhost'}${asString(root.basePath)}`;
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    doc.notes.add(
      `the server URL "${url}" is relative: base_url is set to http://localhost${url.startsWith('/') ? '' : '/'}${url}; change it in the environment`,
    );
    url = `http://localhost${url.startsWith('/') ? '' : '/'}${url}`;
  }
  return url.replace(/\/+$/, '');
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  value: unknown;
  /** Whether the document gives a value (example or default), not a made-up one. */
  given: boolean;
  multi: boolean;
  type: string;
}

function parameter(doc: Document, node: unknown): Parameter | null {
  const p = doc.record(node);
  const name = asString(p.name);
  if (!name) return null;
  // OpenAPI 3 keeps the type in `schema`; Swagger 2 on the parameter itself (except body ones).
  const schema = isRecord(p.schema) ? doc.record(p.schema) : p;
  let value: unknown;
  let given = true;
  if ('example' in p) value = p.example;
  else if (isRecord(p.examples) && Object.values(p.examples).length)
    value = doc.record(Object.values(p.examples)[0]).value;
  else {
    given = 'example' in schema || 'default' in schema || Array.isArray(schema.enum);
    value = doc.sample(schema);
  }
  return {
    name,
    in: asString(p.in),
    required: p.required === true,
    value,
    given,
    // Swagger 2 repeats a parameter with `collectionFormat: multi`; OpenAPI 3 by default (explode).
    multi:
      'collectionFormat' in p ? p.collectionFormat === 'multi' : isRecord(p.schema) && p.explode !== false,
    type: asString(schema.type),
  };
}

const JSON_TYPE = /^application\/(.+\+)?json/i;

interface Operation {
  method: string;
  path: string;
  op: Json;
  params: Parameter[];
}

function securitySchemes(doc: Document): Json {
  const root = doc.root;
  if (isRecord(root.components) && isRecord(root.components.securitySchemes))
    return root.components.securitySchemes;
  return isRecord(root.securityDefinitions) ? root.securityDefinitions : {};
}

function applySecurity(
  doc: Document,
  op: Json,
  step: ImportedRequestStep,
  variables: Record<string, string>,
  remarks: string[],
): void {
  const requirements = Array.isArray(op.security) ? op.security : asArray(doc.root.security);
  const first = requirements.find(isRecord);
  if (!first) return;
  const schemes = securitySchemes(doc);
  for (const name of Object.keys(first)) {
    const scheme = doc.record(schemes[name]);
    const type = asString(scheme.type);
    const headers = (step.headers ??= {});
    if (type === 'apiKey') {
      const key = asString(scheme.name);
      const variable = toVariableName(key || name, 'api_key');
      variables[variable] ??= '';
      if (scheme.in === 'query')
        step.url += `${step.url.includes('?') ? '&' : '?'}${encodeURIComponent(key)}={{${variable}}}`;
      else if (scheme.in === 'header' && isHeaderName(key)) addHeader(headers, key, `{{${variable}}}`);
      else remarks.push(`API key "${key}" in ${asString(scheme.in)} is not sent`);
    } else if ((type === 'http' && /^basic$/i.test(asString(scheme.scheme))) || type === 'basic') {
      variables.username ??= '';
      variables.password ??= '';
      step.auth = { auth_type: 'basic', username: '{{username}}', password: '{{password}}' };
    } else if (type === 'http' || type === 'oauth2' || type === 'openIdConnect') {
      variables.access_token ??= '';
      addHeader(headers, 'Authorization', 'Bearer {{access_token}}');
    }
  }
}

/** The request body of an operation: JSON from its example or schema, or a form. */
function applyBody(
  doc: Document,
  { op, params }: Operation,
  step: ImportedRequestStep,
  remarks: string[],
): void {
  const headers = (step.headers ??= {});
  if (typeof doc.root.openapi === 'string') {
    const body = doc.record(op.requestBody);
    const content = isRecord(body.content) ? body.content : {};
    const types = Object.keys(content);
    if (types.length === 0) return;
    const json = types.find((t) => JSON_TYPE.test(t));
    const formType = types.find((t) => /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(t));
    const chosen = json ?? formType;
    if (!chosen) {
      remarks.push(`request body of type ${types[0]} is not generated`);
      return;
    }
    const media = doc.record(content[chosen]);
    let value: unknown;
    if ('example' in media) value = media.example;
    else if (isRecord(media.examples) && Object.values(media.examples).length)
      value = doc.record(Object.values(media.examples)[0]).value;
    else value = doc.sample(media.schema);
    if (json) {
      step.body = JSON.stringify(value);
      addHeader(headers, 'Content-Type', json);
    } else {
      step.form = Object.fromEntries(
        Object.entries(isRecord(value) ? value : {}).map(([k, v]) => [k, text(v)]),
      );
      if (/^multipart/i.test(chosen)) remarks.push('multipart body sent as a form');
    }
    return;
  }
  const consumes = asArray(op.consumes ?? doc.root.consumes).map(asString);
  const bodyParam = asArray(op.parameters)
    .map((p) => doc.record(p))
    .find((p) => p.in === 'body');
  if (bodyParam) {
    step.body = JSON.stringify(doc.sample(bodyParam.schema));
    addHeader(headers, 'Content-Type', consumes.find((t) => JSON_TYPE.test(t)) ?? 'application/json');
    return;
  }
  const fields = params.filter((p) => p.in === 'formData');
  if (fields.length === 0) return;
  const form: Record<string, string> = {};
  for (const f of fields) {
    if (f.type === 'file') remarks.push(`form field "${f.name}" is a file: not sent`);
    else if (f.required || f.given) form[f.name] = text(f.value);
  }
  step.form = form;
}

/** Assertions on the documented success status and the required properties of its JSON answer. */
function assertions(doc: Document, op: Json, remarks: string[]): AssertionInput[] {
  const responses = isRecord(op.responses) ? op.responses : {};
  const codes = Object.keys(responses);
  const success = codes.filter((c) => /^2\d\d$/.test(c)).sort()[0];
  const out: AssertionInput[] = [];
  const answer = success ?? (codes.includes('default') ? 'default' : codes.find((c) => /^2XX$/i.test(c)));
  if (success) out.push({ source: 'response_status', comparison: 'equal', value: Number(success) });
  else if (answer) out.push({ source: 'response_status', comparison: 'is_less_than', value: 400 });
  else remarks.push('no success response documented: the status is not checked');
  if (!answer) return out;
  const response = doc.record(responses[answer]);
  let schema: unknown = response.schema;
  if (isRecord(response.content)) {
    const json = Object.keys(response.content).find((t) => JSON_TYPE.test(t));
    schema = json ? doc.record(response.content[json]).schema : undefined;
  }
  for (const name of doc.required(schema).slice(0, 50))
    out.push({ source: 'response_json', property: '', comparison: 'has_key', value: name });
  return out;
}

function operations(doc: Document): Operation[] {
  const out: Operation[] = [];
  const paths = isRecord(doc.root.paths) ? doc.root.paths : {};
  for (const [path, itemNode] of Object.entries(paths)) {
    const item = doc.record(itemNode);
    for (const method of METHODS) {
      if (!isRecord(item[method])) continue;
      const op = item[method];
      const byKey = new Map<string, Parameter>();
      for (const node of [...asArray(item.parameters), ...asArray(op.parameters)]) {
        const p = parameter(doc, node);
        if (p) byKey.set(`${p.in}:${p.name}`, p);
      }
      out.push({ method: method.toUpperCase(), path, op, params: [...byKey.values()] });
    }
  }
  return out;
}

function requestStep(
  doc: Document,
  operation: Operation,
  variables: Record<string, string>,
): ImportedRequestStep {
  const { method, path, op, params } = operation;
  const remarks: string[] = [];
  let url = path.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const p = params.find((q) => q.in === 'path' && q.name === name);
    if (!p) {
      remarks.push(`path parameter {${name}} is not described`);
      return whole;
    }
    return encodeURIComponent(text(p.value));
  });
  const query: string[] = [];
  for (const p of params.filter((q) => q.in === 'query' && (q.required || q.given))) {
    const values = Array.isArray(p.value) ? p.value.map(text) : [text(p.value)];
    if (p.multi) for (const v of values) query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(v)}`);
    else query.push(`${encodeURIComponent(p.name)}=${values.map(encodeURIComponent).join(',')}`);
  }
  if (query.length) url += `?${query.join('&')}`;
  const step: ImportedRequestStep = { step_type: 'request', method, url: `{{base_url}}${url}`, headers: {} };
  for (const p of params.filter((q) => q.in === 'header' && (q.required || q.given))) {
    if (isHeaderName(p.name)) addHeader(step.headers!, p.name, text(p.value));
  }
  if (params.some((p) => p.in === 'cookie')) remarks.push('cookie parameters are not sent');
  // Ask for JSON when the answer can be JSON (many servers answer XML otherwise).
  const answerTypes = Object.values(isRecord(op.responses) ? op.responses : {}).flatMap((r) => {
    const response = doc.record(r);
    return isRecord(response.content) ? Object.keys(response.content) : [];
  });
  const produces = asArray(op.produces ?? doc.root.produces).map(asString);
  const json = [...answerTypes, ...produces].find((t) => JSON_TYPE.test(t));
  if (json) addHeader(step.headers!, 'Accept', json);
  applyBody(doc, operation, step, remarks);
  applySecurity(doc, op, step, variables, remarks);
  step.assertions = assertions(doc, op, remarks);
  const title = `${method} ${path}${op.summary ? `: ${asString(op.summary)}` : ''}`;
  if (op.deprecated === true) remarks.push('deprecated');
  step.note = stepNote(title, remarks);
  return step;
}

export function importOpenApi(input: unknown, options: OpenApiOptions = {}): ImportResult {
  if (!isOpenApi(input)) return { tests: [], notes: ['not an OpenAPI or Swagger document'] };
  const doc = new Document(input as Json);
  const info = doc.record(doc.root.info);
  const title = asString(info.title) || 'API';
  const variables: Record<string, string> = { base_url: options.base_url ?? baseUrl(doc) };
  const groups = new Map<string, ImportedRequestStep[]>();
  const split = options.split ?? 'tag';
  for (const operation of operations(doc)) {
    const step = requestStep(doc, operation, variables);
    const key =
      split === 'operation'
        ? asString(operation.op.operationId) || `${operation.method} ${operation.path}`
        : asString(asArray(operation.op.tags)[0]) || 'default';
    const list = groups.get(key) ?? [];
    list.push(step);
    groups.set(key, list);
  }
  const tagDescriptions = new Map(
    asArray(doc.root.tags)
      .filter(isRecord)
      .map((t) => [asString(t.name), asString(t.description)]),
  );
  const tests: ImportedTest[] = [...groups].map(([key, steps]) => ({
    name: testName(`${title} / ${key}`, title),
    description: (split === 'tag' ? tagDescriptions.get(key) : undefined) || null,
    environments: [{ name: 'OpenAPI', initial_variables: { ...variables } }],
    steps,
  }));
  if (tests.length === 0) doc.notes.add('the document has no operations');
  return { tests, notes: [...doc.notes] };
}
