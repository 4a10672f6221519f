import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { visibleEmail } from '../../services/principal.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, ok } from '../shared/envelope.js';

const AccountOut = Type.Object({
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  email: Type.String({ description: 'Empty unless the token has the account:email scope' }),
  created_at: Type.Integer(),
  teams: Type.Array(Type.Object({ id: Type.String(), uuid: Type.String(), name: Type.String() })),
});

/** `GET /` (spec 4.1) and `GET /account` (DESIGN §3). */
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
  };
