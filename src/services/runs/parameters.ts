import { invalid } from '../../domain/errors.js';

/** Most parameters one trigger call (or one variable set of a batch) may carry. */
export const MAX_PARAMETERS = 500;
/** Longest value of one trigger parameter, in characters. */
export const MAX_VALUE_LENGTH = 100_000;
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

/** Where a set of trigger parameters came from, and the API field each of them is named by. */
export interface ParameterSource {
  values: Record<string, unknown>;
  /** The field an error about parameter `name` names (`query.tag`, `/0/tag` …). */
  field: (name: string) => string;
  /** Whether a list stands for a repeated name (query and form fields), which keeps its last value. */
  repeated: boolean;
}

/**
 * The variables of one trigger call or one batch variable set: the sources in order, a later one
 * winning. Names must be variable names, values strings,
 * numbers or booleans of at most MAX_VALUE_LENGTH characters without NUL; at most MAX_PARAMETERS
 * in all (`countField` names the field of that error).
 */
export function triggerParameters(
  sources: readonly ParameterSource[],
  countField: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { values, field, repeated } of sources) {
    for (const [name, raw] of Object.entries(values)) {
      const value = repeated && Array.isArray(raw) ? (raw as unknown[])[raw.length - 1] : raw;
      if (value === undefined) continue;
      if (!PARAMETER_NAME.test(name))
        throw invalid(field(name), 'is not a valid variable name (letters, digits, _ . -)');
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw invalid(field(name), 'must be a string, number or boolean');
      }
      const text = String(value);
      if (text.length > MAX_VALUE_LENGTH)
        throw invalid(field(name), `is longer than ${MAX_VALUE_LENGTH} characters`);
      if (text.includes('\u0000')) throw invalid(field(name), 'contains a NUL character');
      out[name] = text;
    }
  }
  if (Object.keys(out).length > MAX_PARAMETERS)
    throw invalid(countField, `carries more than ${MAX_PARAMETERS} parameters`);
  return out;
}
