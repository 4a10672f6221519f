import { invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, nowFloat } from '../domain/ids.js';
import {
  covers,
  type MaintenanceMode,
  type MaintenanceWindowInput,
  type MaintenanceWindowPatch,
  timingOf,
  type Weekly,
  type WindowTiming,
} from '../domain/maintenance.js';
import type { MaintenanceWindowRow } from '../store/database.js';
import { maintenanceRepo } from '../store/repositories/maintenance.js';
import { testsRepo } from '../store/repositories/tests.js';
import type { Executor, Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import type { Principal } from './principal.js';

/** The timing a stored window holds. */
export function timingOfRow(row: MaintenanceWindowRow): WindowTiming {
  return row.weekly !== null
    ? { kind: 'weekly', weekly: JSON.parse(row.weekly) as Weekly }
    : { kind: 'once', starts_at: row.starts_at ?? 0, ends_at: row.ends_at ?? 0 };
}

/** What the windows covering a test at an instant ask for: pause wins over mute. */
export function maintenanceAt(rows: readonly MaintenanceWindowRow[], at: number): MaintenanceMode | null {
  const active = rows.filter((row) => covers(timingOfRow(row), at));
  if (active.length === 0) return null;
  return active.some((row) => row.mode === 'pause') ? 'pause' : 'mute';
}

/**
 * Maintenance windows of a bucket or of one of its tests (docs/alerting.md). Anyone who may edit
 * the bucket's schedules may manage them (the routes ask for the same scope).
 */
export class MaintenanceService {
  constructor(private readonly deps: { store: Store; buckets: BucketService }) {}

  async list(principal: Principal, bucketKey: string): Promise<MaintenanceWindowRow[]> {
    await this.deps.buckets.require(principal, bucketKey);
    return maintenanceRepo.forBucket(this.deps.store.db, bucketKey);
  }

  async get(principal: Principal, bucketKey: string, id: string): Promise<MaintenanceWindowRow> {
    await this.deps.buckets.require(principal, bucketKey);
    const row = isUuid(id) ? await maintenanceRepo.get(this.deps.store.db, bucketKey, id) : undefined;
    if (!row) throw notFound(`Maintenance window ${id}`);
    return row;
  }

  async create(
    principal: Principal,
    bucketKey: string,
    input: MaintenanceWindowInput,
  ): Promise<MaintenanceWindowRow> {
    await this.deps.buckets.require(principal, bucketKey);
    const row = await this.rowOf(bucketKey, {
      id: newId(),
      bucket_key: bucketKey,
      test_id: input.test_id ?? null,
      mode: input.mode,
      note: input.note ?? '',
      created_at: nowFloat(),
      ...timingFields(input),
    });
    await maintenanceRepo.insert(this.deps.store.db, row);
    return row;
  }

  /** Fields left out (or null) keep their value, except the timing: given, it replaces the old one. */
  async update(
    principal: Principal,
    bucketKey: string,
    id: string,
    patch: MaintenanceWindowPatch,
  ): Promise<MaintenanceWindowRow> {
    const current = await this.get(principal, bucketKey, id);
    const timingGiven = patch.starts_at != null || patch.ends_at != null || patch.weekly != null;
    const row = await this.rowOf(bucketKey, {
      ...current,
      test_id: patch.test_id === undefined ? current.test_id : patch.test_id,
      mode: patch.mode ?? current.mode,
      note: patch.note ?? current.note,
      ...(timingGiven
        ? timingFields(patch)
        : { starts_at: current.starts_at, ends_at: current.ends_at, weekly: current.weekly }),
    });
    await maintenanceRepo.update(this.deps.store.db, row);
    return row;
  }

  async delete(principal: Principal, bucketKey: string, id: string): Promise<void> {
    await this.get(principal, bucketKey, id);
    await maintenanceRepo.delete(this.deps.store.db, bucketKey, id);
  }

  /** Checks the window's test and timing; answers the row as it is stored. */
  private async rowOf(bucketKey: string, row: MaintenanceWindowRow): Promise<MaintenanceWindowRow> {
    if (row.test_id !== null) {
      const test = await testsRepo.get(this.deps.store.db, bucketKey, row.test_id);
      if (!test) throw invalid('/test_id', `names no test of bucket ${bucketKey}`);
    }
    const timing = timingOf({
      starts_at: row.starts_at,
      ends_at: row.ends_at,
      weekly: row.weekly === null ? null : (JSON.parse(row.weekly) as Weekly),
    });
    if ('field' in timing) throw invalid(timing.field, timing.message);
    return row;
  }
}

function timingFields(input: MaintenanceWindowPatch) {
  return {
    starts_at: input.starts_at ?? null,
    ends_at: input.ends_at ?? null,
    weekly: input.weekly ? JSON.stringify(input.weekly) : null,
  };
}

/** The maintenance state of a test at an instant, read in the caller's transaction. */
export async function maintenanceOfTest(
  db: Executor,
  test: { bucket_key: string; id: string },
  at: number,
): Promise<MaintenanceMode | null> {
  return maintenanceAt(await maintenanceRepo.forTest(db, test.bucket_key, test.id), at);
}
