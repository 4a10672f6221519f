/** A numeric setting of a benchmark from the environment, with a default and a lower bound. */
export function numberSetting(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min)
    throw new Error(`${name} must be a number ≥ ${min}, got "${raw}"`);
  return value;
}
