import type { TestRow, TestUpdate } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

export interface TestWithCreator extends TestRow {
  creator_name: string;
  creator_email: string;
}

function testsWithCreator(db: Executor) {
  return db
    .selectFrom('tests')
    .leftJoin('accounts', 'accounts.id', 'tests.created_by')
    .selectAll('tests')
    .select(['accounts.name as creator_name', 'accounts.email as creator_email']);
}

function normalise<T extends { creator_name: string | null; creator_email: string | null }>(
  row: T,
): T & { creator_name: string; creator_email: string } {
  return { ...row, creator_name: row.creator_name ?? '', creator_email: row.creator_email ?? '' };
}

const testsPage = preparedQuery<{ bucketKey: string; count: number; offset: number }, TestWithCreator>(
  ['bucketKey', 'count', 'offset'],
  (db, p) =>
    testsWithCreator(db)
      .where('tests.bucket_key', '=', p.bucketKey)
      .orderBy('tests.created_at')
      .orderBy('tests.id')
      .limit(p.count)
      .offset(p.offset),
);

const testForAccount = preparedQuery<{ id: string; bucketKey: string; accountId: string }, TestWithCreator>(
  ['id', 'bucketKey', 'accountId'],
  (db, p) =>
    testsWithCreator(db)
      .where('tests.id', '=', p.id)
      .where('tests.bucket_key', '=', p.bucketKey)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('buckets')
            .innerJoin('team_members', 'team_members.team_id', 'buckets.team_id')
            .select('buckets.key')
            .whereRef('buckets.key', '=', 'tests.bucket_key')
            .where('team_members.account_id', '=', p.accountId),
        ),
      ),
);

export const testsRepo = {
  /** The test when it lies in `bucketKey` and the account belongs to that bucket's team: one query. */
  async getForAccount(
    db: Executor,
    bucketKey: string,
    id: string,
    accountId: string,
  ): Promise<TestWithCreator | undefined> {
    const row = (await testForAccount(db, { id, bucketKey, accountId }))[0];
    return row && normalise(row);
  },

  async list(db: Executor, bucketKey: string, count: number, offset: number): Promise<TestWithCreator[]> {
    const rows = await testsPage(db, { bucketKey, count, offset });
    return rows.map(normalise);
  },

  async get(db: Executor, bucketKey: string, id: string): Promise<TestWithCreator | undefined> {
    const row = await testsWithCreator(db)
      .where('tests.id', '=', id)
      .where('tests.bucket_key', '=', bucketKey)
      .executeTakeFirst();
    return row && normalise(row);
  },

  async insert(db: Executor, test: TestRow): Promise<void> {
    await db.insertInto('tests').values(test).execute();
  },

  async update(db: Executor, id: string, patch: TestUpdate): Promise<void> {
    if (Object.keys(patch).length === 0) return;
    await db.updateTable('tests').set(patch).where('id', '=', id).execute();
  },

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('tests').where('id', '=', id).execute();
  },
};
