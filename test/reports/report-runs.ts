import type { AssertionResult, StepResult } from '../../src/domain/results.js';
import type { ReportRun } from '../../src/reports/html.js';

/** A step result as a run records it: a JSON exchange, assertions, a variable, timings. */
export function stepResult(index: number, options: { fail?: boolean; body?: string } = {}): StepResult {
  const body = options.body ?? JSON.stringify({ id: index, items: [{ name: `item ${index}` }] });
  const assertions: AssertionResult[] = [
    {
      result: 'pass',
      source: 'response_status',
      property: '',
      comparison: 'equal',
      target_value: 200,
      actual_value: 200,
      error: null,
    },
  ];
  if (options.fail) {
    assertions.push({
      result: 'fail',
      source: 'response_json',
      property: 'id',
      comparison: 'equal',
      target_value: `expected-${index}`,
      actual_value: `actual-${index}`,
      error: null,
    });
  }
  return {
    uuid: `step-${index}`,
    step_type: 'request',
    result: options.fail ? 'fail' : 'pass',
    method: 'POST',
    url: `https://api.example.test/items/${index}`,
    note: '',
    error: null,
    assertions,
    scripts: [],
    variables: [
      {
        result: 'pass',
        source: 'response_json',
        property: 'id',
        name: `id_${index}`,
        value: String(index),
        error: null,
      },
    ],
    response_status_code: 200,
    response_time_ms: 12,
    response_size_bytes: body.length,
    timings: {
      dns_lookup_ms: 1,
      dial_ms: 1,
      tls_handshake_ms: 0,
      send_headers_ms: 0,
      send_body_ms: 0,
      wait_for_response_ms: 10,
      receive_response_ms: 1,
    },
    started_at: 1_700_000_000 + index,
    finished_at: 1_700_000_000.012 + index,
    request: {
      method: 'POST',
      url: `https://api.example.test/items/${index}`,
      headers: { 'content-type': ['application/json'], authorization: ['Bearer token'] },
      body,
      body_encoding: 'text',
      size_bytes: body.length,
      truncated: false,
    },
    response: {
      status: 200,
      reason: 'OK',
      headers: { 'content-type': ['application/json'] },
      body,
      body_encoding: 'text',
      size_bytes: body.length,
      truncated: false,
    },
  };
}

/** One run of `steps`, failed when one of them failed. */
export function reportRun(steps: StepResult[], name = 'Items API'): ReportRun {
  return {
    test_name: name,
    iteration: null,
    environment_name: 'Production',
    source: 'items.json',
    outcome: {
      result: steps.some((s) => s.result === 'fail') ? 'fail' : 'pass',
      started_at: 1_700_000_000,
      finished_at: 1_700_000_060,
      error: null,
      initial_variables: { base: 'https://api.example.test' },
      variables: { base: 'https://api.example.test' },
      environment_script: null,
      requests: steps,
    },
  };
}
