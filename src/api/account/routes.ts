import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SignInThrottle } from '../../auth/throttle.js';
import { AppError, RateLimited } from '../../domain/errors.js';
import { SCOPES } from '../../domain/scopes.js';
import { type AccountView, MIN_SIGNUP_PASSWORD } from '../../services/accounts.js';
import { type Principal, visibleEmail } from '../../services/principal.js';
import { MAX_TOKEN_LIFETIME } from '../../services/tokens.js';
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
  kind: Type.Union([Type.Literal('personal'), Type.Literal('oauth'), Type.Literal('dashboard')], {
    description:
      "personal: the account holder's own; oauth: granted to an application; dashboard: the web dashboard's sign-in",
  }),
  client_id: Nullable(Type.String()),
  client_name: Nullable(Type.String()),
  scopes: Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope)))),
  name: Nullable(Type.String({ description: 'Given when the token was made on the token page' })),
  created_at: Type.Integer(),
  last_used_at: Nullable(Type.Integer({ description: 'Refreshed at most every five minutes' })),
  expires_at: Nullable(
    Type.Integer({ description: 'From this second on the token is refused; null: never' }),
  ),
});

const TokenCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  scopes: Type.Array(Type.String(), {
    minItems: 1,
    maxItems: SCOPES.length,
    description: `Some of ${SCOPES.join(', ')}`,
  }),
  expires_in: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 60,
        maximum: MAX_TOKEN_LIFETIME,
        description: 'Seconds the token lasts; absent or null: until revoked',
      }),
    ),
  ),
});

const TokenCreated = Type.Object({
  ...TokenOut.properties,
  token: Type.String({ description: 'The token itself, shown this once; only its hash is kept' }),
});

const TokenParams = Type.Object({ token_id: Type.String() });

const AccountUpdate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed; may not be blank' }),
});

const PasswordChange = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 1024 }),
  new_password: Type.String({
    minLength: MIN_SIGNUP_PASSWORD,
    maxLength: 1024,
    description: `${MIN_SIGNUP_PASSWORD} to 1024 characters, as at sign-up`,
  }),
});

function presentAccount(principal: Principal, account: AccountView) {
  return {
    id: account.id,
    uuid: account.id,
    name: account.name,
    email: visibleEmail(principal, account.email),
    created_at: account.created_at,
    teams: account.teams.map((t) => ({ id: t.id, uuid: t.id, name: t.name })),
  };
}

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
        return ok(presentAccount(principal, await ctx.services.accounts.get(principal)));
      },
    );

    const credentials = { scope: 'api:read' as const, personalToken: true };

    app.put(
      '/account',
      {
        config: credentials,
        schema: {
          tags: ['account'],
          summary: 'Rename the account (personal tokens only); the e-mail address cannot change here',
          body: AccountUpdate,
          response: { 200: Envelope(AccountOut), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        return ok(
          presentAccount(principal, await ctx.services.accounts.rename(principal, request.body.name)),
        );
      },
    );

    /** Wrong current passwords, counted per account and client address like failed sign-ins. */
    const passwordThrottle = new SignInThrottle();

    app.post(
      '/account/password',
      {
        config: credentials,
        schema: {
          tags: ['account'],
          summary:
            'Change the password (personal tokens only): ends every web session of the account; tokens stay valid',
          body: PasswordChange,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const retryAfter = passwordThrottle.retryAfter(principal.accountId, request.ip);
        if (retryAfter > 0) {
          throw new RateLimited(
            `Too many wrong current passwords; try again in ${Math.ceil(retryAfter / 60)} minute(s)`,
            retryAfter,
          );
        }
        try {
          await ctx.services.accounts.changePassword(principal, {
            currentPassword: request.body.current_password,
            newPassword: request.body.new_password,
          });
        } catch (error) {
          if (error instanceof AppError && error.field === '/current_password')
            passwordThrottle.failed(principal.accountId, request.ip);
          throw error;
        }
        passwordThrottle.succeeded(principal.accountId, request.ip);
        return noContent(reply);
      },
    );

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

    app.post(
      '/account/tokens',
      {
        config: credentials,
        schema: {
          tags: ['account'],
          summary:
            'Make a named personal token with some scopes and an optional lifetime; the answer holds the token, shown once',
          body: TokenCreate,
          response: { 201: Envelope(TokenCreated), ...errorResponses },
        },
      },
      async (request, reply) => {
        const created = await ctx.services.tokens.createForAccount(principalOf(request), {
          name: request.body.name,
          scopes: request.body.scopes,
          expiresIn: request.body.expires_in,
        });
        reply.code(201);
        return ok(created);
      },
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
