import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import { presentApplication } from './present.js';
import {
  ApplicationCreate,
  ApplicationCreated,
  ApplicationOut,
  ApplicationParams,
  ApplicationWithSecretOut,
} from './schemas.js';

/**
 * Client applications (spec 5.2). They manage credentials, so only personal tokens may use these
 * routes: a token granted to an application cannot create, see or delete applications.
 */
export const applicationRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { applications } = ctx.services;
    const tags = ['applications'];
    const config = { scope: 'api:read' as const, personalToken: true };

    app.post(
      '/applications',
      {
        config,
        schema: {
          tags,
          summary:
            'Register a client application; the answer holds its client secret and an access token for the owner, shown once',
          body: ApplicationCreate,
          response: { 201: Envelope(ApplicationCreated), ...errorResponses },
        },
      },
      async (request, reply) => {
        const created = await applications.create(principalOf(request), request.body);
        reply.code(201);
        return ok({
          ...presentApplication(created.application),
          client_secret: created.clientSecret,
          access_token: created.accessToken,
        });
      },
    );

    app.get(
      '/applications',
      {
        config,
        schema: {
          tags,
          summary: 'The applications of the account, oldest first',
          response: { 200: Envelope(Type.Array(ApplicationOut)), ...errorResponses },
        },
      },
      async (request) => ok((await applications.list(principalOf(request))).map(presentApplication)),
    );

    app.get(
      '/applications/:client_id',
      {
        config,
        schema: {
          tags,
          summary: 'One application of the account',
          params: ApplicationParams,
          response: { 200: Envelope(ApplicationOut), ...errorResponses },
        },
      },
      async (request) =>
        ok(presentApplication(await applications.get(principalOf(request), request.params.client_id))),
    );

    app.post(
      '/applications/:client_id/secret',
      {
        config,
        schema: {
          tags,
          summary: 'Replace the client secret; the new one is shown once and the old one stops working',
          params: ApplicationParams,
          response: { 200: Envelope(ApplicationWithSecretOut), ...errorResponses },
        },
      },
      async (request) => {
        const rotated = await applications.rotateSecret(principalOf(request), request.params.client_id);
        return ok({ ...presentApplication(rotated.application), client_secret: rotated.clientSecret });
      },
    );

    app.delete(
      '/applications/:client_id',
      {
        config,
        schema: {
          tags,
          summary: 'Delete the application; every token issued to it stops working at once',
          params: ApplicationParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        await applications.delete(principalOf(request), request.params.client_id);
        return noContent(reply);
      },
    );
  };
