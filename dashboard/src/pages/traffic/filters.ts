/** The stream page's filters, as they travel in the address bar and to the list routes. */

export const STREAMS = [
  { key: 'messages', label: 'All traffic' },
  { key: 'errors', label: 'Errors' },
  { key: 'shared', label: 'Shared' },
  { key: 'captures', label: 'Captures' },
] as const;
export type StreamKey = (typeof STREAMS)[number]['key'];

export const isStream = (value: string): value is StreamKey => STREAMS.some((s) => s.key === value);

export const WINDOWS = {
  '15m': 15 * 60,
  '1h': 3600,
  '24h': 86_400,
  '7d': 7 * 86_400,
  '30d': 30 * 86_400,
} as const;
export type TimeWindow = keyof typeof WINDOWS;

export const FILTER_NAMES = ['method', 'host', 'path', 'status', 'q', 'window'] as const;
export type FilterName = (typeof FILTER_NAMES)[number];
export type Filters = Partial<Record<FilterName, string>>;

export function filtersFromSearch(search: string): Filters {
  const params = new URLSearchParams(search);
  const filters: Filters = {};
  for (const name of FILTER_NAMES) {
    const value = params.get(name)?.trim();
    if (value) filters[name] = value;
  }
  if (filters.window && !(filters.window in WINDOWS)) delete filters.window;
  return filters;
}

/** `?method=GET&…` for the address bar; empty when no filter is set. */
export function searchOf(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const value = filters[name]?.trim();
    if (value) params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The Unix time a window starts at, or undefined for all time. */
export function windowSince(window: string | undefined, now = Date.now() / 1000): number | undefined {
  const seconds = window && window in WINDOWS ? WINDOWS[window as TimeWindow] : undefined;
  return seconds === undefined ? undefined : Math.floor(now - seconds);
}

/** The list routes' query of the filters (the window becomes `since`). */
export function listQuery(filters: Filters): Record<string, string | number | undefined> {
  const { window, ...rest } = filters;
  return { ...rest, since: windowSince(window) };
}

export const sameFilters = (a: Filters, b: Filters): boolean => searchOf(a) === searchOf(b);
