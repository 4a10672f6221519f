import { parse as parseQuery } from 'node:querystring';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { consentPage, errorPage, pageHeaders } from '../../auth/consent.js';
import { clientCredentials, type OAuthClient, OAuthError, single } from '../../auth/oauth.js';
import type { AuthorizationRequest, Fields, OAuthService } from '../../services/oauth.js';
import type { ApiContext } from '../context.js';

/** The web sessions the flow needs: who is signed in, and the session's CSRF check. */
export interface SessionLookup {
  current(request: FastifyRequest): Promise<{ accountId: string; csrfToken: string } | null>;
  checkCsrf(session: { csrfToken: string }, submitted: unknown): boolean;
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** The fields of a form body, or undefined when the request carries no form. */
function formOf(request: FastifyRequest): Fields | undefined {
  const type = request.headers['content-type'];
  if (!type || !FORM_TYPE.test(type)) return undefined;
  const body = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Fields) : {};
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

/** Page routes are public (no token); the user is known through the web session. */
const config = { scope: null };

/** The consent screen of a checked request, its form carrying the request on. */
function sendConsent(reply: FastifyReply, request: AuthorizationRequest, csrfToken: string): FastifyReply {
  const { client, redirectUri, scopes, state, codeChallenge } = request;
  const page = consentPage({
    appName: client.name,
    websiteUrl: client.website_url,
    redirectUri,
    scopes,
    fields: {
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      state: state ?? '',
      code_challenge: codeChallenge ?? '',
      ...(codeChallenge !== null && { code_challenge_method: 'S256' }),
      _csrf: csrfToken,
    },
  });
  return sendPage(reply, 200, page, callbackOrigin(redirectUri));
}

/** `GET /signin/oauth/authorize`: the consent screen (or, for the dashboard, a code at once). */
function authorizeScreen(app: FastifyInstance, oauth: OAuthService, sessions: SessionLookup): void {
  app.get('/signin/oauth/authorize', { config, schema: { hide: true } }, async (request, reply) => {
    const check = await oauth.checkAuthorization(request.query as Fields, { responseType: true });
    if (check.outcome === 'show') return sendPage(reply, 400, errorPage(check.title, check.message));
    if (check.outcome === 'redirect') return redirect(reply, check.location);
    const session = await sessions.current(request);
    if (!session) return redirect(reply, `/signin?next=${encodeURIComponent(request.url)}`);
    // The service's own UI asks no consent: the person is already signed in to this very service.
    if (oauth.isDashboard(check.request.client)) {
      return redirect(reply, await oauth.issueCode(check.request, session.accountId));
    }
    return sendConsent(reply, check.request, session.csrfToken);
  });
}

/** `POST /signin/oauth/authorize`: the answer of the consent screen. */
function authorizeDecision(app: FastifyInstance, oauth: OAuthService, sessions: SessionLookup): void {
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
    const check = await oauth.checkAuthorization(fields, { responseType: false });
    if (check.outcome === 'show') return sendPage(reply, 400, errorPage(check.title, check.message));
    if (check.outcome === 'redirect') return redirect(reply, check.location);
    return redirect(reply, await oauth.decide(check.request, session.accountId, single(fields, 'decision')));
  });
}

/** Runs a client-authenticated endpoint, answering OAuth errors as RFC 6749 §5.2 JSON. */
async function clientEndpoint(
  oauth: OAuthService,
  request: FastifyRequest,
  reply: FastifyReply,
  handle: (form: Fields, client: OAuthClient) => Promise<unknown>,
): Promise<unknown> {
  reply.headers(NO_STORE);
  let basic = false;
  try {
    const form = formOf(request);
    if (!form)
      throw new OAuthError('invalid_request', 'Send the fields as application/x-www-form-urlencoded');
    const credentials = clientCredentials(request.headers.authorization, form);
    basic = credentials.basic;
    const client = await oauth.authenticateClient(credentials);
    return await handle(form, client);
  } catch (error) {
    if (error instanceof OAuthError) return sendOAuthError(reply, error, basic);
    throw error;
  }
}

/** `POST /signin/oauth/access_token` (code exchange) and `POST /signin/oauth/revoke` (RFC 7009). */
function clientEndpoints(app: FastifyInstance, oauth: OAuthService): void {
  app.post('/signin/oauth/access_token', { config, schema: { hide: true } }, async (request, reply) =>
    clientEndpoint(oauth, request, reply, async (form, client) =>
      reply.code(200).send(await oauth.exchangeCode(client, form)),
    ),
  );
  app.post('/signin/oauth/revoke', { config, schema: { hide: true } }, async (request, reply) =>
    clientEndpoint(oauth, request, reply, async (form, client) => {
      await oauth.revoke(client, form);
      return reply.code(200).send();
    }),
  );
}

/**
 * The web application flow of spec 5 (docs/oauth.md): the confirmation screen, authorization codes,
 * the code exchange and token revocation, all ruled by the OAuth service. The routes are public;
 * the user is known through `sessions`, the client by its credentials.
 */
export const oauthRoutes =
  (ctx: Pick<ApiContext, 'services'>, sessions: SessionLookup): FastifyPluginAsync =>
  async (app) => {
    const { oauth } = ctx.services;
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, parseQuery(body as string)),
    );
    authorizeScreen(app, oauth, sessions);
    authorizeDecision(app, oauth, sessions);
    clientEndpoints(app, oauth);
  };
