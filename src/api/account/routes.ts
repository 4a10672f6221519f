import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../domain/scopes.js';
import { visibleEmail } from '../../services/principal.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, Nullable, ok } from '../shared/envelope.js';

const AccountOut = Type.Object({
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  email: Type.String({ description: 'Empty unless the token has the account:email scope' }),
  created_at: Type.Integer(),
  teams: Type.Array(Type.Object({ id: Type.String(), uuid: Type.String(), name: Type.String() })),
});

/** A live token of the account: never the token itself nor its hash. */
const TokenOut = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('personal'), Type.Literal('oauth')], {
    description: "personal: the account holder's own; oauth: granted to an application",
  }),
  client_id: Nullable(Type.String()),
  client_name: Nullable(Type.String()),
  scopes: Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope)))),
  created_at: Type.Integer(),
  last_used_at: Nullable(Type.Integer({ description: 'Refreshed at most every five minutes' })),
});

const TokenParams = Type.Object({ token_id: Type.String() });

/**
 * `GET /` (spec 4.1), `GET /account` (DESIGN §3), and the account's tokens (spec 5.4), which only
 * personal tokens may list or revoke.
 */
export const accountRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags: ['account'],
          summary: 'Where to go next',
          response: {
            200: Envelope(
              Type.Object({ bucket_list_url: Type.String(), current_account_url: Type.String() }),
            ),
            ...errorResponses,
          },
        },
      },
      async () =>
        ok({ bucket_list_url: `${ctx.publicUrl}/buckets`, current_account_url: `${ctx.publicUrl}/account` }),
    );

    app.get(
      '/account',
      {
        schema: {
          tags: ['account'],
          summary: 'The account of the token',
          response: { 200: Envelope(AccountOut), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const account = await ctx.services.accounts.get(principal);
        return ok({
          id: account.id,
          uuid: account.id,
          name: account.name,
          email: visibleEmail(principal, account.email),
          created_at: account.created_at,
          teams: account.teams.map((t) => ({ id: t.id, uuid: t.id, name: t.name })),
        });
      },
    );

    const credentials = { scope: 'api:read' as const, personalToken: true };

    app.get(
      '/account/tokens',
      {
        config: credentials,
        schema: {
          tags: ['account'],
          summary: 'The live access tokens of the account, newest first',
          response: { 200: Envelope(Type.Array(TokenOut)), ...errorResponses },
        },
      },
      async (request) => ok(await ctx.services.tokens.listForAccount(principalOf(request))),
    );

    app.delete(
      '/account/tokens/:token_id',
      {
        config: credentials,
        schema: {
          tags: ['account'],
          summary: 'Revoke a token of the account; it fails from the next request on',
          params: TokenParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        await ctx.services.tokens.revoke(principalOf(request), request.params.token_id);
        return noContent(reply);
      },
    );
  };
