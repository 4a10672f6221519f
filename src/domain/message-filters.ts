/**
 * Filters of the message lists (docs/capture.md): pure parsing and validation, shared by the list
 * query parameters and the saved views. Each problem names its field.
 */

export const STATUS_FILTER_DESCRIPTION =
  'A status class (1xx … 5xx), an exact code 100–599, or none (no response)';

/** The filters as given: query parameters or the `filters` object of a saved view. */
export interface MessageFiltersInput {
  method?: string | undefined;
  host?: string | undefined;
  path?: string | undefined;
  status?: string | undefined;
  q?: string | undefined;
}

export type StatusFilter =
  { kind: 'class'; from: number; to: number } | { kind: 'code'; code: number } | { kind: 'none' };

/** The filters ready for the store: method upper case, host and q lower case. */
export interface MessageFilters {
  method?: string;
  host?: string;
  path?: string;
  status?: StatusFilter;
  q?: string;
}

export const FILTER_LIMITS = { method: 32, host: 255, path: 2048, q: 500 } as const;

export class FilterProblem extends Error {
  constructor(
    readonly field: keyof MessageFiltersInput,
    message: string,
  ) {
    super(message);
  }
}

const METHOD = /^[A-Za-z][A-Za-z0-9_-]*$/;
const HOST = /^[^\s/?#@]+$/;

/** The status filter of its text form, or undefined when the text is none of the forms. */
function parseStatus(text: string): StatusFilter | undefined {
  const value = text.trim().toLowerCase();
  if (value === 'none') return { kind: 'none' };
  const klass = /^([1-5])xx$/.exec(value);
  if (klass) {
    const from = Number(klass[1]) * 100;
    return { kind: 'class', from, to: from + 99 };
  }
  if (/^[1-5][0-9]{2}$/.test(value)) return { kind: 'code', code: Number(value) };
  return undefined;
}

/**
 * Checks and normalises the filters; throws FilterProblem naming the first bad one. Empty strings
 * are refused: a filter that is not wanted is left out.
 */
export function parseMessageFilters(input: MessageFiltersInput): MessageFilters {
  const out: MessageFilters = {};
  const { method, host, path, status, q } = input;
  if (method !== undefined) {
    if (method.length > FILTER_LIMITS.method || !METHOD.test(method))
      throw new FilterProblem('method', 'must be an HTTP method name such as GET');
    out.method = method.toUpperCase();
  }
  if (host !== undefined) {
    if (host.length === 0 || host.length > FILTER_LIMITS.host || !HOST.test(host))
      throw new FilterProblem(
        'host',
        `must be a host name (with its port when not the default), at most ${FILTER_LIMITS.host} characters`,
      );
    out.host = host.toLowerCase();
  }
  if (path !== undefined) {
    if (!path.startsWith('/') || path.length > FILTER_LIMITS.path)
      throw new FilterProblem('path', `must start with / and have at most ${FILTER_LIMITS.path} characters`);
    out.path = path;
  }
  if (status !== undefined) {
    const parsed = parseStatus(status);
    if (!parsed) throw new FilterProblem('status', `must be ${STATUS_FILTER_DESCRIPTION.replace(/^A/, 'a')}`);
    out.status = parsed;
  }
  if (q !== undefined) {
    if (q.length === 0 || q.length > FILTER_LIMITS.q)
      throw new FilterProblem('q', `must have 1 to ${FILTER_LIMITS.q} characters`);
    out.q = q.toLowerCase();
  }
  return out;
}

/** What the store compares for a request: method, host, path and host + path + query. */
export function filterColumns(request: { method: string; host: string; path: string; url: string } | null) {
  if (!request) return { request_method: null, request_host: null, request_path: null, request_target: null };
  const scheme = request.url.indexOf('://');
  return {
    request_method: request.method.toUpperCase(),
    request_host: request.host.toLowerCase(),
    request_path: request.path,
    request_target: (scheme >= 0 ? request.url.slice(scheme + 3) : request.url).toLowerCase(),
  };
}

/** `%`, `_` and the escape character itself, escaped for `LIKE … ESCAPE '\'`. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
