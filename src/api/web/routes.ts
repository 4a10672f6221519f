import { parse as parseQuery } from 'node:querystring';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import {
  accountPage,
  type ApplicationFormValues,
  applicationSecretPage,
  messagePage,
  signInPage,
  invitationPage,
  signOutPage,
  signUpPage,
} from '../../auth/pages.js';
import { CSRF_COOKIE, checkCsrf, readCookies, type Session } from '../../auth/sessions.js';
import { SignInThrottle } from '../../auth/throttle.js';
import { AppError, StoreUnavailable } from '../../domain/errors.js';
import { newSecret } from '../../domain/ids.js';
import { MIN_SIGNUP_PASSWORD } from '../../services/accounts.js';
import type { Principal } from '../../services/principal.js';
import type { ApiContext } from '../context.js';
import { DASHBOARD_PATH, isDashboardBuilt } from '../dashboard/routes.js';
import { toAppError } from '../plugins/errors.js';

/** Pages style themselves inline and post only to this site; nothing loads, runs or frames them. */
export const WEB_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Lifetime of the sign-in and sign-up forms' CSRF cookie, in seconds. */
const CSRF_COOKIE_SECONDS = 2 * 60 * 60;
/**
 * The signed-in person's page. `/account` itself is the API's account resource (bearer tokens, JSON),
 * so the page lives beside it.
 */
export const ACCOUNT_PAGE = '/profile';
const DEFAULT_NEXT = ACCOUNT_PAGE;
const FORM_LIMIT = 64 * 1024;

/** Where to go after signing in: a path on this site, else `fallback` (the profile page by default). */
export function safeNext(next: unknown, fallback: string = DEFAULT_NEXT): string {
  if (typeof next !== 'string' || next.length > 2000) return fallback;
  // Browsers read a backslash as a slash, so `/\evil.test` would leave the site too.
  if (!next.startsWith('/') || next.startsWith('//') || next.includes('\\')) return fallback;
  if (/[\u0000-\u001f\u007f]/.test(next)) return fallback;
  return next;
}

/** One field of a form body; a repeated field keeps its first value, a missing one is ''. */
function formField(body: unknown, name: string): string {
  if (typeof body !== 'object' || body === null) return '';
  const value = (body as Record<string, unknown>)[name];
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

const forbiddenPage = () =>
  messagePage({
    title: 'Form expired',
    message:
      'The form was missing its security token, or the token did not match. Go back, reload the page and try again.',
  });

/** Labels of the create-application form's fields, by the JSON pointer the service reports. */
const APPLICATION_FIELDS: Record<string, string> = {
  '/name': 'Name',
  '/website_url': 'Website URL',
  '/callback_url': 'Callback URL',
};

/** A validation message of the application service, worded for the form (`/name …` → `Name …`). */
function formMessage(error: AppError): string {
  const label = error.field === undefined ? undefined : APPLICATION_FIELDS[error.field];
  if (label !== undefined && error.message.startsWith(`${error.field} `)) {
    return `${label} ${error.message.slice(error.field!.length + 1)}.`;
  }
  return error.message.charAt(0).toUpperCase() + error.message.slice(1);
}

/**
 * The session's account as the services expect a caller. The account page acts for the person
 * themself, not through a token, so there is no token id and no scope set to narrow it.
 */
const sessionPrincipal = (session: Session): Principal => ({
  accountId: session.accountId,
  tokenId: '',
  name: '',
  email: '',
  scopes: new Set(),
});

const signupClosedPage = () =>
  messagePage({
    title: 'Sign-up is closed',
    message: 'This Vigil server does not accept new accounts. Ask its administrator for one.',
    link: { href: '/signin', text: 'Sign in' },
  });

const config = { scope: null };
const schema = { hide: true };

/** What every page registration shares: the context, the pre-session form tokens and where sign-in lands. */
interface Pages {
  ctx: ApiContext;
  /** After signing in without `next`: the dashboard once it is built, else the profile page. */
  landing(): string;
  /** The pre-session CSRF token: the one the browser already holds, else a fresh one set as a cookie. */
  formToken(request: FastifyRequest, reply: FastifyReply): string;
  /** Whether a pre-session form came back with the token of the browser's CSRF cookie. */
  formTokenMatches(request: FastifyRequest): boolean;
}

function pagesOf(ctx: ApiContext): Pages {
  return {
    ctx,
    landing: () => (isDashboardBuilt(ctx) ? DASHBOARD_PATH : DEFAULT_NEXT),
    formToken(request, reply) {
      const existing = readCookies(request).get(CSRF_COOKIE);
      if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
      const token = newSecret();
      ctx.sessions.setCookie(reply, CSRF_COOKIE, token, CSRF_COOKIE_SECONDS);
      return token;
    },
    formTokenMatches(request) {
      const cookie = readCookies(request).get(CSRF_COOKIE);
      return cookie !== undefined && checkCsrf({ csrfToken: cookie }, formField(request.body, 'csrf_token'));
    },
  };
}

/** Form bodies, the pages' security headers, and errors answered as a page. */
function pageChrome(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => done(null, parseQuery(body as string)),
  );

  app.addHook('onRequest', async (_request, reply) => {
    reply
      .header('Content-Security-Policy', WEB_PAGE_CSP)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .header('Cache-Control', 'no-store')
      .header('X-Frame-Options', 'DENY');
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (appError instanceof StoreUnavailable) reply.header('Retry-After', String(appError.retryAfter));
    sendPage(
      reply,
      appError.status,
      messagePage({ title: 'Something went wrong', message: appError.message }),
    );
  });
}

/** `/signin`: the form, and signing in (throttled per e-mail address and client address). */
function signInPages(app: FastifyInstance, { ctx, landing, formToken, formTokenMatches }: Pages): void {
  const { sessions, signup } = ctx;
  const { accounts } = ctx.services;
  const throttle = new SignInThrottle();
  app.get('/signin', { config, schema }, async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next, landing());
    if (await sessions.current(request)) return reply.redirect(next, 303);
    return sendPage(
      reply,
      200,
      signInPage({ csrfToken: formToken(request, reply), next, signup: signup === 'open' }),
    );
  });

  app.post('/signin', { config, schema }, async (request, reply) => {
    if (!formTokenMatches(request)) return sendPage(reply, 403, forbiddenPage());
    const email = formField(request.body, 'email');
    const password = formField(request.body, 'password');
    const next = safeNext(formField(request.body, 'next'), landing());
    const retryAfter = throttle.retryAfter(email, request.ip);
    if (retryAfter > 0) {
      reply.header('Retry-After', String(retryAfter));
      return sendPage(
        reply,
        429,
        messagePage({
          title: 'Too many attempts',
          message: `There have been too many failed sign-ins. Try again in ${Math.ceil(retryAfter / 60)} minute(s).`,
          link: { href: `/signin?next=${encodeURIComponent(next)}`, text: 'Back to sign-in' },
        }),
      );
    }
    const account = email && password ? await accounts.checkPassword(email, password) : null;
    if (!account) {
      throttle.failed(email, request.ip);
      return sendPage(
        reply,
        401,
        signInPage({
          csrfToken: formToken(request, reply),
          next,
          email,
          error: 'The email or password is not right.',
          signup: signup === 'open',
        }),
      );
    }
    throttle.succeeded(email, request.ip);
    await sessions.create(reply, account.id);
    return reply.redirect(next, 303);
  });
}

/** `/signup`: the form, and creating an account (when SIGNUP is open). */
function signUpPages(app: FastifyInstance, { ctx, landing, formToken, formTokenMatches }: Pages): void {
  const { sessions, signup } = ctx;
  const { accounts } = ctx.services;
  app.get('/signup', { config, schema }, async (request, reply) => {
    if (signup === 'closed') return sendPage(reply, 404, signupClosedPage());
    return sendPage(
      reply,
      200,
      signUpPage({
        csrfToken: formToken(request, reply),
        next: safeNext((request.query as Record<string, unknown>).next, landing()),
        minPassword: MIN_SIGNUP_PASSWORD,
      }),
    );
  });

  app.post('/signup', { config, schema }, async (request, reply) => {
    if (signup === 'closed') return sendPage(reply, 404, signupClosedPage());
    if (!formTokenMatches(request)) return sendPage(reply, 403, forbiddenPage());
    const name = formField(request.body, 'name');
    const email = formField(request.body, 'email');
    const next = safeNext(formField(request.body, 'next'), landing());
    let accountId: string;
    try {
      accountId = await accounts.register({ name, email, password: formField(request.body, 'password') });
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return sendPage(
        reply,
        error.status,
        signUpPage({
          csrfToken: formToken(request, reply),
          next,
          name,
          email,
          error: error.message.charAt(0).toUpperCase() + error.message.slice(1),
          minPassword: MIN_SIGNUP_PASSWORD,
        }),
      );
    }
    await sessions.create(reply, accountId);
    return reply.redirect(next, 303);
  });
}

/** `/signout`: the confirmation form, and ending the session. */
function signOutPages(app: FastifyInstance, { ctx }: Pages): void {
  const { sessions } = ctx;
  // The dashboard revokes its own token, then sends the browser here to end the web session too.
  app.get('/signout', { config, schema }, async (request, reply) => {
    const session = await sessions.current(request);
    if (!session) return reply.redirect('/signin', 303);
    return sendPage(reply, 200, signOutPage({ csrfToken: session.csrfToken }));
  });

  app.post('/signout', { config, schema }, async (request, reply) => {
    const session = await sessions.current(request);
    if (session && !checkCsrf(session, formField(request.body, 'csrf_token'))) {
      return sendPage(reply, 403, forbiddenPage());
    }
    await sessions.destroy(request, reply);
    return reply.redirect('/signin', 303);
  });
}

/** `/invitations/<token>`: joining a team from an invitation e-mail. */
function invitationPages(app: FastifyInstance, { ctx, landing }: Pages): void {
  const { sessions } = ctx;
  // The link of an invitation e-mail: signed out, it goes through sign-in (or sign-up) and comes
  // back; signed in, it asks to join, and the form's POST joins the team.
  const invitationPath = (token: string) => `/invitations/${encodeURIComponent(token)}`;
  app.get('/invitations/:token', { config, schema }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const session = await sessions.current(request);
    if (!session) return reply.redirect(`/signin?next=${encodeURIComponent(invitationPath(token))}`, 303);
    const team = await ctx.services.teams.invitationTeam(token);
    return sendPage(reply, 200, invitationPage({ csrfToken: session.csrfToken, team: team.name, token }));
  });
  app.post('/invitations/:token', { config, schema }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const session = await sessions.current(request);
    if (!session) return reply.redirect(`/signin?next=${encodeURIComponent(invitationPath(token))}`, 303);
    if (!checkCsrf(session, formField(request.body, 'csrf_token')))
      return sendPage(reply, 403, forbiddenPage());
    await ctx.services.teams.accept(session.accountId, token);
    return reply.redirect(landing(), 303);
  });
}

const toSignIn = (reply: FastifyReply) =>
  reply.redirect(`/signin?next=${encodeURIComponent(DEFAULT_NEXT)}`, 303);

/**
 * The session behind a form POST of the account page: a redirect to sign-in without one, a 403
 * page when the form's CSRF token is not the session's; null once either reply is sent.
 */
async function postingSession(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Session | null> {
  const session = await ctx.sessions.current(request);
  if (!session) {
    void toSignIn(reply);
    return null;
  }
  if (!checkCsrf(session, formField(request.body, 'csrf_token'))) {
    void sendPage(reply, 403, forbiddenPage());
    return null;
  }
  return session;
}

/** The account page of the session's account, with the create-application form's values and error if given. */
async function renderAccount(
  ctx: ApiContext,
  reply: FastifyReply,
  session: Session,
  status: number,
  form?: { values: ApplicationFormValues; error: string },
): Promise<FastifyReply> {
  const { accounts, applications, tokens } = ctx.services;
  const principal = sessionPrincipal(session);
  const [account, applicationList, tokenList] = await Promise.all([
    accounts.get(session),
    applications.list(principal),
    tokens.listForAccount(principal),
  ]);
  return sendPage(
    reply,
    status,
    accountPage({
      name: account.name,
      email: account.email,
      csrfToken: session.csrfToken,
      applications: applicationList,
      tokens: tokenList,
      ...(form && { form: form.values, formError: form.error }),
    }),
  );
}

/** The account page, and registering an application from its form. */
function accountPages(app: FastifyInstance, { ctx }: Pages): void {
  const { sessions } = ctx;
  const { applications } = ctx.services;
  app.get(ACCOUNT_PAGE, { config, schema }, async (request, reply) => {
    const session = await sessions.current(request);
    if (!session) return toSignIn(reply);
    return renderAccount(ctx, reply, session, 200);
  });

  app.post(`${ACCOUNT_PAGE}/applications`, { config, schema }, async (request, reply) => {
    const session = await postingSession(ctx, request, reply);
    if (!session) return reply;
    const values: ApplicationFormValues = {
      name: formField(request.body, 'name'),
      website_url: formField(request.body, 'website_url'),
      callback_url: formField(request.body, 'callback_url'),
      is_public: formField(request.body, 'is_public') !== '',
    };
    let created: Awaited<ReturnType<typeof applications.create>>;
    try {
      created = await applications.create(sessionPrincipal(session), values);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      return renderAccount(ctx, reply, session, 400, { values, error: formMessage(error) });
    }
    return sendPage(
      reply,
      200,
      applicationSecretPage({
        title: 'Application created',
        application: created.application,
        clientSecret: created.clientSecret,
        accessToken: created.accessToken,
      }),
    );
  });
}

/** The account page's buttons: a new client secret, deleting an application, revoking a token. */
function accountActions(app: FastifyInstance, { ctx }: Pages): void {
  const { applications, tokens } = ctx.services;
  app.post<{ Params: { client_id: string } }>(
    `${ACCOUNT_PAGE}/applications/:client_id/secret`,
    { config, schema },
    async (request, reply) => {
      const session = await postingSession(ctx, request, reply);
      if (!session) return reply;
      const rotated = await applications.rotateSecret(sessionPrincipal(session), request.params.client_id);
      return sendPage(
        reply,
        200,
        applicationSecretPage({
          title: 'New client secret',
          application: rotated.application,
          clientSecret: rotated.clientSecret,
        }),
      );
    },
  );

  app.post<{ Params: { client_id: string } }>(
    `${ACCOUNT_PAGE}/applications/:client_id/delete`,
    { config, schema },
    async (request, reply) => {
      const session = await postingSession(ctx, request, reply);
      if (!session) return reply;
      await applications.delete(sessionPrincipal(session), request.params.client_id);
      return reply.redirect(ACCOUNT_PAGE, 303);
    },
  );

  app.post<{ Params: { token_id: string } }>(
    `${ACCOUNT_PAGE}/tokens/:token_id/revoke`,
    { config, schema },
    async (request, reply) => {
      const session = await postingSession(ctx, request, reply);
      if (!session) return reply;
      await tokens.revoke(sessionPrincipal(session), request.params.token_id);
      return reply.redirect(ACCOUNT_PAGE, 303);
    },
  );
}

/**
 * Server-rendered pages for people in a browser: sign-up, sign-in, sign-out and the account page.
 * Real forms that work without JavaScript; a session cookie instead of a bearer token; every POST
 * checks a CSRF token (a double-submit cookie before a session exists, the session's own after).
 */
export const webRoutes =
  (ctx: ApiContext): FastifyPluginAsync =>
  async (app) => {
    const pages = pagesOf(ctx);
    pageChrome(app);
    signInPages(app, pages);
    signUpPages(app, pages);
    signOutPages(app, pages);
    invitationPages(app, pages);
    accountPages(app, pages);
    accountActions(app, pages);
  };
