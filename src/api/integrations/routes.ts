import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  type Integration,
  IntegrationInput,
  IntegrationPatch,
  maskedConfig,
} from '../../domain/integrations.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import { IntegrationOut, IntegrationParams, TeamParams } from './schemas.js';

export function presentIntegration(integration: Integration) {
  return {
    id: integration.id,
    uuid: integration.id,
    team_id: integration.team_id,
    integration_type: integration.integration_type,
    type: integration.integration_type,
    description: integration.description,
    config: maskedConfig(integration),
    created_at: integration.created_at,
    notify_on: integration.notify_on,
    notify_threshold: integration.notify_threshold,
    template: integration.template,
  };
}

/** A team's integrations (DESIGN §5): Slack, PagerDuty, a signed webhook, the browser-test partner. */
export const integrationRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { integrations } = ctx.services;
    const tags = ['integrations'];
    const write = { scope: 'bucket:write' as const };
    const base = '/teams/:team_id/integrations';

    app.get(
      base,
      {
        schema: {
          tags,
          summary: 'Integrations of the team',
          params: TeamParams,
          response: { 200: Envelope(Type.Array(IntegrationOut)), ...errorResponses },
        },
      },
      async (request) =>
        ok((await integrations.list(principalOf(request), request.params.team_id)).map(presentIntegration)),
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary: 'Add an integration: {integration_type, description, config}',
          params: TeamParams,
          body: IntegrationInput,
          response: { 201: Envelope(IntegrationOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const created = await integrations.create(principalOf(request), request.params.team_id, request.body);
        reply.code(201);
        return ok(presentIntegration(created));
      },
    );

    app.get(
      `${base}/:integration_id`,
      {
        schema: {
          tags,
          summary: 'One integration',
          params: IntegrationParams,
          response: { 200: Envelope(IntegrationOut), ...errorResponses },
        },
      },
      async (request) => {
        const { team_id, integration_id } = request.params;
        return ok(presentIntegration(await integrations.get(principalOf(request), team_id, integration_id)));
      },
    );

    app.put(
      `${base}/:integration_id`,
      {
        config: write,
        schema: {
          tags,
          summary:
            'Change the description or when the integration notifies: {description, notify_on, notify_threshold}',
          params: IntegrationParams,
          body: IntegrationPatch,
          response: { 200: Envelope(IntegrationOut), ...errorResponses },
        },
      },
      async (request) => {
        const { team_id, integration_id } = request.params;
        return ok(
          presentIntegration(
            await integrations.update(principalOf(request), team_id, integration_id, request.body),
          ),
        );
      },
    );

    app.delete(
      `${base}/:integration_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete an integration (environments naming it skip it)',
          params: IntegrationParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { team_id, integration_id } = request.params;
        await integrations.delete(principalOf(request), team_id, integration_id);
        return noContent(reply);
      },
    );
  };
