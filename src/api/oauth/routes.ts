import { parse as parseQuery } from 'node:querystring';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { consentPage, errorPage, pageHeaders } from '../../auth/consent.js';
import {
  AUTHORIZATION_CODE_PREFIX,
  callbackWith,
  type ClientCredentials,
  clientCredentials,
  DASHBOARD_CLIENT_ID,
  DASHBOARD_NAME,
  dashboardCallback,
  isValidChallenge,
  isValidState,
  type OAuthClient,
  OAuthError,
  oauthStore,
  parseScopes,
  secretMatches,
  single,
  verifyPkce,
} from '../../auth/oauth.js';
import { hashSecret, newSecret } from '../../domain/ids.js';
import { isScope, type Scope } from '../../domain/scopes.js';
import type { ApiContext } from '../context.js';

/** The web sessions the flow needs: who is signed in, and the session's CSRF check. */
export interface SessionLookup {
  current(request: FastifyRequest): Promise<{ accountId: string; csrfToken: string } | null>;
  checkCsrf(session: { csrfToken: string }, submitted: unknown): boolean;
}

export interface OAuthRouteOptions {
  /** The clock in milliseconds (Date.now by default); tests move it to expire codes. */
  now?: () => number;
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

type Fields = Record<string, unknown>;

interface AuthorizationRequest {
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string | null;
}

/** The fields of a form body, or undefined when the request carries no form. */
function formOf(request: FastifyRequest): Fields | undefined {
  const type = request.headers['content-type'];
  if (!type || !FORM_TYPE.test(type)) return undefined;
  const body = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Fields) : {};
}

/** The `state` to echo on an error redirect: only a valid one. */
function stateOf(fields: Fields): string | undefined {
  const state = single(fields, 'state');
  return typeof state === 'string' && isValidState(state) ? state : undefined;
}

/** An origin for CSP form-action, when the callback has one a browser can name. */
function callbackOrigin(callback: string): string | undefined {
  try {
    const url = new URL(callback);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

function sendPage(reply: FastifyReply, status: number, html: string, formAction?: string): FastifyReply {
  return reply.code(status).headers(pageHeaders(formAction)).send(html);
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply
    .code(303)
    .headers({ ...NO_STORE, 'referrer-policy': 'no-referrer' })
    .header('location', location)
    .send();
}

function sendOAuthError(reply: FastifyReply, error: OAuthError, basic: boolean): FastifyReply {
  reply.code(error.status).headers(NO_STORE);
  if (error.code === 'invalid_client' && basic) reply.header('www-authenticate', 'Basic realm="Vigil"');
  return reply.send(error.toJSON());
}

/**
 * The web application flow of spec 5 (docs/oauth.md): the confirmation screen, authorization codes
 * (single use, 60 seconds, optionally PKCE S256), the code exchange and token revocation (RFC 7009).
 * The routes are public; the user is known through `sessions`, the client by its credentials.
 */
export const oauthRoutes =
  (
    ctx: Pick<ApiContext, 'services' | 'store' | 'publicUrl'>,
    sessions: SessionLookup,
    options: OAuthRouteOptions = {},
  ): FastifyPluginAsync =>
  async (app) => {
    const db = ctx.store.db;
    const { tokens } = ctx.services;
    const clock = options.now ?? Date.now;
    const nowSeconds = () => clock() / 1000;
    const config = { scope: null };
    /**
     * The dashboard's own client: public (PKCE), no consent screen, its one callback `PUBLIC_URL/app/`.
     * Its codes and tokens go to the signed-in account's hidden dashboard row (docs/oauth.md).
     */
    const dashboard: OAuthClient = {
      client_id: DASHBOARD_CLIENT_ID,
      account_id: '',
      name: DASHBOARD_NAME,
      website_url: ctx.publicUrl,
      callback_url: dashboardCallback(ctx.publicUrl),
      secret_hash: '',
      is_public: 1,
    };
    const isDashboard = (client: OAuthClient) => client === dashboard;

    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, parseQuery(body as string)),
    );

    /** The client and its callback; any problem here is shown to the user, never redirected. */
    async function resolveClient(
      fields: Fields,
    ): Promise<{ client: OAuthClient; redirectUri: string } | { title: string; message: string }> {
      const clientId = single(fields, 'client_id');
      const redirectUri = single(fields, 'redirect_uri');
      const client =
        clientId === DASHBOARD_CLIENT_ID
          ? dashboard
          : typeof clientId === 'string'
            ? await oauthStore.findClient(db, clientId)
            : undefined;
      if (!client) {
        return {
          title: 'Unknown application',
          message: 'The application that sent you here is not registered with Vigil (client_id is unknown).',
        };
      }
      if (redirectUri !== client.callback_url) {
        return {
          title: 'Wrong callback URL',
          message: `The redirect_uri sent by ${client.name} is not the callback URL it registered, so Vigil will not send you there.`,
        };
      }
      return { client, redirectUri };
    }

    /** Everything else of the request; these problems go back to the client's callback. */
    function checkRequest(fields: Fields, client: OAuthClient): AuthorizationRequest | OAuthError {
      const state = single(fields, 'state');
      if (state === null || (state !== undefined && !isValidState(state))) {
        return new OAuthError('invalid_request', 'state must be sent once, at most 1024 characters');
      }
      const scope = single(fields, 'scope');
      if (scope === null) return new OAuthError('invalid_request', 'scope must be sent once');
      const scopes = parseScopes(scope);
      if (!scopes) return new OAuthError('invalid_scope', 'scope names an unknown scope');
      const challenge = single(fields, 'code_challenge');
      const method = single(fields, 'code_challenge_method');
      if (challenge === null || method === null) {
        return new OAuthError('invalid_request', 'code_challenge and its method must be sent once');
      }
      if (challenge !== undefined || method !== undefined) {
        if (method !== 'S256') return new OAuthError('invalid_request', 'code_challenge_method must be S256');
        if (challenge === undefined || !isValidChallenge(challenge)) {
          return new OAuthError(
            'invalid_request',
            'code_challenge must be a base64url SHA-256 (43 characters)',
          );
        }
      }
      if (client.is_public === 1 && challenge === undefined) {
        return new OAuthError('invalid_request', 'This application must send a PKCE code_challenge (S256)');
      }
      return { scopes, state, codeChallenge: challenge ?? null };
    }

    /** Creates a code for the account and answers the callback URL that carries it. */
    async function issueCode(
      client: OAuthClient,
      accountId: string,
      redirectUri: string,
      checked: AuthorizationRequest,
    ): Promise<string> {
      const code = newSecret(AUTHORIZATION_CODE_PREFIX);
      const now = nowSeconds();
      await ctx.store.transaction(async (trx) => {
        const clientId = isDashboard(client)
          ? await oauthStore.dashboardClientId(trx, {
              accountId,
              publicUrl: ctx.publicUrl,
              now: Math.floor(now),
            })
          : client.client_id;
        await oauthStore.insertCode(trx, {
          codeHash: hashSecret(code),
          clientId,
          accountId,
          redirectUri,
          scopes: checked.scopes,
          codeChallenge: checked.codeChallenge,
          now,
        });
      });
      return callbackWith(redirectUri, { code, state: checked.state });
    }

    app.get('/signin/oauth/authorize', { config, schema: { hide: true } }, async (request, reply) => {
      const fields = request.query as Fields;
      const target = await resolveClient(fields);
      if ('title' in target) return sendPage(reply, 400, errorPage(target.title, target.message));
      const responseType = single(fields, 'response_type');
      if (responseType !== 'code') {
        const error =
          responseType === null
            ? new OAuthError('invalid_request', 'response_type must be sent once')
            : new OAuthError('unsupported_response_type', 'response_type must be code');
        return redirect(reply, errorLocation(target.redirectUri, error, stateOf(fields)));
      }
      const checked = checkRequest(fields, target.client);
      if (checked instanceof OAuthError) {
        return redirect(reply, errorLocation(target.redirectUri, checked, stateOf(fields)));
      }
      const session = await sessions.current(request);
      if (!session) return redirect(reply, `/signin?next=${encodeURIComponent(request.url)}`);
      // The service's own UI asks no consent: the person is already signed in to this very service.
      if (isDashboard(target.client)) {
        return redirect(
          reply,
          await issueCode(target.client, session.accountId, target.redirectUri, checked),
        );
      }
      return sendPage(
        reply,
        200,
        consentPage({
          appName: target.client.name,
          websiteUrl: target.client.website_url,
          redirectUri: target.redirectUri,
          scopes: checked.scopes,
          fields: {
            client_id: target.client.client_id,
            redirect_uri: target.redirectUri,
            scope: checked.scopes.join(' '),
            state: checked.state ?? '',
            code_challenge: checked.codeChallenge ?? '',
            ...(checked.codeChallenge !== null && { code_challenge_method: 'S256' }),
            _csrf: session.csrfToken,
          },
        }),
        callbackOrigin(target.redirectUri),
      );
    });

    app.post('/signin/oauth/authorize', { config, schema: { hide: true } }, async (request, reply) => {
      const fields = formOf(request) ?? {};
      const session = await sessions.current(request);
      if (!session) {
        return sendPage(
          reply,
          403,
          errorPage('Signed out', 'Your sign-in has ended. Go back to the application and start again.'),
        );
      }
      if (!sessions.checkCsrf(session, single(fields, '_csrf'))) {
        return sendPage(
          reply,
          403,
          errorPage(
            'Form expired',
            'This form is not valid any more. Go back to the application and start again.',
          ),
        );
      }
      const target = await resolveClient(fields);
      if ('title' in target) return sendPage(reply, 400, errorPage(target.title, target.message));
      const checked = checkRequest(fields, target.client);
      if (checked instanceof OAuthError) {
        return redirect(reply, errorLocation(target.redirectUri, checked, stateOf(fields)));
      }
      const decision = single(fields, 'decision');
      if (decision === 'deny') {
        const denied = new OAuthError('access_denied', 'The user declined');
        return redirect(reply, errorLocation(target.redirectUri, denied, checked.state));
      }
      if (decision !== 'authorize') {
        const error = new OAuthError('invalid_request', 'decision must be authorize or deny');
        return redirect(reply, errorLocation(target.redirectUri, error, checked.state));
      }
      return redirect(reply, await issueCode(target.client, session.accountId, target.redirectUri, checked));
    });

    /** The client behind the credentials; invalid_client when unknown or the secret does not match. */
    async function authenticateClient(credentials: ClientCredentials): Promise<OAuthClient> {
      if (credentials.clientId === DASHBOARD_CLIENT_ID) {
        if (credentials.clientSecret !== undefined) {
          throw new OAuthError('invalid_client', 'The dashboard client is public and has no client secret');
        }
        return dashboard;
      }
      const client = await oauthStore.findClient(db, credentials.clientId);
      if (!client) throw new OAuthError('invalid_client', 'Unknown client or wrong client secret');
      if (credentials.clientSecret !== undefined) {
        if (!secretMatches(credentials.clientSecret, client.secret_hash)) {
          throw new OAuthError('invalid_client', 'Unknown client or wrong client secret');
        }
      } else if (client.is_public !== 1) {
        throw new OAuthError('invalid_client', 'This client must authenticate with its client_secret');
      }
      return client;
    }

    /** Runs a client-authenticated endpoint, answering OAuth errors as RFC 6749 §5.2 JSON. */
    async function clientEndpoint(
      request: FastifyRequest,
      reply: FastifyReply,
      handle: (form: Fields, client: OAuthClient) => Promise<unknown>,
    ): Promise<unknown> {
      reply.headers(NO_STORE);
      let basic = false;
      try {
        const form = formOf(request);
        if (!form) {
          throw new OAuthError('invalid_request', 'Send the fields as application/x-www-form-urlencoded');
        }
        const credentials = clientCredentials(request.headers.authorization, form);
        basic = credentials.basic;
        const client = await authenticateClient(credentials);
        return await handle(form, client);
      } catch (error) {
        if (error instanceof OAuthError) return sendOAuthError(reply, error, basic);
        throw error;
      }
    }

    /** Revokes the token a code was exchanged for (the code was presented twice: RFC 6749 §4.1.2). */
    async function revokeMinted(codeHash: string): Promise<void> {
      const row = await oauthStore.findCode(db, codeHash);
      if (row?.token_id) await oauthStore.revokeTokenById(db, row.token_id, Math.floor(nowSeconds()));
    }

    app.post('/signin/oauth/access_token', { config, schema: { hide: true } }, async (request, reply) =>
      clientEndpoint(request, reply, async (form, client) => {
        const grantType = single(form, 'grant_type');
        if (grantType === undefined || grantType === null) {
          throw new OAuthError('invalid_request', 'grant_type is required (once)');
        }
        if (grantType !== 'authorization_code') {
          throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code');
        }
        const code = single(form, 'code');
        const redirectUri = single(form, 'redirect_uri');
        const verifier = single(form, 'code_verifier');
        if (typeof code !== 'string') throw new OAuthError('invalid_request', 'code is required (once)');
        if (typeof redirectUri !== 'string') {
          throw new OAuthError('invalid_request', 'redirect_uri is required (once)');
        }
        if (verifier === null) throw new OAuthError('invalid_request', 'code_verifier may be sent once');

        const codeHash = hashSecret(code);
        const row = await oauthStore.findCode(db, codeHash);
        if (!row) throw new OAuthError('invalid_grant', 'The code is unknown');
        if (row.used_at !== null) {
          await revokeMinted(codeHash);
          throw new OAuthError('invalid_grant', 'The code was already used; its token has been revoked');
        }
        const now = nowSeconds();
        const issuedToClient = isDashboard(client)
          ? await oauthStore.isDashboardRow(db, row.client_id, row.account_id)
          : row.client_id === client.client_id;
        if (!issuedToClient) throw new OAuthError('invalid_grant', 'The code was issued to another client');
        if (row.expires_at <= now) throw new OAuthError('invalid_grant', 'The code has expired');
        if (row.redirect_uri !== redirectUri) {
          throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request');
        }
        if (row.code_challenge !== null) {
          if (verifier === undefined || !verifyPkce(verifier, row.code_challenge)) {
            throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
          }
        } else if (verifier !== undefined) {
          throw new OAuthError(
            'invalid_grant',
            'code_verifier was sent but the request had no code_challenge',
          );
        }

        const scopes = row.scopes.split(' ').filter(isScope);
        const issued = await ctx.store.transaction(async (trx) => {
          if (!(await oauthStore.consumeCode(trx, codeHash, now))) return undefined;
          const token = await tokens.issue(trx, {
            accountId: row.account_id,
            clientId: row.client_id,
            scopes,
            kind: isDashboard(client) ? 'dashboard' : 'oauth',
          });
          await oauthStore.recordToken(trx, codeHash, token.id);
          return token;
        });
        if (!issued) {
          await revokeMinted(codeHash);
          throw new OAuthError('invalid_grant', 'The code was already used; its token has been revoked');
        }
        return reply
          .code(200)
          .send({ access_token: issued.token, token_type: 'bearer', scope: scopes.join(' ') });
      }),
    );

    app.post('/signin/oauth/revoke', { config, schema: { hide: true } }, async (request, reply) =>
      clientEndpoint(request, reply, async (form, client) => {
        const token = single(form, 'token');
        if (typeof token !== 'string') throw new OAuthError('invalid_request', 'token is required (once)');
        const tokenHash = hashSecret(token);
        const now = Math.floor(nowSeconds());
        if (isDashboard(client)) await oauthStore.revokeDashboardToken(db, tokenHash, now);
        else await oauthStore.revokeClientToken(db, tokenHash, client.client_id, now);
        return reply.code(200).send();
      }),
    );
  };

function errorLocation(callback: string, error: OAuthError, state: string | undefined): string {
  return callbackWith(callback, { error: error.code, error_description: error.description, state });
}
