/**
 * Public status pages (docs/alerting.md, "Status pages"): what a bucket editor writes, and the
 * public view built from it. Pure: rows and counts in, plain data out. The public view names tests
 * only by their display names: no test ids, URLs, hosts, bodies, variables, assertions or
 * environment names ever reach it.
 */
import { type Static, Type } from '@sinclair/typebox';

export const STATUS_PAGE_SLUG = '^[a-z0-9][a-z0-9-]{1,62}$';
/** Days of history the uptime bars show. */
export const UPTIME_DAYS = 90;
export const STATUS_PAGE_LIMITS = { groups: 20, tests: 100 } as const;

const DisplayName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });

export const StatusPageGroup = Type.Object(
  {
    name: DisplayName,
    tests: Type.Array(
      Type.Object(
        {
          test_id: Type.String({ maxLength: 64, description: 'A test of the bucket (never shown publicly)' }),
          name: Type.Union([DisplayName], { description: 'What the public page calls the test' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: STATUS_PAGE_LIMITS.tests },
    ),
  },
  { additionalProperties: false },
);
export type StatusPageGroup = Static<typeof StatusPageGroup>;

export const StatusPageInput = Type.Object(
  {
    slug: Type.String({
      pattern: STATUS_PAGE_SLUG,
      description: 'The page lives at PUBLIC_URL/status/<slug>',
    }),
    title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    environment_id: Type.Optional(
      Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
        description: 'Only runs of this environment count; null or absent: every environment',
      }),
    ),
    groups: Type.Array(StatusPageGroup, { minItems: 1, maxItems: STATUS_PAGE_LIMITS.groups }),
  },
  { additionalProperties: false },
);
export type StatusPageInput = Static<typeof StatusPageInput>;

export const StatusPagePatch = Type.Partial(StatusPageInput, { additionalProperties: false });
export type StatusPagePatch = Static<typeof StatusPagePatch>;

/** A status page as its editors see it. */
export interface StatusPage {
  id: string;
  bucket_key: string;
  slug: string;
  title: string;
  environment_id: string | null;
  groups: StatusPageGroup[];
  created_at: number;
  updated_at: number;
}

// ---------------------------------------------------------------------------------------------
// The public view

export type TestState = 'pass' | 'fail' | 'unknown';

export interface UptimeDay {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  passes: number;
  fails: number;
}

export interface PublicTest {
  name: string;
  state: TestState;
  /** When the current failure began (Unix seconds); null unless failing. */
  failing_since: number | null;
  /** Passing runs over pass and fail runs of the last 90 days, in percent; null without runs. */
  uptime_percent: number | null;
  days: UptimeDay[];
}

export interface PublicStatus {
  title: string;
  /** `operational` when no test fails, else `degraded`. */
  status: 'operational' | 'degraded';
  generated_at: number;
  groups: { name: string; tests: PublicTest[] }[];
  incidents: { group: string; test: string; since: number }[];
  maintenance: { title: string; starts_at: number; ends_at: number }[];
}

/** What the store knows of one test of the page. */
export interface TestFacts {
  last: 'pass' | 'fail' | null;
  failingSince: number | null;
  /** Counts by UTC day (Unix days). */
  daily: ReadonlyMap<number, { passes: number; fails: number }>;
}

const isoDay = (day: number) => new Date(day * 86_400_000).toISOString().slice(0, 10);

/** The public view of a page from what the store knows of its tests; `today` in Unix days. */
export function publicStatus(
  page: Pick<StatusPage, 'title' | 'groups'>,
  facts: ReadonlyMap<string, TestFacts>,
  options: { today: number; now: number; maintenance?: PublicStatus['maintenance'] },
): PublicStatus {
  const incidents: PublicStatus['incidents'] = [];
  const groups = page.groups.map((group) => ({
    name: group.name,
    tests: group.tests.map((entry): PublicTest => {
      const known = facts.get(entry.test_id);
      const state: TestState = known?.last ?? 'unknown';
      let passes = 0;
      let total = 0;
      const days: UptimeDay[] = [];
      for (let day = options.today - UPTIME_DAYS + 1; day <= options.today; day += 1) {
        const counts = known?.daily.get(day) ?? { passes: 0, fails: 0 };
        passes += counts.passes;
        total += counts.passes + counts.fails;
        days.push({ date: isoDay(day), passes: counts.passes, fails: counts.fails });
      }
      const since = state === 'fail' ? (known?.failingSince ?? null) : null;
      if (state === 'fail')
        incidents.push({ group: group.name, test: entry.name, since: since ?? options.now });
      return {
        name: entry.name,
        state,
        failing_since: since,
        uptime_percent: total === 0 ? null : Math.floor((passes / total) * 10_000) / 100,
        days,
      };
    }),
  }));
  incidents.sort((a, b) => a.since - b.since);
  return {
    title: page.title,
    status: incidents.length > 0 ? 'degraded' : 'operational',
    generated_at: options.now,
    groups,
    incidents,
    maintenance: options.maintenance ?? [],
  };
}
