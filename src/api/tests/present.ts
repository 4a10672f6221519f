import { type Principal, visibleEmail } from '../../services/principal.js';
import type { TestAggregate, TestSummary } from '../../services/tests.js';
import type { RevisionRow, ScheduleRow } from '../../store/database.js';
import type { TestWithCreator } from '../../services/tests.js';
import { EXPORT_VERSION, presentEnvironment } from '../environments/present.js';

export function presentSchedule(row: ScheduleRow) {
  return {
    id: row.id,
    environment_id: row.environment_id,
    interval: row.interval,
    note: row.note,
    created_at: row.created_at,
    next_run_at: row.next_run_at,
    version: EXPORT_VERSION,
    // A schedule is stamped with its creation: two reads of it are equal.
    exported_at: row.created_at,
  };
}

export function presentTestListItem(test: TestWithCreator, principal: Principal) {
  return {
    id: test.id,
    name: test.name,
    description: test.description,
    created_at: test.created_at,
    created_by: {
      email: visibleEmail(principal, test.creator_email),
      name: test.creator_name,
      id: test.created_by,
    },
    default_environment_id: test.default_environment_id,
  };
}

export function triggerUrl(publicUrl: string, triggerId: string): string {
  return `${publicUrl}/radar/${triggerId}/trigger`;
}

export function presentTest(aggregate: TestAggregate, principal: Principal, publicUrl: string) {
  return {
    ...presentTestListItem(aggregate.test, principal),
    environments: aggregate.environments.map(presentEnvironment),
    steps: aggregate.steps,
    schedules: aggregate.schedules.map(presentSchedule),
    last_run: aggregate.lastRun ?? null,
    trigger_url: triggerUrl(publicUrl, aggregate.test.trigger_id),
  };
}

/** A row of the dashboard's tests list. */
export function presentTestSummary(summary: TestSummary) {
  const { test, lastRun } = summary;
  return {
    id: test.id,
    name: test.name,
    description: test.description,
    default_environment_id: test.default_environment_id,
    created_at: test.created_at,
    last_run: lastRun && {
      test_run_id: lastRun.test_run_id,
      result: lastRun.result,
      environment_id: lastRun.environment_id,
      environment_name: lastRun.environment_name,
      region: lastRun.region,
      source: lastRun.source,
      started_at: lastRun.started_at,
      finished_at: lastRun.finished_at,
    },
    schedules: summary.schedules.map((s) => ({
      id: s.id,
      environment_id: s.environment_id,
      interval: s.interval,
    })),
    recent_runs: summary.recentRuns.map((run) => ({
      test_run_id: run.test_run_id,
      result: run.result,
      started_at: run.started_at,
      finished_at: run.finished_at,
      response_time_ms: run.response_time_ms,
    })),
  };
}

export function presentRevision(row: RevisionRow, principal: Principal) {
  return {
    uuid: row.id,
    timestamp: row.timestamp,
    item_type: row.item_type,
    item_id: row.item_id,
    action: row.action,
    author_uuid: row.author_id,
    author_name: row.author_name,
    author_email: visibleEmail(principal, row.author_email),
    organization_id: row.team_id,
    bucket_key: row.bucket_key,
    source: row.source,
    snapshot: JSON.parse(row.snapshot) as unknown,
  };
}
