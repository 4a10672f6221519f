import type { EnvironmentRow } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

const environmentsOfTest = preparedQuery<{ testId: string }, EnvironmentRow>(['testId'], (db, p) =>
  db
    .selectFrom('environments')
    .selectAll()
    .where('test_id', '=', p.testId)
    .orderBy('created_at')
    .orderBy('id'),
);

export const environmentsRepo = {
  forTest(db: Executor, testId: string): Promise<EnvironmentRow[]> {
    return environmentsOfTest(db, { testId });
  },

  shared(db: Executor, bucketKey: string): Promise<EnvironmentRow[]> {
    return db
      .selectFrom('environments')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .where('test_id', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /** One environment of the bucket: a shared one, or any test's. */
  inBucket(db: Executor, bucketKey: string, id: string): Promise<EnvironmentRow | undefined> {
    return db
      .selectFrom('environments')
      .selectAll()
      .where('id', '=', id)
      .where('bucket_key', '=', bucketKey)
      .executeTakeFirst();
  },

  byId(db: Executor, id: string): Promise<EnvironmentRow | undefined> {
    return db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
  },

  async insert(db: Executor, rows: EnvironmentRow[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('environments').values(rows).execute();
  },

  async update(db: Executor, row: EnvironmentRow): Promise<void> {
    const { id, ...rest } = row;
    await db.updateTable('environments').set(rest).where('id', '=', id).execute();
  },

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('environments').where('id', '=', id).execute();
  },

  /** Environments of the bucket that name `id` as their parent. */
  children(db: Executor, bucketKey: string, id: string): Promise<{ id: string; name: string }[]> {
    return db
      .selectFrom('environments')
      .select(['id', 'name'])
      .where('bucket_key', '=', bucketKey)
      .where('parent_environment_id', '=', id)
      .execute();
  },

  /** Environments outside test `testId` that inherit from one of its environments. */
  inheritingFromTest(db: Executor, testId: string): Promise<{ id: string; name: string }[]> {
    return db
      .selectFrom('environments as child')
      .innerJoin('environments as parent', 'parent.id', 'child.parent_environment_id')
      .select(['child.id', 'child.name'])
      .where('parent.test_id', '=', testId)
      .where((eb) => eb.or([eb('child.test_id', 'is', null), eb('child.test_id', '!=', testId)]))
      .execute();
  },

  /** id → parent id for every environment of the bucket, to check parent chains for cycles. */
  async parentLinks(db: Executor, bucketKey: string): Promise<Map<string, string | null>> {
    const rows = await db
      .selectFrom('environments')
      .select(['id', 'parent_environment_id'])
      .where('bucket_key', '=', bucketKey)
      .execute();
    return new Map(rows.map((r) => [r.id, r.parent_environment_id]));
  },

  /** Tests that use `id` as their default environment. */
  defaultOf(db: Executor, id: string): Promise<{ id: string; name: string }[]> {
    return db.selectFrom('tests').select(['id', 'name']).where('default_environment_id', '=', id).execute();
  },
};
