/**
 * `vigil agent --url U --token T`: a remote agent (docs/agents.md). It takes runs meant for it from
 * the server over HTTP(S) with long-polls, runs them here with the same engine as the server's
 * workers (its own script sandbox, EGRESS_POLICY from its environment), reports heartbeats and the
 * result, and resolves subtests through the server. No store, no DATA_DIR.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { VERSION } from '../config/version.js';
import type { RunOutcome } from '../domain/results.js';
import {
  createEngine,
  type EngineLimits,
  type PartnerPort,
  type RunDefinition,
  type SubtestPort,
} from '../runner/engine.js';
import type { EgressPolicy } from '../net/egress.js';
import type { Metrics } from '../observability/metrics.js';
import { listenForMetrics, type MetricsListener } from '../observability/scrape.js';
import { LazyScriptSandbox } from '../runner/lazy-sandbox.js';

export const AGENT_USAGE = `Usage: vigil agent --url PUBLIC_URL --token AGENT_TOKEN [--concurrency N] [--metrics-port N]

Runs the tests whose environment picks this agent (remote_agents), here, and reports their results
to the Vigil server at PUBLIC_URL. Register the agent first (POST /teams/<team_id>/agents) to get
its token. The agent reaches the server only over HTTP(S); use https:// outside a trusted network.

Options:
  --url URL           the server's PUBLIC_URL
  --token TOKEN       the agent token (or set VIGIL_AGENT_TOKEN, which keeps it out of ps)
  --concurrency N     runs executed at the same time (1–100, default 1)
  --metrics-port N    serve the agent's Prometheus metrics at http://HOST:N/metrics (default
                      METRICS_PORT; 0 or unset: none); METRICS_TOKEN, when set, guards them
  -h, --help          this help

EGRESS_POLICY=public-only refuses requests to loopback, private and link-local addresses.
SIGINT or SIGTERM stops the agent: runs in progress are given back to the server for another try.
`;

/** How long one long-poll asks the server to wait (seconds), and the client's extra patience. */
const POLL_WAIT_SECONDS = 25;
const POLL_GRACE_MS = 15_000;
const HEARTBEAT_MS = 5_000;
const BACKOFF = { firstMs: 1_000, maxMs: 30_000 } as const;
const CALL_TIMEOUT_MS = 60_000;

export interface AgentOptions {
  url: string;
  token: string;
  concurrency: number;
  egress: EgressPolicy;
  /** One line per state change; never the token. */
  log: (line: string) => void;
  /** Where the agent serves its metrics (`--metrics-port`, METRICS_PORT); absent: it does not count. */
  metrics?: { port: number; host: string; token: string | undefined };
}

interface ClaimedRun {
  run: { id: string; test_id: string; environment_name: string; agent: string | null; source?: string };
  definition: RunDefinition;
  /** How often the server wants to hear from a busy agent (a quarter of its WORKER_DEAD_AFTER). */
  heartbeat_seconds?: number;
  /** The server's RUN_TIMEOUT and RESPONSE_BODY_LIMIT, which the agent applies as the server would. */
  limits?: {
    run_timeout_seconds?: number | null;
    response_body_limit?: number;
    check_timeout_ms?: number | null;
  };
}

class AgentRefused extends Error {}

/** `vigil agent` for the real process: flags, signals, and the exit code. */
export async function agent(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const log = (line: string) => process.stdout.write(`${new Date().toISOString()} vigil agent: ${line}\n`);
  let options: AgentOptions | 'help';
  try {
    options = parseOptions(argv, env, log);
  } catch (error) {
    process.stderr.write(`vigil agent: ${(error as Error).message}\n\n${AGENT_USAGE}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(AGENT_USAGE);
    return 0;
  }
  const controller = new AbortController();
  const stop = (signal: string) => {
    if (controller.signal.aborted) return;
    log(`${signal}: stopping; runs in progress are given back to the server`);
    controller.abort();
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    return await runAgent(options, controller.signal);
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

function parseOptions(
  argv: string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): AgentOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      concurrency: { type: 'string' },
      'metrics-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  if (!values.url) throw new Error('--url is required');
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new Error(`--url must be an http:// or https:// URL, got "${values.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`--url must be an http:// or https:// URL, got "${values.url}"`);
  const token = values.token ?? env.VIGIL_AGENT_TOKEN;
  if (!token) throw new Error('--token (or VIGIL_AGENT_TOKEN) is required');
  if (!/^\S{16,512}$/.test(token)) throw new Error('--token does not look like an agent token');
  let concurrency = 1;
  if (values.concurrency !== undefined) {
    concurrency = Number(values.concurrency);
    if (!/^\d+$/.test(values.concurrency) || concurrency < 1 || concurrency > 100)
      throw new Error(`--concurrency must be a whole number from 1 to 100, got "${values.concurrency}"`);
  }
  const egress = env.EGRESS_POLICY || 'allow-all';
  if (egress !== 'allow-all' && egress !== 'public-only')
    throw new Error(`EGRESS_POLICY must be allow-all or public-only, got "${egress}"`);
  if (url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
    log(`warning: ${url.origin} is plain http; the agent token and results travel unencrypted`);
  }
  const metricsPort = values['metrics-port'] ?? env.METRICS_PORT ?? '0';
  if (!/^\d+$/.test(metricsPort) || Number(metricsPort) > 65535)
    throw new Error(`--metrics-port must be a port number from 0 to 65535, got "${metricsPort}"`);
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,512}$/.test(metricsToken))
    throw new Error('METRICS_TOKEN must be 16 to 512 printable characters without spaces');
  return {
    url: url.href.replace(/\/+$/, ''),
    token,
    concurrency,
    egress,
    log,
    ...(Number(metricsPort) !== 0 && {
      metrics: { port: Number(metricsPort), host: env.HOST || '127.0.0.1', token: metricsToken },
    }),
  };
}

/** Runs until `signal` aborts (0) or the server refuses the token (1). */
export async function runAgent(options: AgentOptions, signal: AbortSignal): Promise<number> {
  const client = new AgentClient(options);
  const scripts = new LazyScriptSandbox();
  const state = new StateLog(options.log);
  // A refused token stops every slot.
  const refused = new AbortController();
  const stopping = AbortSignal.any([signal, refused.signal]);
  options.log(
    `agent ${VERSION} for ${options.url}, ${options.concurrency} run(s) at a time, EGRESS_POLICY=${options.egress}`,
  );
  // prom-client is loaded only when the agent serves metrics.
  let metrics: Metrics | null = null;
  let metricsListener: MetricsListener | null = null;
  if (options.metrics) {
    const { Metrics } = await import('../observability/metrics.js');
    metrics = new Metrics();
    metricsListener = await listenForMetrics(
      { metrics, token: options.metrics.token },
      { port: options.metrics.port, host: options.metrics.host },
    );
    options.log(`metrics on http://${options.metrics.host}:${metricsListener.port}/metrics`);
  }

  const slot = async () => {
    let backoff: number = BACKOFF.firstMs;
    while (!stopping.aborted) {
      let claimed: ClaimedRun | null;
      try {
        claimed = await client.next(stopping);
        state.set('connected', `connected to ${options.url}; waiting for runs`);
        backoff = BACKOFF.firstMs;
      } catch (error) {
        if (stopping.aborted) break;
        if (error instanceof AgentRefused) {
          state.set('refused', error.message);
          refused.abort();
          break;
        }
        state.set('unreachable', `server unreachable (${reason(error)}); retrying with backoff`);
        await delay(backoff, stopping);
        backoff = Math.min(backoff * 2, BACKOFF.maxMs);
        continue;
      }
      if (claimed) await execute(claimed);
    }
  };

  const execute = async ({ run, definition, heartbeat_seconds, limits }: ClaimedRun) => {
    const heartbeatMs =
      typeof heartbeat_seconds === 'number' && heartbeat_seconds > 0
        ? Math.min(HEARTBEAT_MS, heartbeat_seconds * 1000)
        : HEARTBEAT_MS;
    options.log(`run ${run.id}: "${definition.test.name}" (${run.environment_name}) started`);
    const controller = new AbortController();
    let canceled = false;
    const onStop = () => controller.abort();
    stopping.addEventListener('abort', onStop, { once: true });
    const heartbeat = setInterval(() => {
      client.heartbeat(run.id).then(
        (own) => {
          if (!own && !controller.signal.aborted) {
            canceled = true;
            options.log(`run ${run.id}: no longer this agent's (canceled on the server); aborting it`);
            controller.abort();
          }
        },
        () => undefined, // The server is unreachable for now: the run goes on.
      );
    }, heartbeatMs);
    try {
      const engine = createEngine({
        scripts,
        egress: options.egress,
        subtests: remoteSubtests(client, run.id),
        partner: AGENT_PARTNER,
        limits: engineLimits(limits),
      });
      const outcome = await engine.run(definition, { signal: controller.signal });
      if (canceled) return;
      if (stopping.aborted && outcome.result === 'canceled') {
        await client.release(run.id).catch(() => undefined);
        options.log(`run ${run.id}: given back to the server`);
        return;
      }
      metrics?.runFinished(outcome.result, run.source ?? 'unknown', outcome.finished_at - outcome.started_at);
      await deliver(run.id, outcome);
    } catch (error) {
      options.log(`run ${run.id}: could not be run here (${reason(error)}); giving it back`);
      await client.release(run.id).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
      stopping.removeEventListener('abort', onStop);
    }
  };

  /** Posts the result, retrying while the server is unreachable (until the agent stops). */
  const deliver = async (runId: string, outcome: RunOutcome) => {
    let backoff: number = BACKOFF.firstMs;
    for (;;) {
      try {
        const stored = await client.result(runId, outcome);
        options.log(
          stored
            ? `run ${runId}: ${outcome.result}, result reported`
            : `run ${runId}: ${outcome.result}, but the server no longer expects it (canceled or handed over)`,
        );
        return;
      } catch (error) {
        if (error instanceof AgentRefused || signal.aborted) {
          options.log(`run ${runId}: result not reported (${reason(error)})`);
          return;
        }
        state.set('unreachable', `server unreachable (${reason(error)}); retrying with backoff`);
        await delay(backoff, signal);
        backoff = Math.min(backoff * 2, BACKOFF.maxMs);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: options.concurrency }, slot));
  } finally {
    await scripts.close();
    await metricsListener?.close();
  }
  options.log('stopped');
  return refused.signal.aborted ? 1 : 0;
}

/** Subtests of a run resolve and are recorded on the server, within the run's team. */
function remoteSubtests(client: AgentClient, runId: string): SubtestPort {
  return {
    resolve: async (step, _parent, variables) => {
      try {
        return await client.resolveSubtest(runId, {
          test_uuid: step.test_uuid,
          ...(step.environment_uuid && { environment_uuid: step.environment_uuid }),
          ...(step.bucket_key && { bucket_key: step.bucket_key }),
          variables,
        });
      } catch (error) {
        return { error: `the server could not resolve the subtest: ${reason(error)}` };
      }
    },
    record: async (child, outcome) => {
      try {
        return await client.recordSubtest(runId, {
          test_uuid: child.test.id,
          environment_uuid: child.environment.id,
          bucket_key: child.bucket.key,
          variables: child.variables,
          outcome,
        });
      } catch {
        return null;
      }
    },
  };
}

/** Browser tests call the partner with the team's integration key, which stays on the server. */
const AGENT_PARTNER: PartnerPort = {
  execute: () =>
    Promise.reject(
      new Error(
        'partner-inspector steps run only on server workers, not on remote agents: run this test in a region instead',
      ),
    ),
};

/** The agent protocol over HTTP(S) (docs/agents.md). */
class AgentClient {
  private readonly headers: Record<string, string>;

  constructor(private readonly options: AgentOptions) {
    this.headers = {
      authorization: `Bearer ${options.token}`,
      'user-agent': `vigil-agent/${VERSION}`,
      'x-vigil-agent-hostname':
        os
          .hostname()
          .replace(/[^A-Za-z0-9._-]/g, '-')
          .slice(0, 255) || 'unknown',
      'x-vigil-agent-concurrency': String(options.concurrency),
    };
  }

  /** The next run for this agent, or null when none came within the wait. */
  async next(signal: AbortSignal): Promise<ClaimedRun | null> {
    const response = await this.call(
      `/agent/v1/jobs/next?wait=${POLL_WAIT_SECONDS}`,
      undefined,
      AbortSignal.any([signal, AbortSignal.timeout(POLL_WAIT_SECONDS * 1000 + POLL_GRACE_MS)]),
    );
    if (response.status === 204) return null;
    return this.data<ClaimedRun>(response, 200);
  }

  /** False when the run is no longer this agent's. */
  async heartbeat(runId: string): Promise<boolean> {
    return this.ownership(await this.call(`/agent/v1/runs/${runId}/heartbeat`));
  }

  async result(runId: string, outcome: RunOutcome): Promise<boolean> {
    return this.ownership(await this.call(`/agent/v1/runs/${runId}/result`, { outcome }));
  }

  async release(runId: string): Promise<boolean> {
    return this.ownership(await this.call(`/agent/v1/runs/${runId}/release`));
  }

  async resolveSubtest(
    runId: string,
    body: {
      test_uuid: string;
      environment_uuid?: string;
      bucket_key?: string;
      variables: Record<string, string>;
    },
  ): Promise<RunDefinition | { error: string }> {
    return this.data(await this.call(`/agent/v1/runs/${runId}/subtests/resolve`, body), 200);
  }

  async recordSubtest(
    runId: string,
    body: {
      test_uuid: string;
      environment_uuid: string;
      bucket_key: string;
      variables: Record<string, string>;
      outcome: RunOutcome;
    },
  ): Promise<string | null> {
    const data = await this.data<{ run_id?: string }>(
      await this.call(`/agent/v1/runs/${runId}/subtests/record`, body),
      200,
    );
    return data.run_id ?? null;
  }

  private async call(path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const response = await fetch(`${this.options.url}${path}`, {
      method: 'POST',
      headers: body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (response.status === 401) {
      await response.body?.cancel();
      throw new AgentRefused(
        'the server refused the agent token (unknown, or the agent was deleted); stopping',
      );
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      throw new Error(`the server answered ${response.status}`);
    }
    return response;
  }

  private async ownership(response: Response): Promise<boolean> {
    await response.body?.cancel();
    if (response.status === 204) return true;
    if (response.status === 409) return false;
    throw new Error(`the server answered ${response.status}`);
  }

  private async data<T>(response: Response, status: number): Promise<T> {
    const text = await response.text();
    if (response.status !== status) {
      let message = text.slice(0, 300);
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not JSON: the text itself says it
      }
      throw new Error(`the server answered ${response.status}: ${message}`);
    }
    return (JSON.parse(text) as { data: T }).data;
  }
}

/** Logs a line when the agent's connection state changes, not on every retry. */
class StateLog {
  private current = '';
  constructor(private readonly log: (line: string) => void) {}
  set(state: string, line: string): void {
    if (state === this.current) return;
    this.current = state;
    this.log(line);
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function reason(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

/** The server's limits for a run, where it sent sound ones; the engine's defaults otherwise. */
function engineLimits(limits: ClaimedRun['limits']): Partial<EngineLimits> {
  const out: Partial<EngineLimits> = {};
  const timeout = limits?.run_timeout_seconds;
  if (typeof timeout === 'number' && timeout > 0) out.runTimeoutMs = timeout * 1000;
  const body = limits?.response_body_limit;
  if (typeof body === 'number' && body > 0) out.maxBodyBytes = body;
  const checks = limits?.check_timeout_ms;
  if (typeof checks === 'number' && checks > 0) out.checkTimeMs = checks;
  return out;
}
