import type { BucketRow } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

export interface BucketWithTeam extends BucketRow {
  team_name: string;
}

/**
 * Every column of a bucket, named (the type makes the list complete): a statement kept prepared on
 * PostgreSQL must not take its columns from `*` (see keepPrepared).
 */
const BUCKET_COLUMNS = (
  Object.keys({
    key: true,
    name: true,
    team_id: true,
    created_by: true,
    is_default: true,
    verify_ssl: true,
    trigger_id: true,
    signing_secret: true,
    created_at: true,
    retention_days: true,
    auth_token: true,
  } satisfies Record<keyof BucketRow, true>) as (keyof BucketRow)[]
).map((column) => `buckets.${column}` as const);

function bucketsOf(db: Executor, accountId: string) {
  return db
    .selectFrom('buckets')
    .innerJoin('team_members', (join) =>
      join
        .onRef('team_members.team_id', '=', 'buckets.team_id')
        .on('team_members.account_id', '=', accountId),
    )
    .innerJoin('teams', 'teams.id', 'buckets.team_id')
    .select(BUCKET_COLUMNS)
    .select('teams.name as team_name');
}

const bucketForAccount = preparedQuery<{ key: string; accountId: string }, BucketWithTeam>(
  ['key', 'accountId'],
  (db, p) => bucketsOf(db, p.accountId).where('buckets.key', '=', p.key),
  // Read on every request in a bucket, by its key: one plan serves every value.
  { keepPreparedOnPostgres: true },
);

export const bucketsRepo = {
  listForAccount(db: Executor, accountId: string): Promise<BucketWithTeam[]> {
    return bucketsOf(db, accountId).orderBy('buckets.created_at').orderBy('buckets.key').execute();
  },

  /** The bucket, when the account belongs to its team. */
  async getForAccount(db: Executor, key: string, accountId: string): Promise<BucketWithTeam | undefined> {
    return (await bucketForAccount(db, { key, accountId }))[0];
  },

  findDefault(db: Executor, teamId: string): Promise<BucketRow | undefined> {
    return db
      .selectFrom('buckets')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('is_default', '=', 1)
      .executeTakeFirst();
  },

  byKey(db: Executor, key: string): Promise<BucketRow | undefined> {
    return db.selectFrom('buckets').selectAll().where('key', '=', key).executeTakeFirst();
  },

  byTriggerId(db: Executor, triggerId: string): Promise<BucketRow | undefined> {
    return db.selectFrom('buckets').selectAll().where('trigger_id', '=', triggerId).executeTakeFirst();
  },

  async insert(db: Executor, bucket: BucketRow): Promise<void> {
    await db.insertInto('buckets').values(bucket).execute();
  },

  async update(
    db: Executor,
    key: string,
    changes: Partial<
      Pick<BucketRow, 'name' | 'verify_ssl' | 'retention_days' | 'signing_secret' | 'auth_token'>
    >,
  ): Promise<void> {
    if (Object.keys(changes).length > 0)
      await db.updateTable('buckets').set(changes).where('key', '=', key).execute();
  },

  async delete(db: Executor, key: string): Promise<void> {
    await db.deleteFrom('buckets').where('key', '=', key).execute();
  },

  async countTestEnvironments(db: Executor, key: string): Promise<number> {
    const row = await db
      .selectFrom('environments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('bucket_key', '=', key)
      .where('test_id', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
