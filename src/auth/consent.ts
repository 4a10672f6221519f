import { createHash } from 'node:crypto';
import { escapeHtml } from '../domain/html.js';
import type { Scope } from '../domain/scopes.js';

/** What each scope lets an application do, in the words the confirmation screen uses. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'api:read': 'See your buckets, tests, environments, runs and captured messages',
  'test:write': 'Create, change, delete and run your tests, steps, environments and schedules',
  'bucket:write': 'Create and delete buckets',
  'message:write': 'Create, share, unshare and delete captured messages',
  'account:email': 'See your e-mail address and those of the people in your teams',
};

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f5f7;color:#1f2328;margin:0}
main{max-width:28rem;margin:4rem auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:2rem}
h1{font-size:1.3rem;margin:0 0 1rem}
p{line-height:1.5}
ul{padding-left:1.2rem}
li{margin:.4rem 0}
.muted{color:#57606a;font-size:.9rem}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{font:inherit;padding:.55rem 1.2rem;border-radius:6px;border:1px solid #d0d7de;background:#f6f8fa;cursor:pointer}
button.primary{background:#1f883d;border-color:#1a7f37;color:#fff}
`;

/** The hash that lets the Content-Security-Policy allow exactly this inline style. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * Headers of every page of the flow: no framing (clickjacking), no sniffing, no referrer (the URL
 * carries state), no caching. `formAction` names the callback origin, which the form's redirect reaches.
 */
export function pageHeaders(formAction?: string): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
    ...(formAction ? [`form-action 'self' ${formAction}`] : []),
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    pragma: 'no-cache',
  };
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Vigil</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface ConsentPage {
  appName: string;
  websiteUrl: string;
  redirectUri: string;
  scopes: readonly Scope[];
  /** The hidden fields the form posts back: client_id, redirect_uri, scope, state, code_challenge, _csrf. */
  fields: Record<string, string>;
}

/** The confirmation screen: which application asks, what it may do, Authorize or Deny. */
export function consentPage(options: ConsentPage): string {
  const name = escapeHtml(options.appName);
  const hidden = Object.entries(options.fields)
    .map(([field, value]) => `<input type="hidden" name="${escapeHtml(field)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const scopes = options.scopes
    .map((scope) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</li>`)
    .join('\n');
  let callbackHost = options.redirectUri;
  try {
    callbackHost = new URL(options.redirectUri).host || options.redirectUri;
  } catch {
    // The callback was checked against the registered one; show it as it is.
  }
  return page(
    `Authorize ${options.appName}`,
    `<h1>Authorize <strong>${name}</strong></h1>
<p><strong>${name}</strong> asks for access to your Vigil account. It will be able to:</p>
<ul>
${scopes}
</ul>
<p class="muted">Website: ${escapeHtml(options.websiteUrl)}<br>After you choose, you go back to ${escapeHtml(callbackHost)}. You can revoke the access at any time.</p>
<form method="post" action="/signin/oauth/authorize">
${hidden}
<div class="actions">
<button type="submit" name="decision" value="authorize" class="primary">Authorize</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}

/** An error shown to the user instead of a redirect (unknown client, callback mismatch, expired form). */
export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
