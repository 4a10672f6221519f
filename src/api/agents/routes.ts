import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AgentView } from '../../services/agents.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import { AgentCreate, AgentCreatedOut, AgentOut, AgentParams, TeamParams } from './schemas.js';

export function presentAgent(agent: AgentView) {
  return {
    id: agent.id,
    uuid: agent.id,
    name: agent.name,
    region: agent.region,
    version: agent.version,
    hostname: agent.hostname,
    last_seen_at: agent.last_seen_at,
    status: agent.status,
    created_at: agent.created_at,
  };
}

/** Registering a team's remote agents (docs/agents.md); the agents' own protocol is in protocol.ts. */
export const agentRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { agents } = ctx.services;
    const tags = ['agents'];
    const write = { scope: 'bucket:write' as const };
    const base = '/teams/:team_id/agents';

    app.get(
      base,
      {
        schema: {
          tags,
          summary: "The team's remote agents",
          params: TeamParams,
          response: { 200: Envelope(Type.Array(AgentOut)), ...errorResponses },
        },
      },
      async (request) => {
        const rows = await agents.list(principalOf(request), request.params.team_id);
        return ok(rows.map(presentAgent));
      },
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary: 'Register a remote agent; its token is shown only in this answer',
          params: TeamParams,
          body: AgentCreate,
          response: { 201: Envelope(AgentCreatedOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { agent, token } = await agents.create(
          principalOf(request),
          request.params.team_id,
          request.body,
        );
        reply.code(201);
        return ok({ ...presentAgent(agent), token });
      },
    );

    app.get(
      `${base}/:agent_id`,
      {
        schema: {
          tags,
          summary: 'One remote agent',
          params: AgentParams,
          response: { 200: Envelope(AgentOut), ...errorResponses },
        },
      },
      async (request) => {
        const { team_id, agent_id } = request.params;
        return ok(presentAgent(await agents.get(principalOf(request), team_id, agent_id)));
      },
    );

    app.delete(
      `${base}/:agent_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a remote agent: its token stops working at once',
          params: AgentParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { team_id, agent_id } = request.params;
        await agents.delete(principalOf(request), team_id, agent_id);
        return noContent(reply);
      },
    );
  };
