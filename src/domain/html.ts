/**
 * HTML text: the one escaping used by every page and e-mail the server writes (the public message
 * page, the sign-in and consent pages, the dashboard's index, notification e-mails). Pure.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** The text with `&`, `<`, `>`, `"` and `'` as character references: safe in content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}
