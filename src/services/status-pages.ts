import { conflict, invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, nowFloat } from '../domain/ids.js';
import {
  type PublicStatus,
  publicStatus,
  type StatusPage,
  type StatusPageGroup,
  type StatusPageInput,
  type StatusPagePatch,
  STATUS_PAGE_SLUG,
  type TestFacts,
  UPTIME_DAYS,
} from '../domain/status-pages.js';
import { occurrences } from '../domain/maintenance.js';
import type { StatusPageRow } from '../store/database.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { maintenanceRepo } from '../store/repositories/maintenance.js';
import { dayOf, rollupsRepo } from '../store/repositories/rollups.js';
import { statusPagesRepo } from '../store/repositories/status-pages.js';
import { testsRepo } from '../store/repositories/tests.js';
import type { Executor, Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import { timingOfRow } from './maintenance.js';
import type { Principal } from './principal.js';

/** How far ahead a status page announces maintenance: a week. */
export const MAINTENANCE_AHEAD_SECONDS = 7 * 86_400;

export function statusPageOf(row: StatusPageRow): StatusPage {
  return {
    id: row.id,
    bucket_key: row.bucket_key,
    slug: row.slug,
    title: row.title,
    environment_id: row.environment_id,
    groups: JSON.parse(row.groups) as StatusPageGroup[],
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Public status pages of a bucket (docs/alerting.md): members edit them with the bucket's rights;
 * anyone reads the public view by slug, built from the daily rollups and the newest runs.
 */
export class StatusPageService {
  constructor(private readonly deps: { store: Store; buckets: BucketService }) {}

  async list(principal: Principal, bucketKey: string): Promise<StatusPage[]> {
    const bucket = await this.deps.buckets.require(principal, bucketKey);
    return (await statusPagesRepo.listForBucket(this.deps.store.db, bucket.key)).map(statusPageOf);
  }

  async get(principal: Principal, bucketKey: string, id: string): Promise<StatusPage> {
    const bucket = await this.deps.buckets.require(principal, bucketKey);
    const row = isUuid(id) ? await statusPagesRepo.ofBucket(this.deps.store.db, bucket.key, id) : undefined;
    if (!row) throw notFound(`Status page ${id}`);
    return statusPageOf(row);
  }

  async create(principal: Principal, bucketKey: string, input: StatusPageInput): Promise<StatusPage> {
    const bucket = await this.deps.buckets.require(principal, bucketKey);
    const { db } = this.deps.store;
    await this.check(db, bucket.key, input);
    const now = nowFloat();
    const row: StatusPageRow = {
      id: newId(),
      bucket_key: bucket.key,
      slug: input.slug,
      title: input.title,
      environment_id: input.environment_id ?? null,
      groups: JSON.stringify(input.groups),
      created_by: principal.accountId,
      created_at: now,
      updated_at: now,
    };
    await this.deps.store.transaction(async (trx) => {
      if (await statusPagesRepo.bySlug(trx, input.slug)) throw slugTaken(input.slug);
      await statusPagesRepo.insert(trx, row);
    });
    return statusPageOf(row);
  }

  async update(
    principal: Principal,
    bucketKey: string,
    id: string,
    patch: StatusPagePatch,
  ): Promise<StatusPage> {
    const current = await this.get(principal, bucketKey, id);
    const next = {
      slug: patch.slug ?? current.slug,
      title: patch.title ?? current.title,
      environment_id: patch.environment_id === undefined ? current.environment_id : patch.environment_id,
      groups: patch.groups ?? current.groups,
    };
    await this.check(this.deps.store.db, current.bucket_key, next);
    const updatedAt = nowFloat();
    await this.deps.store.transaction(async (trx) => {
      const holder = await statusPagesRepo.bySlug(trx, next.slug);
      if (holder && holder.id !== id) throw slugTaken(next.slug);
      await statusPagesRepo.update(trx, id, {
        ...next,
        groups: JSON.stringify(next.groups),
        updated_at: updatedAt,
      });
    });
    return { ...current, ...next, updated_at: updatedAt };
  }

  async delete(principal: Principal, bucketKey: string, id: string): Promise<void> {
    const bucket = await this.deps.buckets.require(principal, bucketKey);
    if (!isUuid(id) || !(await statusPagesRepo.delete(this.deps.store.db, bucket.key, id))) {
      throw notFound(`Status page ${id}`);
    }
  }

  /** The public view of the page at `slug`, or undefined when there is none. */
  async publicView(slug: string, now = nowFloat()): Promise<PublicStatus | undefined> {
    const { db } = this.deps.store;
    const row = SLUG.test(slug) ? await statusPagesRepo.bySlug(db, slug) : undefined;
    if (!row) return undefined;
    const page = statusPageOf(row);
    const testIds = [...new Set(page.groups.flatMap((group) => group.tests.map((t) => t.test_id)))];
    const today = dayOf(now);
    // Independent reads: on PostgreSQL they go out over the pool side by side.
    const [daily, perTest] = await Promise.all([
      rollupsRepo.daily(db, testIds, today - UPTIME_DAYS + 1, page.environment_id),
      Promise.all(
        testIds.map(async (testId) => {
          const last = await statusPagesRepo.lastResult(db, testId, page.environment_id);
          const result: TestFacts['last'] =
            last?.result === 'pass' || last?.result === 'fail' ? last.result : null;
          const failingSince =
            result === 'fail' ? await statusPagesRepo.failingSince(db, testId, page.environment_id) : null;
          return { testId, result, failingSince };
        }),
      ),
    ]);
    const days = new Map(
      testIds.map((testId) => [testId, new Map<number, { passes: number; fails: number }>()]),
    );
    for (const row of daily) days.get(row.test_id)?.set(row.day, { passes: row.passes, fails: row.fails });
    const facts = new Map<string, TestFacts>(
      perTest.map(({ testId, result, failingSince }): [string, TestFacts] => [
        testId,
        { last: result, failingSince, daily: days.get(testId)! },
      ]),
    );
    const maintenance = await this.maintenanceShown(db, page, testIds, now);
    return publicStatus(page, facts, { today, now, maintenance });
  }

  /**
   * The maintenance the page shows: windows of the bucket, or of one of the page's tests, under way
   * or starting within {@link MAINTENANCE_AHEAD_SECONDS}, soonest first. Only times and the display
   * names the page gives its tests are shown, never a window's note.
   */
  private async maintenanceShown(
    db: Executor,
    page: StatusPage,
    testIds: readonly string[],
    now: number,
  ): Promise<PublicStatus['maintenance']> {
    const names = new Map(
      page.groups.flatMap((group) => group.tests.map((t) => [t.test_id, t.name] as const)),
    );
    const shown: PublicStatus['maintenance'] = [];
    for (const row of await maintenanceRepo.forBucket(db, page.bucket_key)) {
      if (row.test_id !== null && !testIds.includes(row.test_id)) continue;
      const title =
        row.test_id === null ? 'Scheduled maintenance' : `Scheduled maintenance: ${names.get(row.test_id)}`;
      for (const span of occurrences(timingOfRow(row), now, now + MAINTENANCE_AHEAD_SECONDS))
        shown.push({ title, ...span });
    }
    return shown.sort((a, b) => a.starts_at - b.starts_at || a.title.localeCompare(b.title));
  }

  /** Every test is the bucket's, the environment too; names each field that is not. */
  private async check(
    db: Executor,
    bucketKey: string,
    page: Pick<StatusPageInput, 'environment_id' | 'groups'>,
  ): Promise<void> {
    if (page.environment_id != null) {
      const environment = isUuid(page.environment_id)
        ? await environmentsRepo.inBucket(db, bucketKey, page.environment_id)
        : undefined;
      if (!environment) throw invalid('/environment_id', 'is not an environment of this bucket');
    }
    const own = new Set((await testsRepo.allInBucket(db, bucketKey)).map((test) => test.id));
    page.groups.forEach((group, g) =>
      group.tests.forEach((test, t) => {
        if (!own.has(test.test_id)) {
          throw invalid(`/groups/${g}/tests/${t}/test_id`, 'is not a test of this bucket');
        }
      }),
    );
  }
}

const SLUG = new RegExp(STATUS_PAGE_SLUG);

const slugTaken = (slug: string) => conflict(`The status page slug "${slug}" is taken; choose another`);
