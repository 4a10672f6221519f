import { newId } from '../../src/domain/ids.js';
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
