import assert from 'node:assert/strict';
import type { ApiHarness } from '../helpers/api.js';

/**
 * Requests as the original service's clients send them: the Go library and the Terraform providers
 * put `Accept: application/json` on every call and `Content-Type: application/json` on every write,
 * even one without a body.
 */
export function goClient(h: ApiHarness) {
  const send = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => {
    const response = await h.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${h.alice.token}`,
        accept: 'application/json',
        ...(method !== 'GET' && { 'content-type': 'application/json' }),
        'user-agent': 'Go-http-client/1.1',
      },
      ...(body !== undefined && { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.body, json: () => response.json() };
  };
  /** The `data` of an answer with the expected status (the client treats ≥ 300 as an error). */
  const data = async (method: 'GET' | 'POST' | 'PUT', url: string, body: unknown, status: number) => {
    const response = await send(method, url, body);
    assert.equal(response.status, status, `${method} ${url}: ${response.body}`);
    const parsed = response.json();
    assert.equal(parsed.error, null);
    assert.equal(parsed.meta.status, 'success');
    return parsed.data;
  };
  return { send, data };
}

/** Asserts that `value` has every listed key, with a value of the given JSON type. */
export function assertShape(
  value: Record<string, unknown>,
  shape: Record<string, string>,
  what: string,
): void {
  for (const [key, type] of Object.entries(shape)) {
    const actual = value[key] === null ? 'null' : Array.isArray(value[key]) ? 'array' : typeof value[key];
    assert.ok(type.split('|').includes(actual), `${what}.${key} is ${actual}, expected ${type}`);
  }
}

/**
 * An environment as the sport24ru Terraform provider writes it: its EnvironmentBase struct, whose
 * nil maps and slices become null, and the "no e-mail" default.
 */
export function providerEnvironment(name: string, overrides: Record<string, unknown> = {}) {
  return {
    name,
    script: '',
    preserve_cookies: false,
    initial_variables: null,
    integrations: null,
    regions: null,
    remote_agents: null,
    retry_on_failure: false,
    stop_on_failure: false,
    verify_ssl: true,
    webhooks: null,
    emails: { notify_all: false, notify_on: '', notify_threshold: 0, recipients: [] },
    client_certificate: '',
    ...overrides,
  };
}

/** The same provider's request step: every field present, empty ones as "" / [] / {}. */
export function providerStep(url: string) {
  return {
    step_type: 'request',
    method: 'GET',
    url,
    variables: [{ name: 'status', property: '', source: 'response_status' }],
    assertions: [{ source: 'response_status', property: '', comparison: 'equal_number', value: '200' }],
    headers: { Accept: ['application/json'] },
    auth: {},
    body: '',
    form: {},
    scripts: [],
    before_scripts: [],
    note: 'health',
    skipped: false,
    duration: 0,
  };
}
