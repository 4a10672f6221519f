/**
 * The closed lists of the domain, in one dependency-free module: the server's schemas and types are
 * built from them, and the dashboard imports this file so its pickers offer exactly what the API accepts.
 */

/** Step types (spec 2.4). Adding one here without handling it everywhere breaks the build. */
export const STEP_TYPES = ['request', 'pause', 'condition', 'subtest', 'partner-inspector'] as const;

/** Where an assertion or a variable reads from (DESIGN §4). */
export const SOURCES = [
  'response_status',
  'response_headers',
  'response_json',
  'response_xml',
  'response_text',
  'response_time',
  'response_size',
] as const;

/**
 * How an assertion or a condition compares. `is_equal` is a synonym of `equal` (COMPARISON_SYNONYMS):
 * both are accepted and answered as given.
 */
export const COMPARISONS = [
  'equal',
  'not_equal',
  'empty',
  'not_empty',
  'contains',
  'does_not_contain',
  'is_a_number',
  'equal_number',
  'is_less_than',
  'is_less_than_or_equal',
  'is_greater_than',
  'is_greater_than_or_equal',
  'has_key',
  'has_value',
  'is_null',
  'is_equal',
] as const;

type ComparisonName = (typeof COMPARISONS)[number];

/**
 * Comparisons that are another name of one meaning, with its canonical name: `equal` is the name of
 * the original service's comparison list, `is_equal` the one its default step carries (spec 2.2),
 * and both appear in answers.
 */
export const COMPARISON_SYNONYMS: Readonly<Partial<Record<ComparisonName, ComparisonName>>> = {
  is_equal: 'equal',
};

/** The canonical name of a comparison's meaning: `is_equal` → `equal`, any other as it is. */
export function canonicalComparison(comparison: ComparisonName): ComparisonName {
  return COMPARISON_SYNONYMS[comparison] ?? comparison;
}

/** Each meaning once, by its canonical name: what an editor offers. */
export const CANONICAL_COMPARISONS: readonly ComparisonName[] = COMPARISONS.filter(
  (comparison) => canonicalComparison(comparison) === comparison,
);

/** Authentication methods of a request step or an environment (spec 2.5). */
export const AUTH_TYPES = ['basic', 'oauth_1', 'client_certificate'] as const;

/** Where an OAuth 1.0 signature goes. */
export const SIGNATURE_TYPES = ['auth_header', 'body', 'query'] as const;

/** When e-mail notifications go out (DESIGN §5). */
export const NOTIFY_ON = ['all', 'failures', 'threshold', 'switch'] as const;

/** How often a schedule runs its test (DESIGN §3), with the length of each in seconds. */
export const SCHEDULE_INTERVALS = {
  '1m': 60,
  '5m': 300,
  '15m': 900,
  '30m': 1_800,
  '1h': 3_600,
  '6h': 21_600,
  '1d': 86_400,
} as const;

/** Metric timeframes (DESIGN §4). */
export const TIMEFRAMES = ['hour', 'day', 'week', 'month'] as const;

/** Run sources, run results and step results (DESIGN §4). */
export const RUN_SOURCES = ['manual', 'scheduled', 'trigger_url', 'subtest'] as const;
export const RUN_RESULTS = ['queued', 'working', 'pass', 'fail', 'canceled'] as const;
export const STEP_RESULTS = ['pass', 'fail', 'skipped'] as const;

/** `log.creator` of every HAR file Vigil writes, from the API and from the dashboard alike. */
export function harCreator(version: string): { name: string; version: string } {
  return { name: 'Vigil', version };
}
