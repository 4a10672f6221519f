import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { RunOutcome } from '../../domain/results.js';
import { type AgentClient, LONG_POLL } from '../../services/agents.js';
import type { AgentRow, TestRunRow } from '../../store/database.js';
import type { ApiContext } from '../context.js';
import { noContent, ok } from '../shared/envelope.js';
import { NextQuery, ResultBody, RunIdParams, SubtestRecordBody, SubtestResolveBody } from './schemas.js';

/** The largest result an agent may post: full request and response bodies of every step. */
export const AGENT_RESULT_LIMIT = 50 * 1024 * 1024;

const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;
const USER_AGENT = /^vigil-agent\/([0-9A-Za-z.+_-]{1,64})/;
const HOSTNAME = /^[A-Za-z0-9._-]{1,255}$/;

/** The agent each request of the protocol authenticated as. */
const agents = new WeakMap<FastifyRequest, AgentRow>();

function agentOf(request: FastifyRequest): AgentRow {
  const agent = agents.get(request);
  if (!agent) throw new AppError('unauthorized', 'This endpoint needs Authorization: Bearer <agent token>');
  return agent;
}

/** What the agent says about itself: `User-Agent: vigil-agent/<version>` and two headers of its own. */
function clientOf(request: FastifyRequest): AgentClient {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const version = USER_AGENT.exec(header('user-agent') ?? '')?.[1];
  const hostname = header('x-vigil-agent-hostname');
  const concurrency = Number(header('x-vigil-agent-concurrency'));
  return {
    version,
    hostname: hostname && HOSTNAME.test(hostname) ? hostname : undefined,
    concurrency:
      Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 1000 ? concurrency : undefined,
  };
}

function presentAgentRun(run: TestRunRow) {
  return {
    id: run.id,
    test_id: run.test_id,
    bucket_key: run.bucket_key,
    environment_id: run.environment_id,
    environment_name: run.environment_name,
    region: run.region,
    agent: run.agent,
    source: run.source,
    queued_at: run.queued_at,
    executions: run.executions,
  };
}

const notOwn = (runId: string) =>
  new AppError(
    'conflict',
    `Run ${runId} is no longer this agent's (canceled, finished or handed over): abandon it`,
  );

/**
 * The remote agent protocol (docs/agents.md), under `/agent/v1`: authenticated with an agent token,
 * never a user token, and left out of the OpenAPI document of the user API.
 */
export const agentProtocolRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const service = ctx.services.agents;
    // No user token here: the agent token is checked below.
    const config = { scope: null };
    const tags = ['agent protocol'];
    const polls = new Set<AbortController>();

    // Waiting long-polls answer 204 at once when the server stops.
    app.addHook('preClose', (done) => {
      for (const poll of polls) poll.abort();
      done();
    });

    app.addHook('onRequest', async (request) => {
      const header = request.headers.authorization;
      const match = header ? BEARER.exec(header) : null;
      if (!match)
        throw new AppError('unauthorized', 'The agent protocol needs Authorization: Bearer <agent token>');
      const agent = await service.authenticate(match[1]!);
      if (!agent)
        throw new AppError('unauthorized', 'The agent token is unknown, or its agent has been deleted');
      agents.set(request, agent);
      await service.seen(agent, clientOf(request));
    });

    app.post(
      '/agent/v1/jobs/next',
      { config, schema: { hide: true, tags, querystring: NextQuery } },
      async (request, reply) => {
        const agent = agentOf(request);
        const waitMs = Math.round((request.query.wait ?? LONG_POLL.defaultMs / 1000) * 1000);
        const controller = new AbortController();
        const hangUp = () => controller.abort();
        polls.add(controller);
        reply.raw.once('close', hangUp);
        try {
          const claimed = await service.next(
            agent,
            clientOf(request),
            Math.min(waitMs, LONG_POLL.maxMs),
            controller.signal,
          );
          if (!claimed) return noContent(reply);
          if (gone(reply)) {
            // The agent hung up before it heard of the run: it goes to the next delivery.
            await service.release(agent, claimed.run.id, 'the agent disconnected before receiving the run');
            return noContent(reply);
          }
          return ok({
            run: presentAgentRun(claimed.run),
            definition: claimed.definition,
            heartbeat_seconds: ctx.services.workers.liveness.heartbeatMs / 1000,
            limits: {
              run_timeout_seconds: ctx.runTimeoutSeconds ?? null,
              response_body_limit: ctx.responseBodyLimit,
              check_timeout_ms: ctx.checkTimeoutMs ?? null,
            },
          });
        } finally {
          polls.delete(controller);
          reply.raw.off('close', hangUp);
        }
      },
    );

    app.post(
      '/agent/v1/runs/:run_id/heartbeat',
      { config, schema: { hide: true, tags, params: RunIdParams } },
      async (request, reply) => {
        const { run_id } = request.params;
        if (!(await service.stillRunning(agentOf(request), run_id))) throw notOwn(run_id);
        return noContent(reply);
      },
    );

    app.post(
      '/agent/v1/runs/:run_id/result',
      {
        config,
        bodyLimit: AGENT_RESULT_LIMIT,
        schema: { hide: true, tags, params: RunIdParams, body: ResultBody },
      },
      async (request, reply) => {
        const { run_id } = request.params;
        const stored = await service.report(agentOf(request), run_id, request.body.outcome as RunOutcome);
        if (!stored) throw notOwn(run_id);
        return noContent(reply);
      },
    );

    app.post(
      '/agent/v1/runs/:run_id/release',
      { config, schema: { hide: true, tags, params: RunIdParams } },
      async (request, reply) => {
        const { run_id } = request.params;
        const released = await service.release(agentOf(request), run_id, 'the agent running it stopped');
        if (!released) throw notOwn(run_id);
        return noContent(reply);
      },
    );

    app.post(
      '/agent/v1/runs/:run_id/subtests/resolve',
      { config, schema: { hide: true, tags, params: RunIdParams, body: SubtestResolveBody } },
      async (request) => {
        const { variables, ...target } = request.body;
        const child = await service.resolveSubtest(
          agentOf(request),
          request.params.run_id,
          target,
          variables,
        );
        return ok(child);
      },
    );

    app.post(
      '/agent/v1/runs/:run_id/subtests/record',
      {
        config,
        bodyLimit: AGENT_RESULT_LIMIT,
        schema: { hide: true, tags, params: RunIdParams, body: SubtestRecordBody },
      },
      async (request) => {
        const { variables, outcome, ...target } = request.body;
        const recorded = await service.recordSubtest(
          agentOf(request),
          request.params.run_id,
          target,
          variables,
          outcome as RunOutcome,
        );
        return ok(typeof recorded === 'string' ? { run_id: recorded } : recorded);
      },
    );
  };

/** Whether the agent's connection closed before the answer went out. */
function gone(reply: FastifyReply): boolean {
  return reply.raw.destroyed && !reply.raw.writableEnded;
}
