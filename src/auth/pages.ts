/**
 * The sign-in, sign-up and account pages: whole HTML documents with inline CSS, no scripts and no
 * external resources. Every value shown is escaped. Pure: data in, a string out.
 */
import { escapeHtml } from '../capture/render.js';

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
`;

function document(title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>${escapeHtml(title)} · Vigil</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>`
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
      (input.signup ? '<p class="muted">No account yet? <a href="/signup">Sign up</a></p>' : ''),
  );
}

export function signUpPage(input: {
  csrfToken: string;
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
      '<p class="muted">Already have an account? <a href="/signin">Sign in</a></p>',
  );
}

export function accountPage(input: { name: string; email: string; csrfToken: string }): string {
  return document(
    'Account',
    '<h1>Your account</h1>' +
      `<dl><dt>Name</dt><dd>${escapeHtml(input.name)}</dd><dt>Email</dt><dd>${escapeHtml(input.email)}</dd></dl>` +
      '<p><a href="/docs">API documentation</a></p>' +
      '<form method="post" action="/signout">' +
      csrfField(input.csrfToken) +
      '<button type="submit">Sign out</button></form>',
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
