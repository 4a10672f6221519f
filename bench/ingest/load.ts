/**
 * The load generator of the ingest benchmark, in a process of its own so that it does not share an
 * event loop with the harness that samples the servers. Runs the load the JSON file named by its
 * one argument describes and prints the figures as one JSON line:
 *
 * - `autocannon`: autocannon at `connections` connections (latency in whole milliseconds);
 * - `loop`: `connections` keep-alive connections, each sending its next request when the previous
 *   answer is read in full, timed to the microsecond (for the read latencies, which are small).
 */
import fs from 'node:fs';
import autocannon from 'autocannon';
import { Client } from 'undici';
import { benchBatch } from './messages.js';

export interface LoadSpec {
  mode: 'autocannon' | 'loop';
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The path of every request, unless `paths` is given. */
  path: string;
  /** Paths to pick from at random, one per request. */
  paths?: string[];
  body?: string;
  /**
   * Instead of `body`: every request carries a new batch of this many messages (bench/ingest/messages.ts)
   * stamped with the time it is sent, as a client shipping live traffic would.
   */
  batch?: number;
}

export interface LoadResult {
  /** Seconds the run took. */
  duration_s: number;
  requests: number;
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

let nextMessage = 0;

/** A fresh batch: message numbers continue from the last one, timestamps are now. */
function freshBatch(size: number): string {
  const body = JSON.stringify(benchBatch(nextMessage, size, Date.now() / 1000));
  nextMessage += size;
  return body;
}

const pickPath = (spec: LoadSpec): string =>
  spec.paths && spec.paths.length > 0
    ? spec.paths[Math.floor(Math.random() * spec.paths.length)]!
    : spec.path;

async function withAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const { paths, batch } = spec;
  const perRequest = (paths && paths.length > 0) || batch !== undefined;
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.duration,
    timeout: 30,
    requests: [
      {
        method: spec.method,
        path: spec.path,
        headers: spec.headers,
        ...(spec.body !== undefined && { body: spec.body }),
        ...(perRequest && {
          setupRequest: (request) => ({
            ...request,
            path: pickPath(spec),
            ...(batch !== undefined && { body: freshBatch(batch) }),
          }),
        }),
      },
    ],
  });

  return {
    duration_s: result.duration,
    requests: result.requests.total,
    rps: result.requests.average,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]),
    ),
    p50_ms: result.latency.p50,
    p90_ms: result.latency.p90,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
  };
}

/** The value below which `fraction` of the sorted values lie. */
function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

async function withLoop(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const startedAt = performance.now();
  const deadline = startedAt + spec.duration * 1000;
  const connection = async () => {
    const client = new Client(spec.url, { pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
    try {
      while (performance.now() < deadline) {
        const sentAt = performance.now();
        try {
          const response = await client.request({
            method: spec.method,
            path: pickPath(spec),
            headers: spec.headers,
            ...(spec.body !== undefined && { body: spec.body }),
            ...(spec.batch !== undefined && { body: freshBatch(spec.batch) }),
          });
          await response.body.arrayBuffer();
          latencies.push(performance.now() - sentAt);
          statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
        } catch {
          errors++;
        }
      }
    } finally {
      await client.close();
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, connection));
  const seconds = (performance.now() - startedAt) / 1000;
  const ok = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((n, [, c]) => n + c, 0);
  latencies.sort((a, b) => a - b);
  return {
    duration_s: seconds,
    requests: latencies.length,
    rps: latencies.length / seconds,
    ok,
    non2xx: latencies.length - ok,
    errors,
    timeouts: 0,
    status_codes: statusCodes,
    p50_ms: percentile(latencies, 0.5),
    p90_ms: percentile(latencies, 0.9),
    p99_ms: percentile(latencies, 0.99),
    max_ms: latencies.at(-1) ?? 0,
  };
}

const specFile = process.argv[2];
if (!specFile) throw new Error('usage: load.ts <spec.json>');
const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as LoadSpec;
const result = spec.mode === 'loop' ? await withLoop(spec) : await withAutocannon(spec);
process.stdout.write(`${JSON.stringify(result)}\n`);
