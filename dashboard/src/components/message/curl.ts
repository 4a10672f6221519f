/**
 * A stored request as a cURL command that sends it again exactly: method, URL, every header but
 * hop-by-hop ones, Host and Content-Length, and the body byte for byte. Pure.
 */
import type { Lists, MessageRequest } from './types';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** The headers a replay sends: without hop-by-hop ones (and those `Connection` names), Host and Content-Length. */
export function forwardedHeaders(headers: Lists): [string, string][] {
  const named = new Set<string>();
  for (const [name, values] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'connection') continue;
    for (const value of values) {
      for (const token of value.split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: [string, string][] = [];
  for (const [name, values] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named.has(lower)) continue;
    for (const value of values) out.push([name, value]);
  }
  return out;
}

/**
 * A word for bash: single quotes when the text has no control characters (newlines are fine inside
 * them), else ANSI-C quoting ($'…') with every special byte escaped.
 */
export function shellQuote(text: string): string {
  if (!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  let out = "$'";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === "'") out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

/** The cURL command of a request; a binary body is piped in from its Base64 text. */
export function toCurl(request: MessageRequest): string {
  const args: string[] = ['curl'];
  if (/[[\]{}]/.test(request.url)) args.push('--globoff');
  if (/\/\.\.?(\/|$|\?)/.test(request.url)) args.push('--path-as-is');
  if (request.method === 'HEAD') args.push('--head');
  else args.push('-X', shellQuote(request.method));
  args.push(shellQuote(request.url));
  const headers = forwardedHeaders(request.headers);
  const has = (name: string) => headers.some(([key]) => key.toLowerCase() === name);
  for (const [name, value] of headers) {
    // `Name;` sends an empty header; `Name:` would remove it.
    args.push('-H', shellQuote(value === '' ? `${name};` : `${name}: ${value}`));
  }
  // cURL adds these on its own; the stored request did not have them.
  if (!has('user-agent')) args.push('-H', shellQuote('User-Agent:'));
  if (!has('accept')) args.push('-H', shellQuote('Accept:'));
  const body = request.body;
  if (body) {
    if (!has('content-type')) args.push('-H', shellQuote('Content-Type:'));
    if (request.body_encoding === 'base64') {
      args.push('--data-binary', '@-');
      return `printf %s ${shellQuote(body)} | base64 -d | ${args.join(' ')}`;
    }
    // `--data-binary @x` would read the file x; `--data-raw` sends the text as it is.
    args.push(body.startsWith('@') ? '--data-raw' : '--data-binary', shellQuote(body));
  }
  return args.join(' ');
}
