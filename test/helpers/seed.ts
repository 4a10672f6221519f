import { newId } from '../../src/domain/ids.js';
import type { TestRunRow } from '../../src/store/database.js';
import type { Store } from '../../src/store/store.js';

/** An account, its team, bucket `key` and one test in it, written straight to the store. */
export async function seedBucketWithTest(
  store: Store,
  key: string,
): Promise<{ testId: string; now: number }> {
  const now = 1_700_000_000;
  const teamId = newId();
  const accountId = newId();
  await store.db
    .insertInto('accounts')
    .values({ id: accountId, email: `${key}@x.test`, name: key, password_hash: 'x', created_at: now })
    .execute();
  await store.db.insertInto('teams').values({ id: teamId, name: key, created_at: now }).execute();
  await store.db
    .insertInto('buckets')
    .values({
      key,
      name: key,
      team_id: teamId,
      created_by: accountId,
      is_default: 0,
      verify_ssl: 1,
      trigger_id: newId(),
      signing_secret: 's',
      created_at: now,
      retention_days: 30,
    })
    .execute();
  const testId = newId();
  await store.db
    .insertInto('tests')
    .values({
      id: testId,
      bucket_key: key,
      name: 't',
      description: null,
      created_by: accountId,
      created_at: now,
      updated_at: now + 0.123456,
      default_environment_id: 'e',
      trigger_id: newId(),
    })
    .execute();
  return { testId, now };
}

/**
 * A finished (or, for `working`, unfinished) manual run of a test, written straight to the store:
 * queued and started at `at`, half a second long, with `responseTimeMs` as its response time.
 */
export function runRow(
  testId: string,
  bucketKey: string,
  result: string,
  at: number,
  responseTimeMs: number | null = 10,
): TestRunRow {
  return {
    id: newId(),
    test_id: testId,
    bucket_key: bucketKey,
    environment_id: 'e',
    environment_name: 'Default',
    region: 'local',
    agent: null,
    source: 'manual',
    result,
    parent_run_id: null,
    queued_at: at,
    started_at: at,
    finished_at: result === 'working' ? null : at + 0.5,
    attempts: 1,
    requests_executed: 1,
    assertions_defined: 0,
    assertions_passed: 0,
    assertions_failed: 0,
    scripts_defined: 0,
    scripts_passed: 0,
    scripts_failed: 0,
    variables_defined: 0,
    variables_passed: 0,
    variables_failed: 0,
    worker_id: null,
    executions: 1,
    handovers: 0,
    interrupted_attempts: null,
    planned_at: null,
    schedule_id: null,
    round_id: null,
    in_maintenance: 0,
    agent_id: null,
    response_time_ms: responseTimeMs,
    error: null,
    trigger_variables: '{}',
    notification_url: null,
    summary: '{}',
  };
}
