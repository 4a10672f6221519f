/**
 * A captured exchange as one self-contained HTML page (the public page of a shared message): inline
 * CSS only, no scripts, no external resources. Every value that came from the exchange is escaped.
 * Pure: a message in, a string out.
 */
import { type Buffer, isUtf8 } from 'node:buffer';
import type { MessageRequest, MessageResponse, StoredMessage } from '../domain/messages.js';
import { bodyBytes } from './normalize.js';
import { hexLines, type JsonTokenKind, layoutJson } from '../domain/body-layout.js';
import { escapeHtml } from '../domain/html.js';

/** Bytes of a binary body shown in the hex preview. */
export const HEX_PREVIEW_BYTES = 256;
/** Characters of a text body shown; longer bodies are cut, and shown raw rather than reformatted. */
export const TEXT_DISPLAY_CHARS = 256 * 1024;
/** Nesting shown by indentation in a pretty-printed JSON body; deeper levels stay at this indent. */
const MAX_INDENT = 32;

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2330;--muted:#5d6678;--card:#fff;--line:#dde1e8;
--code:#f0f2f5;--key:#7a3e9d;--str:#1f7a3a;--num:#b0521b;--lit:#1b5fb0;--ok:#1f7a3a;--redirect:#1b5fb0;
--client:#b0521b;--server:#c0262d}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e4e7ec;--muted:#9aa3b2;--card:#1c2027;
--line:#2e343e;--code:#232830;--key:#d19cf0;--str:#7fd18f;--num:#f0a46b;--lit:#7fb4f0;--ok:#7fd18f;
--redirect:#7fb4f0;--client:#f0a46b;--server:#ff7b80}}
*{box-sizing:border-box}
body{margin:0;padding:1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:90rem;margin:0 auto}
h1{font-size:1.25rem;margin:0 0 .5rem;font-weight:600;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:0 0 .75rem}
h3{font-size:.8rem;margin:1.25rem 0 .4rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
h3 .muted{text-transform:none;letter-spacing:0;font-weight:400}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.method{display:inline-block;padding:0 .4rem;margin-right:.4rem;border-radius:4px;background:var(--fg);color:var(--bg)}
.summary{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin:0 0 1.25rem;color:var(--muted)}
.summary dt{display:inline;font-weight:600}
.summary dd{display:inline;margin:0 0 0 .35rem;color:var(--fg)}
.status{font-weight:700}
.s2{color:var(--ok)}.s3{color:var(--redirect)}.s4{color:var(--client)}.s5{color:var(--server)}
.note{padding:.6rem .8rem;border:1px solid var(--client);border-radius:6px;margin:0 0 1rem}
.exchange{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:1rem;align-items:start}
@media (max-width:60rem){.exchange{grid-template-columns:minmax(0,1fr)}}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.1rem;min-width:0}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th,td{text-align:left;vertical-align:top;padding:.25rem .5rem;border-top:1px solid var(--line);
overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
th{width:35%;font-weight:600}
tr:first-child th,tr:first-child td{border-top:0}
pre{margin:0;padding:.75rem;background:var(--code);border-radius:6px;overflow:auto;max-height:40rem;
white-space:pre-wrap;overflow-wrap:anywhere}
pre.hex{white-space:pre;overflow-wrap:normal}
.muted{color:var(--muted)}
.jk{color:var(--key)}.js{color:var(--str)}.jn{color:var(--num)}.jl{color:var(--lit)}
footer{margin-top:1.5rem;color:var(--muted);font-size:.85rem}
`;

function page(title: string, content: string): string {
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex, nofollow">' +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${content}</main></body></html>\n`
  );
}

/** `2023-11-14 22:13:20.123456 UTC` from Unix seconds. */
export function formatTimestamp(seconds: number): string {
  const micros = Math.round(seconds * 1_000_000);
  const whole = Math.floor(micros / 1_000_000);
  const fraction = String(micros - whole * 1_000_000).padStart(6, '0');
  const iso = new Date(whole * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${fraction} UTC`;
}

/** A duration in seconds, as milliseconds to the microsecond, or seconds from one second on. */
export function formatDuration(seconds: number): string {
  if (seconds < 1) return `${Number((seconds * 1000).toFixed(3))} ms`;
  return `${Number(seconds.toFixed(6))} s`;
}

function formatBytes(size: number): string {
  return `${size.toLocaleString('en-US')} byte${size === 1 ? '' : 's'}`;
}

function headerValue(headers: Record<string, string[]>, name: string): string | undefined {
  for (const [key, values] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return values[0];
  }
  return undefined;
}

function table(rows: readonly (readonly [string, string])[], empty: string): string {
  if (rows.length === 0) return `<p class="muted">${escapeHtml(empty)}</p>`;
  const body = rows
    .map(([name, value]) => `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`)
    .join('');
  return `<table><tbody>${body}</tbody></table>`;
}

function lists(record: Record<string, string[]>): [string, string][] {
  return Object.entries(record).flatMap(([name, values]) =>
    values.map((value): [string, string] => [name, value]),
  );
}

/**
 * Valid JSON re-indented with highlighted tokens, or null when the text is not JSON. Works on the
 * text rather than a parsed value, so numbers and strings appear exactly as sent.
 */
export function prettyJson(text: string): string | null {
  return layoutJson(text, {
    token: (value, kind) => `<span class="${JSON_CLASSES[kind]}">${escapeHtml(value)}</span>`,
    maxIndent: MAX_INDENT,
  });
}

const JSON_CLASSES: Record<JsonTokenKind, string> = { key: 'jk', string: 'js', number: 'jn', literal: 'jl' };

/** The first bytes of a binary body: offset, 16 bytes in hex, and the same bytes as ASCII. */
export function hexPreview(bytes: Uint8Array, limit: number = HEX_PREVIEW_BYTES): string {
  return hexLines(bytes.subarray(0, limit))
    .map((line) => `${line.offset}  ${line.hex}  |${escapeHtml(line.ascii)}|`)
    .join('\n');
}

/** Text a person can read: valid UTF-8 without control characters other than tab and line breaks. */
function isText(bytes: Buffer): boolean {
  return isUtf8(bytes) && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(bytes.toString('utf8'));
}

function renderBody(part: MessageRequest | MessageResponse): string {
  const bytes = bodyBytes(part.body, part.body_encoding);
  const contentType = (headerValue(part.headers, 'content-type') ?? '').toLowerCase();
  const heading = `<h3>Body <span class="muted">· ${formatBytes(bytes.length)}${
    contentType ? ` · ${escapeHtml(contentType)}` : ''
  }</span></h3>`;
  if (bytes.length === 0) return `${heading}<p class="muted">Empty body</p>`;
  if (!isText(bytes)) {
    const more = bytes.length - HEX_PREVIEW_BYTES;
    return (
      `${heading}<p class="muted">Binary content${
        more > 0 ? `; the first ${HEX_PREVIEW_BYTES} bytes are shown` : ''
      }</p>` + `<pre class="hex">${hexPreview(bytes)}</pre>`
    );
  }
  const text = bytes.toString('utf8');
  if (text.length > TEXT_DISPLAY_CHARS) {
    return (
      `${heading}<p class="muted">Long body: the first ${TEXT_DISPLAY_CHARS.toLocaleString('en-US')} characters are shown</p>` +
      `<pre>${escapeHtml(text.slice(0, TEXT_DISPLAY_CHARS))}</pre>`
    );
  }
  if (/\bjson\b|\+json\b/.test(contentType) || (!contentType && /^\s*[[{]/.test(text))) {
    const pretty = prettyJson(text);
    if (pretty !== null) return `${heading}<pre class="json">${pretty}</pre>`;
  }
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    return heading + table([...new URLSearchParams(text)], 'No fields');
  }
  return `${heading}<pre>${escapeHtml(text)}</pre>`;
}

function renderRequest(request: MessageRequest | null): string {
  if (request === null)
    return '<section><h2>Request</h2><p class="muted">No request was recorded.</p></section>';
  const parts = [
    '<section><h2>Request</h2>',
    `<p class="mono"><strong>${escapeHtml(request.method)}</strong> ${escapeHtml(request.path)}</p>`,
    table(
      [
        ['Scheme', request.scheme],
        ['Host', request.host],
        ['Sent', formatTimestamp(request.timestamp)],
      ],
      '',
    ),
    '<h3>Query parameters</h3>',
    table(lists(request.params), 'None'),
    '<h3>Headers</h3>',
    table(lists(request.headers), 'None'),
  ];
  if (request.form !== null) parts.push('<h3>Form fields</h3>', table(lists(request.form), 'None'));
  parts.push(renderBody(request), '</section>');
  return parts.join('');
}

function renderResponse(response: MessageResponse | null): string {
  if (response === null) {
    return '<section><h2>Response</h2><p class="muted">No response was recorded.</p></section>';
  }
  const timing: [string, string][] = [['Received', formatTimestamp(response.timestamp)]];
  if (response.response_time !== null) timing.push(['Response time', formatDuration(response.response_time)]);
  return [
    '<section><h2>Response</h2>',
    `<p class="mono">${statusLine(response)}</p>`,
    table(timing, ''),
    '<h3>Headers</h3>',
    table(lists(response.headers), 'None'),
    renderBody(response),
    '</section>',
  ].join('');
}

function statusLine(response: MessageResponse): string {
  const text = `${response.status}${response.reason ? ` ${response.reason}` : ''}`;
  return `<span class="status s${Math.floor(response.status / 100)}">${escapeHtml(text)}</span>`;
}

function responseTime(message: StoredMessage): number | null {
  const { request, response } = message;
  if (response && response.response_time !== null) return response.response_time;
  // Timestamps left out default to the receive time, so a zero difference says nothing.
  if (request && response && response.timestamp > request.timestamp) {
    return response.timestamp - request.timestamp;
  }
  return null;
}

/** The public page of a shared message. */
export function renderMessagePage(message: StoredMessage): string {
  const { request, response } = message;
  const title = request ? `${request.method} ${request.url}` : 'Recorded response';
  const summary: [string, string][] = [];
  if (response) summary.push(['Status', statusLine(response)]);
  const time = responseTime(message);
  if (time !== null) summary.push(['Time', escapeHtml(formatDuration(time))]);
  summary.push(['Recorded', escapeHtml(formatTimestamp(message.timestamp))]);
  const heading = request
    ? `<h1><span class="method mono">${escapeHtml(request.method)}</span><span class="mono">${escapeHtml(
        request.url,
      )}</span></h1>`
    : '<h1>Recorded response</h1>';
  const content = [
    '<header>',
    heading,
    `<dl class="summary">${summary.map(([name, value]) => `<div><dt>${name}</dt><dd>${value}</dd></div>`).join('')}</dl>`,
    '</header>',
    message.note !== null ? `<p class="note">${escapeHtml(message.note)}</p>` : '',
    `<div class="exchange">${renderRequest(request)}${renderResponse(response)}</div>`,
    '<footer>A recorded HTTP exchange, shared from Vigil.</footer>',
  ];
  return page(`${title} · Vigil`, content.join(''));
}

/** The page a revoked or unknown public link shows. */
export function renderNotFoundPage(): string {
  return page(
    'Not found · Vigil',
    '<h1>Not found</h1><p>This shared message does not exist, or it is no longer shared.</p>',
  );
}
