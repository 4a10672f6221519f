/** Shapes of the run endpoints the dashboard reads beyond `Run` (DESIGN §4, docs/runner.md). */
import type { Static } from '@sinclair/typebox';
import type { MetricsOut, StepDetailOut, TriggerOut } from '../../../../src/api/runs/schemas';

/** `GET …/results/<run>/steps/<step>`: the step summary plus the full request sent and response received. */
export type StepDetail = Static<typeof StepDetailOut>;

/** A body as sent or received: text, or Base64 with `body_encoding: base64`. */
export type SentBody = Pick<
  NonNullable<StepDetail['request']>,
  'body' | 'body_encoding' | 'size_bytes' | 'truncated'
>;

/** `POST …/tests/<t>/runs` answers the runs it queued, one per region. */
export type StartedRuns = Static<typeof TriggerOut>;

export type Metrics = Static<typeof MetricsOut>;

// `GET /regions` answers `{regions: RegionInfo[]}`: the schema (RegionOut) is private to src/api/regions/routes.ts.
export interface RegionInfo {
  region: string;
  workers: number;
  concurrency: number;
  last_seen_at: number;
  hostname: string;
}

/** A run still waiting or running: views poll until it is not. */
export const isActive = (result: string) => result === 'queued' || result === 'working';

export const resultsPath = (bucket: string, test: string) => `/buckets/${bucket}/tests/${test}/results`;
