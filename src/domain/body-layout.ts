/**
 * Laying out message bodies for people, shared by the server-rendered public page and the
 * dashboard's message view. Pure text in, text out; the caller escapes or wraps tokens as its
 * output needs.
 */

export type JsonTokenKind = 'key' | 'string' | 'number' | 'literal';

const JSON_SPACE = new Set([' ', '\t', '\n', '\r']);

function nextSignificant(text: string, from: number): number {
  let i = from;
  while (i < text.length && JSON_SPACE.has(text[i]!)) i++;
  return i;
}

/**
 * Valid JSON re-indented by two spaces, or null when the text is not JSON. Works on the text rather
 * than a parsed value, so numbers and strings appear exactly as sent (no float rounding, no
 * re-escaping). `token` renders each key, string, number and literal (as is by default);
 * `maxIndent` caps the nesting shown.
 */
export function layoutJson(
  text: string,
  options: { token?: (text: string, kind: JsonTokenKind) => string; maxIndent?: number } = {},
): string | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  const token = options.token ?? ((value: string) => value);
  const maxIndent = options.maxIndent ?? Infinity;
  let out = '';
  let depth = 0;
  const newline = () => '\n' + '  '.repeat(Math.min(depth, maxIndent));
  let i = nextSignificant(text, 0);
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const isKey = text[nextSignificant(text, end + 1)] === ':';
      out += token(text.slice(i, end + 1), isKey ? 'key' : 'string');
      i = end + 1;
    } else if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']';
      const next = nextSignificant(text, i + 1);
      if (text[next] === close) {
        out += ch + close;
        i = next + 1;
      } else {
        depth++;
        out += ch + newline();
        i++;
      }
    } else if (ch === '}' || ch === ']') {
      depth--;
      out += newline() + ch;
      i++;
    } else if (ch === ',') {
      out += ',' + newline();
      i++;
    } else if (ch === ':') {
      out += ': ';
      i++;
    } else if (JSON_SPACE.has(ch)) {
      i++;
    } else {
      let end = i;
      while (end < text.length && !/[\s,\]}:]/.test(text[end]!)) end++;
      const value = text.slice(i, end);
      out += token(value, /^[-0-9]/.test(value) ? 'number' : 'literal');
      i = end;
    }
  }
  return out;
}

/** A hex dump, one line per 16 bytes: offset, the bytes in hex (two groups of 8), and their ASCII. */
export function hexLines(bytes: Uint8Array): { offset: string; hex: string; ascii: string }[] {
  const lines: { offset: string; hex: string; ascii: string }[] = [];
  for (let offset = 0; offset < bytes.length; offset += 16) {
    const row = bytes.subarray(offset, offset + 16);
    const hex = Array.from(row, (b, i) => (i === 8 ? ' ' : '') + b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push({ offset: offset.toString(16).padStart(8, '0'), hex: hex.padEnd(48), ascii });
  }
  return lines;
}
