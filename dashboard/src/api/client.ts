import { beginSignIn, dropToken, storedToken } from '../auth';

/** An error answered by the API in its envelope: the status, the stable code and the field it names. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** JSON pointer (`/steps/2/url`) or query parameter (`?count`) the error is about, when it names one. */
    readonly field?: string,
  ) {
    super(message);
  }
}

interface Envelope<T> {
  data: T;
  meta?: Record<string, unknown>;
  error: { status: number; code: string; message: string; field?: string } | null;
}

export interface ApiResponse<T> {
  data: T;
  meta: Record<string, unknown>;
}

type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
}

function urlOf(path: string, query?: Query): string {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  return url.pathname + url.search;
}

/**
 * Sends one request with the dashboard's bearer token. A 401 means the token was revoked: the
 * dashboard signs in again (and the promise never settles, as the page goes away).
 */
async function send(
  method: string,
  url: string,
  init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  const token = storedToken();
  if (!token) return beginSignIn();
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...init.headers },
      body: init.body,
      signal: init.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(
      0,
      'network_error',
      'Vigil could not be reached. Check your connection and try again.',
    );
  }
  if (response.status === 401) {
    dropToken();
    return beginSignIn();
  }
  return response;
}

/** The envelope in `text`, or undefined when it is not JSON. */
function parseEnvelope<T>(text: string): Envelope<T> | undefined {
  try {
    return text ? (JSON.parse(text) as Envelope<T>) : undefined;
  } catch {
    return undefined;
  }
}

/** The error of a failed answer, from its envelope when it has one. */
function answerError(response: Response, envelope: Envelope<unknown> | undefined): ApiError {
  const error = envelope?.error;
  return new ApiError(
    response.status,
    error?.code ?? 'http_error',
    error?.message ?? `The server answered ${response.status} ${response.statusText}`,
    error?.field,
  );
}

/**
 * Calls the public API with the dashboard's bearer token. Edits are marked `X-Vigil-Source:
 * dashboard`, so revisions say where they came from.
 */
export async function request<T>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { 'X-Vigil-Source': 'dashboard' };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await send(method, urlOf(path, options.query), { headers, body, signal: options.signal });
  if (response.status === 204) return { data: undefined as T, meta: {} };
  const envelope = parseEnvelope<T>(await response.text());
  if (!response.ok || envelope?.error) throw answerError(response, envelope);
  if (!envelope)
    throw new ApiError(response.status, 'bad_response', 'The server sent an answer that is not JSON');
  return { data: envelope.data, meta: envelope.meta ?? {} };
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) =>
    request<T>('GET', path, { query, signal }).then((r) => r.data),
  getWithMeta: <T>(path: string, query?: Query, signal?: AbortSignal) =>
    request<T>('GET', path, { query, signal }),
  post: <T>(path: string, body?: unknown, query?: Query) =>
    request<T>('POST', path, { body, query }).then((r) => r.data),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, { body }).then((r) => r.data),
  /** DELETE; answers the `data` of routes that answer one (most answer 204, and so undefined). */
  delete: <T = undefined>(path: string) => request<T>('DELETE', path).then((r) => r.data),
};

/** A file the API answers bare (not in the envelope), such as a test export, with its file name. */
export async function download(path: string): Promise<{ text: string; fileName: string }> {
  const response = await send('GET', urlOf(path));
  const text = await response.text();
  if (!response.ok) throw answerError(response, parseEnvelope(text));
  const disposition = response.headers.get('content-disposition') ?? '';
  const fileName = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'download';
  return { text, fileName };
}

/** The message of any error, for a banner. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The error's message when it names this field (a JSON pointer, or a prefix of one), else undefined. */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError) || !error.field) return undefined;
  return error.field === field || error.field.startsWith(`${field}/`) ? error.message : undefined;
}
