import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiHarness } from './api.js';

/** One request a receiver got. */
export interface Delivery {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  base: string;
  received: Delivery[];
  /** Requests whose path starts with `prefix`. */
  at(prefix: string): Delivery[];
  close(): Promise<void>;
}

/**
 * A local HTTP receiver for webhooks and fake services: `answer` picks status and body per request
 * (default 200 `{}`), after the request is recorded.
 */
export async function startReceiver(
  answer: (delivery: Delivery, countAtPath: number) => { status: number; body?: unknown } = () => ({
    status: 200,
  }),
): Promise<Receiver> {
  const received: Delivery[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const delivery: Delivery = {
        method: request.method ?? '',
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(delivery);
      const count = received.filter((d) => d.path === delivery.path).length;
      const { status, body } = answer(delivery, count);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    at: (prefix) => received.filter((d) => d.path.startsWith(prefix)),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it answers something other than undefined (no fixed sleeps). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function finishedRun(h: ApiHarness, testId: string, runId: string) {
  const url = `/buckets/${h.alice.bucketKey}/tests/${testId}/results/${runId}`;
  return eventually(`run ${runId}`, async () => {
    const run = await h.data('GET', url);
    return ['queued', 'working'].includes(run.result) ? undefined : run;
  });
}

/** The run's notifications once there are `count` and none is pending. */
export async function settled(h: ApiHarness, testId: string, runId: string, count: number) {
  const url = `/buckets/${h.alice.bucketKey}/tests/${testId}/results/${runId}/notifications`;
  return eventually(`${count} settled notifications of run ${runId}`, async () => {
    const list = (await h.data('GET', url)) as { status: string }[];
    return list.length === count && list.every((n) => n.status !== 'pending') ? list : undefined;
  });
}

/**
 * A test of alice's whose one request step GETs `url` (a template over the environment's variables,
 * `code` among them) and asserts status 200; `run(code)` triggers it with that `code` and answers
 * the finished run. `environment` is merged into the default environment's settings.
 */
export async function statusCodeTest(
  h: ApiHarness,
  options: { name: string; url: string; environment: Record<string, unknown> },
) {
  const tests = `/buckets/${h.alice.bucketKey}/tests`;
  const created = await h.data('POST', tests, { name: options.name });
  await h.data(
    'PUT',
    `${tests}/${created.id}/environments/${created.default_environment_id}`,
    options.environment,
  );
  const test = await h.data('PUT', `${tests}/${created.id}`, {
    steps: [
      {
        step_type: 'request',
        method: 'GET',
        url: options.url,
        assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
      },
    ],
  });
  const run = async (code: string) => {
    const response = await h.call({
      method: 'GET',
      url: `${new URL(test.trigger_url).pathname}?code=${code}`,
      as: null,
    });
    return finishedRun(h, test.id, response.json().data.runs[0].test_run_id as string);
  };
  return { test, run, environmentId: created.default_environment_id as string };
}
