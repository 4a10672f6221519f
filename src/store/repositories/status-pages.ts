import type { StatusPageRow } from '../database.js';
import type { Executor } from '../store.js';

/** Runs a status page counts: finished pass/fail runs of a test, subtest runs aside. */
const countedRuns = (db: Executor, testId: string, environmentId: string | null) => {
  let query = db
    .selectFrom('test_runs')
    .where('test_id', '=', testId)
    .where('finished_at', 'is not', null)
    .where('result', 'in', ['pass', 'fail'])
    .where('source', '<>', 'subtest');
  if (environmentId !== null) query = query.where('environment_id', '=', environmentId);
  return query;
};

export const statusPagesRepo = {
  async insert(db: Executor, row: StatusPageRow): Promise<void> {
    await db.insertInto('status_pages').values(row).execute();
  },

  listForBucket(db: Executor, bucketKey: string): Promise<StatusPageRow[]> {
    return db
      .selectFrom('status_pages')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  ofBucket(db: Executor, bucketKey: string, id: string): Promise<StatusPageRow | undefined> {
    return db
      .selectFrom('status_pages')
      .selectAll()
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  bySlug(db: Executor, slug: string): Promise<StatusPageRow | undefined> {
    return db.selectFrom('status_pages').selectAll().where('slug', '=', slug).executeTakeFirst();
  },

  async update(
    db: Executor,
    id: string,
    changes: Pick<StatusPageRow, 'slug' | 'title' | 'environment_id' | 'groups' | 'updated_at'>,
  ): Promise<void> {
    await db.updateTable('status_pages').set(changes).where('id', '=', id).execute();
  },

  async delete(db: Executor, bucketKey: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('status_pages')
      .where('bucket_key', '=', bucketKey)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** The newest counted run's result and finish time, or undefined without one. */
  lastResult(
    db: Executor,
    testId: string,
    environmentId: string | null,
  ): Promise<{ result: string; finished_at: number | null } | undefined> {
    return countedRuns(db, testId, environmentId)
      .select(['result', 'finished_at'])
      .orderBy('finished_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  },

  /** When the current streak of fails began: the first fail after the newest pass (or ever). */
  async failingSince(db: Executor, testId: string, environmentId: string | null): Promise<number | null> {
    const lastPass = await countedRuns(db, testId, environmentId)
      .select('finished_at')
      .where('result', '=', 'pass')
      .orderBy('finished_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    let query = countedRuns(db, testId, environmentId)
      .select('finished_at')
      .where('result', '=', 'fail')
      .orderBy('finished_at')
      .limit(1);
    if (lastPass?.finished_at != null) query = query.where('finished_at', '>', lastPass.finished_at);
    return (await query.executeTakeFirst())?.finished_at ?? null;
  },
};
