/**
 * The sign-in, sign-up and account pages: whole HTML documents with inline CSS, no scripts and no
 * external resources. Every value shown is escaped. Pure: data in, a string out.
 */
import { escapeHtml } from '../domain/html.js';

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2330;--muted:#5d6678;--card:#fff;--line:#dde1e8;
--accent:#1b5fb0;--error:#c0262d}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e4e7ec;--muted:#9aa3b2;--card:#1c2027;
--line:#2e343e;--accent:#7fb4f0;--error:#ff7b80}}
*{box-sizing:border-box}
body{margin:0;padding:1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:26rem;margin:3rem auto;background:var(--card);border:1px solid var(--line);
border-radius:8px;padding:1.5rem}
h1{font-size:1.25rem;margin:0 0 1rem;font-weight:600}
label{display:block;margin:0 0 .75rem;font-weight:500}
input{display:block;width:100%;margin-top:.25rem;padding:.5rem;font:inherit;color:inherit;
background:var(--bg);border:1px solid var(--line);border-radius:6px}
button{font:inherit;padding:.5rem 1rem;border:0;border-radius:6px;background:var(--accent);color:#fff;
cursor:pointer}
a{color:var(--accent)}
.error{color:var(--error);margin:0 0 1rem}
.muted{color:var(--muted)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}
dt{color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere}
main.wide{max-width:52rem}
h2{font-size:1.05rem;margin:1.5rem 0 .75rem;font-weight:600}
table{width:100%;border-collapse:collapse;margin:0 0 1rem;font-size:.9rem}
th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid var(--line);
overflow-wrap:anywhere}
th{color:var(--muted);font-weight:500}
td form{display:inline-block;margin:0 .25rem .25rem 0}
button.small{padding:.25rem .6rem;font-size:.85rem}
button.danger{background:var(--error)}
label.check{display:flex;gap:.5rem;align-items:center}
label.check input{display:inline;width:auto;margin:0}
code.secret{display:block;padding:.5rem;background:var(--bg);border:1px solid var(--line);border-radius:6px;
overflow-wrap:anywhere;user-select:all}
.notice{border-left:3px solid var(--error);padding:.25rem .75rem;margin:0 0 1rem}
`;

function document(title: string, body: string, options: { wide?: boolean } = {}): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>${escapeHtml(title)} · Vigil</title><style>${STYLE}</style></head>` +
    `<body><main${options.wide ? ' class="wide"' : ''}>${body}</main></body></html>`
  );
}

const csrfField = (token: string) => `<input type="hidden" name="csrf_token" value="${escapeHtml(token)}">`;
const errorLine = (error: string | undefined) =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';

function field(label: string, name: string, type: string, value = '', extra = ''): string {
  return (
    `<label>${escapeHtml(label)}<input type="${type}" name="${name}" value="${escapeHtml(value)}"` +
    ` required${extra}></label>`
  );
}

export function signInPage(input: {
  csrfToken: string;
  next: string;
  email?: string;
  error?: string;
  signup: boolean;
}): string {
  return document(
    'Sign in',
    '<h1>Sign in to Vigil</h1>' +
      errorLine(input.error) +
      '<form method="post" action="/signin">' +
      csrfField(input.csrfToken) +
      `<input type="hidden" name="next" value="${escapeHtml(input.next)}">` +
      field('Email', 'email', 'email', input.email, ' autocomplete="username"') +
      field('Password', 'password', 'password', '', ' autocomplete="current-password"') +
      '<button type="submit">Sign in</button></form>' +
      (input.signup
        ? `<p class="muted">No account yet? <a href="/signup?next=${escapeHtml(encodeURIComponent(input.next))}">Sign up</a></p>`
        : ''),
  );
}

export function signUpPage(input: {
  csrfToken: string;
  /** Where to go once signed up (an invitation link, say); a same-site path. */
  next?: string;
  name?: string;
  email?: string;
  error?: string;
  minPassword: number;
}): string {
  return document(
    'Sign up',
    '<h1>Create a Vigil account</h1>' +
      errorLine(input.error) +
      '<form method="post" action="/signup">' +
      csrfField(input.csrfToken) +
      (input.next ? `<input type="hidden" name="next" value="${escapeHtml(input.next)}">` : '') +
      field('Name', 'name', 'text', input.name, ' maxlength="255" autocomplete="name"') +
      field('Email', 'email', 'email', input.email, ' maxlength="320" autocomplete="email"') +
      field(
        `Password (at least ${input.minPassword} characters)`,
        'password',
        'password',
        '',
        ` minlength="${input.minPassword}" maxlength="1024" autocomplete="new-password"`,
      ) +
      '<button type="submit">Sign up</button></form>' +
      `<p class="muted">Already have an account? <a href="/signin${input.next ? `?next=${escapeHtml(encodeURIComponent(input.next))}` : ''}">Sign in</a></p>`,
  );
}

/** A client application as the account page lists it. */
export interface ApplicationRow {
  client_id: string;
  name: string;
  website_url: string;
  callback_url: string;
  is_public: number | boolean;
  created_at: number;
}

/** A live token as the account page lists it: never the token itself. */
export interface TokenRow {
  id: string;
  kind: string;
  client_name: string | null;
  scopes: readonly string[];
  created_at: number;
  last_used_at: number | null;
}

/** What the create-application form holds when it is shown again. */
export interface ApplicationFormValues {
  name: string;
  website_url: string;
  callback_url: string;
  is_public: boolean;
}

const EMPTY_FORM: ApplicationFormValues = { name: '', website_url: '', callback_url: '', is_public: false };

/** A Unix time as `YYYY-MM-DD HH:MM UTC`. */
function when(seconds: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  return `<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/** A one-button form that posts the CSRF token to `action`. */
function postButton(action: string, csrfToken: string, text: string, className = 'small'): string {
  return (
    `<form method="post" action="${escapeHtml(action)}">` +
    csrfField(csrfToken) +
    `<button type="submit" class="${className}">${escapeHtml(text)}</button></form>`
  );
}

const applicationPath = (clientId: string) => `/profile/applications/${encodeURIComponent(clientId)}`;

function applicationsTable(applications: readonly ApplicationRow[], csrfToken: string): string {
  if (applications.length === 0) return '<p class="muted">No client applications yet.</p>';
  return (
    '<table><thead><tr><th>Name</th><th>Client ID</th><th>Callback URL</th><th>Public</th>' +
    '<th>Created</th><th></th></tr></thead><tbody>' +
    applications
      .map(
        (app) =>
          `<tr><td>${escapeHtml(app.name)}</td><td><code>${escapeHtml(app.client_id)}</code></td>` +
          `<td>${escapeHtml(app.callback_url)}</td><td>${app.is_public ? 'Yes' : 'No'}</td>` +
          `<td>${when(app.created_at)}</td><td>` +
          postButton(`${applicationPath(app.client_id)}/secret`, csrfToken, 'Rotate secret') +
          postButton(`${applicationPath(app.client_id)}/delete`, csrfToken, 'Delete', 'small danger') +
          '</td></tr>',
      )
      .join('') +
    '</tbody></table>'
  );
}

function tokensTable(tokens: readonly TokenRow[], csrfToken: string): string {
  if (tokens.length === 0) return '<p class="muted">No live access tokens.</p>';
  return (
    '<table><thead><tr><th>Kind</th><th>Application</th><th>Scopes</th><th>Created</th>' +
    '<th>Last used</th><th></th></tr></thead><tbody>' +
    tokens
      .map(
        (token) =>
          `<tr><td>${escapeHtml(token.kind)}</td>` +
          `<td>${token.client_name === null ? '<span class="muted">none</span>' : escapeHtml(token.client_name)}</td>` +
          `<td>${escapeHtml(token.scopes.join(' '))}</td><td>${when(token.created_at)}</td>` +
          `<td>${token.last_used_at === null ? '<span class="muted">never</span>' : when(token.last_used_at)}</td>` +
          '<td>' +
          postButton(
            `/profile/tokens/${encodeURIComponent(token.id)}/revoke`,
            csrfToken,
            'Revoke',
            'small danger',
          ) +
          '</td></tr>',
      )
      .join('') +
    '</tbody></table>'
  );
}

function applicationForm(csrfToken: string, values: ApplicationFormValues, error?: string): string {
  return (
    '<h2 id="create-application">Create application</h2>' +
    errorLine(error) +
    '<form method="post" action="/profile/applications">' +
    csrfField(csrfToken) +
    field('Name', 'name', 'text', values.name, ' maxlength="255"') +
    field('Website URL', 'website_url', 'url', values.website_url) +
    field('Callback URL', 'callback_url', 'url', values.callback_url) +
    '<label class="check"><input type="checkbox" name="is_public" value="1"' +
    (values.is_public ? ' checked' : '') +
    '> Public client (cannot keep a secret; must use PKCE)</label>' +
    '<button type="submit">Create application</button></form>'
  );
}

export function accountPage(input: {
  name: string;
  email: string;
  csrfToken: string;
  applications?: readonly ApplicationRow[];
  tokens?: readonly TokenRow[];
  form?: ApplicationFormValues;
  formError?: string;
}): string {
  return document(
    'Account',
    '<h1>Your account</h1>' +
      `<dl><dt>Name</dt><dd>${escapeHtml(input.name)}</dd><dt>Email</dt><dd>${escapeHtml(input.email)}</dd></dl>` +
      '<p><a href="/app/">Dashboard</a> · <a href="/docs">API documentation</a></p>' +
      '<form method="post" action="/signout">' +
      csrfField(input.csrfToken) +
      '<button type="submit">Sign out</button></form>' +
      '<h2>Client applications</h2>' +
      applicationsTable(input.applications ?? [], input.csrfToken) +
      applicationForm(input.csrfToken, input.form ?? EMPTY_FORM, input.formError) +
      '<h2>Access tokens</h2>' +
      tokensTable(input.tokens ?? [], input.csrfToken),
    { wide: true },
  );
}

/** Where the dashboard sends people to end their web session: one button, the session's CSRF token. */
export function signOutPage(input: { csrfToken: string }): string {
  return document(
    'Sign out',
    '<h1>Sign out of Vigil?</h1>' +
      '<p>This ends your session in this browser. Your tests keep running.</p>' +
      '<form method="post" action="/signout">' +
      csrfField(input.csrfToken) +
      '<button type="submit">Sign out</button></form>' +
      '<p><a href="/app/">Back to the dashboard</a></p>',
  );
}

/** The page of an invitation link, for a signed-in person: join the team with one button. */
export function invitationPage(input: { csrfToken: string; team: string; token: string }): string {
  return document(
    'Join a team',
    `<h1>Join ${escapeHtml(input.team)}?</h1>` +
      '<p>You were invited to this team. Joining gives you access to its buckets and tests, as your role allows.</p>' +
      `<form method="post" action="/invitations/${escapeHtml(encodeURIComponent(input.token))}">` +
      csrfField(input.csrfToken) +
      '<button type="submit">Join the team</button></form>',
  );
}

/** The credentials of a new or re-keyed application, shown this once. */
export function applicationSecretPage(input: {
  title: string;
  application: ApplicationRow;
  clientSecret: string;
  accessToken?: string;
}): string {
  const secret = (label: string, value: string) =>
    `<dt>${escapeHtml(label)}</dt><dd><code class="secret">${escapeHtml(value)}</code></dd>`;
  return document(
    input.title,
    `<h1>${escapeHtml(input.title)}</h1>` +
      '<p class="notice" role="alert">Copy the secret now: it is stored only as a hash and ' +
      'will not be shown again.</p>' +
      '<dl>' +
      `<dt>Name</dt><dd>${escapeHtml(input.application.name)}</dd>` +
      `<dt>Client ID</dt><dd><code class="secret">${escapeHtml(input.application.client_id)}</code></dd>` +
      secret('Client secret', input.clientSecret) +
      (input.accessToken === undefined ? '' : secret('Your access token', input.accessToken)) +
      `<dt>Callback URL</dt><dd>${escapeHtml(input.application.callback_url)}</dd>` +
      `<dt>Public</dt><dd>${input.application.is_public ? 'Yes' : 'No'}</dd>` +
      '</dl>' +
      (input.accessToken === undefined
        ? ''
        : '<p class="muted">The access token works for your own account with every scope; ' +
          'it is listed under Access tokens and can be revoked there.</p>') +
      '<p><a href="/profile">Back to your account</a></p>',
    { wide: true },
  );
}

/** A page that only says what happened, with a way back. */
export function messagePage(input: {
  title: string;
  message: string;
  link?: { href: string; text: string };
}): string {
  return document(
    input.title,
    `<h1>${escapeHtml(input.title)}</h1><p>${escapeHtml(input.message)}</p>` +
      (input.link
        ? `<p><a href="${escapeHtml(input.link.href)}">${escapeHtml(input.link.text)}</a></p>`
        : ''),
  );
}
