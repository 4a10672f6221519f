import type { ApiHarness } from './api.js';

/** A copy of a JSON value without the export stamp (`version`, `exported_at`) of environments and schedules. */
export function unstamped<T>(value: T): T {
  if (Array.isArray(value)) return value.map(unstamped) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key !== 'exported_at' && key !== 'version') out[key] = unstamped(inner);
    }
    return out as T;
  }
  return value;
}

/**
 * The harness with answers read without the export stamp: `exported_at` is the time of the answer,
 * so two reads of the same environment may differ in it alone.
 */
export function withoutExportStamp(h: ApiHarness): ApiHarness {
  return {
    ...h,
    data: async (...args) => unstamped(await h.data(...args)),
    call: async (options) => {
      const response = await h.call(options);
      const json = response.json.bind(response);
      return Object.assign(response, { json: () => unstamped(json()) });
    },
  };
}
