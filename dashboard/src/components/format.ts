/** Formatting shared by every view. */

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago" for a Unix time in seconds. */
export function timeAgo(seconds: number | null | undefined, now = Date.now() / 1000): string {
  if (seconds === null || seconds === undefined) return '—';
  const delta = seconds - now;
  const abs = Math.abs(delta);
  if (abs < 45) return relative.format(Math.round(delta), 'second');
  if (abs < 2700) return relative.format(Math.round(delta / 60), 'minute');
  if (abs < 79200) return relative.format(Math.round(delta / 3600), 'hour');
  return relative.format(Math.round(delta / 86400), 'day');
}

/** Local date and time of a Unix time in seconds. */
export function dateTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return new Date(seconds * 1000).toLocaleString();
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  return `${Math.round(value)} ms`;
}

export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}

/** Human words for a snake_case value of the API (`is_greater_than` → "is greater than"). */
export function words(value: string): string {
  return value.replace(/_/g, ' ');
}
