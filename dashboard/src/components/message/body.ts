/**
 * Bodies of captured exchanges, for display: decoding (plain text or Base64), the kind by content
 * type, pretty-printing of JSON and XML, form fields and a hex dump of binary bodies. Pure.
 */
import type { Lists } from './types';
import { hexLines, layoutJson } from '../../../../src/domain/body-layout';

/** Bytes of a binary body shown in the hex dump. */
export const HEX_DUMP_BYTES = 4096;
/** Characters of a text body shown; longer bodies are cut and shown as sent. */
export const TEXT_DISPLAY_CHARS = 256 * 1024;

export type BodyView =
  | { kind: 'empty' }
  | { kind: 'json' | 'xml' | 'text'; text: string; cut: boolean }
  | { kind: 'form'; fields: [string, string][] }
  | { kind: 'binary'; size: number; dump: string };

/** The first value of a header, whatever the case of its name. */
export function headerValue(headers: Lists | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, values] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === wanted) return values[0];
  }
  return undefined;
}

export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** The body as text when it is valid UTF-8 without control characters (other than tab/CR/LF), else null. */
export function bodyText(body: string, encoding: string): string | null {
  if (encoding !== 'base64') return hasControl(body) ? null : body;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(base64ToBytes(body));
    return hasControl(text) ? null : text;
  } catch {
    return null;
  }
}

function hasControl(text: string): boolean {
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text);
}

function isBinaryType(contentType: string): boolean {
  return /^(image|audio|video|font)\/|application\/(octet-stream|pdf|zip|gzip|x-protobuf|protobuf|wasm)/i.test(
    contentType,
  );
}

/** How to show a body, chosen by its content type and whether it is text. */
export function viewBody(body: string, encoding: string, headers: Lists | undefined): BodyView {
  if (!body) return { kind: 'empty' };
  const contentType = (headerValue(headers, 'content-type') ?? '').toLowerCase();
  const text = isBinaryType(contentType) ? null : bodyText(body, encoding);
  if (text === null) {
    const bytes = encoding === 'base64' ? base64ToBytes(body) : new TextEncoder().encode(body);
    return { kind: 'binary', size: bytes.length, dump: hexDump(bytes.subarray(0, HEX_DUMP_BYTES)) };
  }
  const cut = text.length > TEXT_DISPLAY_CHARS;
  const shown = cut ? text.slice(0, TEXT_DISPLAY_CHARS) : text;
  if (!cut && (/[/+]json\b/.test(contentType) || (!contentType && /^\s*[[{]/.test(text)))) {
    const pretty = indentJson(text);
    if (pretty !== null) return { kind: 'json', text: pretty, cut };
  }
  if (!cut && /[/+]xml\b/.test(contentType)) return { kind: 'xml', text: indentXml(text), cut };
  if (contentType.startsWith('application/x-www-form-urlencoded') && !cut) {
    return { kind: 'form', fields: [...new URLSearchParams(text)] };
  }
  return { kind: 'text', text: shown, cut };
}

/** JSON indented by two spaces, numbers and strings exactly as sent; null when the text is not JSON. */
export function indentJson(text: string): string | null {
  return layoutJson(text);
}

/** XML with one element per line, indented by nesting; text content is kept as sent. */
export function indentXml(text: string): string {
  const parts = text
    .replace(/>\s+</g, '><')
    .split(/(<[^>]+>)/)
    .filter((part) => part.trim() !== '');
  const isOpen = (part: string) => part.startsWith('<') && !/^<[?!/]/.test(part) && !part.endsWith('/>');
  let depth = 0;
  const lines: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const next = parts[i + 1];
    const after = parts[i + 2];
    // <a>text</a> stays on one line.
    if (isOpen(part) && next !== undefined && !next.startsWith('<') && after?.startsWith('</')) {
      lines.push('  '.repeat(depth) + part + next + after);
      i += 2;
      continue;
    }
    if (part.startsWith('</')) depth = Math.max(0, depth - 1);
    lines.push('  '.repeat(depth) + part.trim());
    if (isOpen(part)) depth++;
  }
  return lines.join('\n');
}

/** A hex dump: offset, 16 bytes in hex, and their printable ASCII. */
export function hexDump(bytes: Uint8Array): string {
  return hexLines(bytes)
    .map((line) => `${line.offset}  ${line.hex}  |${line.ascii}|`)
    .join('\n');
}
