import type { FastifyInstance } from 'fastify';

/** A browser-like request to the web pages: cookies as a map, fields sent as a urlencoded form. */
export function injectPage(
  app: FastifyInstance,
  options: {
    method: 'GET' | 'POST';
    url: string;
    cookies?: Record<string, string>;
    fields?: Record<string, string>;
    /** The client's address (default 127.0.0.1). */
    remoteAddress?: string;
  },
) {
  return app.inject({
    method: options.method,
    url: options.url,
    ...(options.remoteAddress && { remoteAddress: options.remoteAddress }),
    headers: {
      ...(options.cookies && {
        cookie: Object.entries(options.cookies)
          .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
          .join('; '),
      }),
      ...(options.fields && { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(options.fields && { payload: new URLSearchParams(options.fields).toString() }),
  });
}
