/** HAR 1.2 files built in the browser from message details, and file downloads. */
import { storedToken } from '../../auth';
import { ApiError } from '../../api/client';
import { bodyText, headerValue } from '../../components/message/body';
import type { Lists, Message } from '../../components/message/types';
import { version as packageVersion } from '../../../../package.json';
import { harCreator } from '../../../../src/domain/vocabulary';

const nameValues = (lists: Lists | null | undefined) =>
  Object.entries(lists ?? {}).flatMap(([name, values]) => values.map((value) => ({ name, value })));

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** One HAR entry per message with a request, oldest first (a response-only message has no HAR form). */
export function toHar(messages: Message[]): object {
  const entries = messages
    .filter((m) => m.request)
    .sort((a, b) => a.timestamp - b.timestamp)
    .map((m) => {
      const request = m.request!;
      const response = m.response;
      const wait = response?.response_time === null || !response ? 0 : response.response_time * 1000;
      const requestText = bodyText(request.body, request.body_encoding);
      const mimeType = headerValue(request.headers, 'content-type') ?? '';
      return {
        startedDateTime: iso(request.timestamp),
        time: wait,
        request: {
          method: request.method,
          url: request.url,
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: nameValues(request.headers),
          queryString: nameValues(request.params),
          ...(request.body && {
            postData: {
              mimeType,
              text: requestText ?? request.body,
              ...(requestText === null && request.body_encoding === 'base64' && { _encoding: 'base64' }),
              ...(request.form && { params: nameValues(request.form) }),
            },
          }),
          headersSize: -1,
          bodySize: request.size_bytes,
        },
        response: response
          ? {
              status: response.status,
              statusText: response.reason,
              httpVersion: 'HTTP/1.1',
              cookies: [],
              headers: nameValues(response.headers),
              content: {
                size: response.size_bytes,
                mimeType: headerValue(response.headers, 'content-type') ?? '',
                text: response.body,
                ...(response.body_encoding === 'base64' && { encoding: 'base64' }),
              },
              redirectURL: headerValue(response.headers, 'location') ?? '',
              headersSize: -1,
              bodySize: response.size_bytes,
            }
          : {
              status: 0,
              statusText: '',
              httpVersion: 'HTTP/1.1',
              cookies: [],
              headers: [],
              content: { size: 0, mimeType: '' },
              redirectURL: '',
              headersSize: -1,
              bodySize: -1,
              _error: m.note ?? 'No response',
            },
        cache: {},
        timings: { send: 0, wait, receive: 0 },
        _vigil_uuid: m.uuid,
      };
    });
  return { log: { version: '1.2', creator: harCreator(packageVersion), entries } };
}

/** `GET /buckets/<key>/messages.har` with the filters: a file, not an envelope, so fetched raw. */
export async function fetchHarWindow(bucket: string, query: Record<string, string | number | undefined>) {
  const url = new URL(`/buckets/${encodeURIComponent(bucket)}/messages.har`, location.origin);
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  }
  const response = await fetch(url, { headers: { Authorization: `Bearer ${storedToken() ?? ''}` } });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as {
      error?: { code: string; message: string; field?: string };
    } | null;
    throw new ApiError(
      response.status,
      body?.error?.code ?? 'http_error',
      body?.error?.message ?? `The export failed (${response.status})`,
      body?.error?.field,
    );
  }
  return response.blob();
}

/** Runs `work` over `items` with at most `limit` at a time. */
export async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
