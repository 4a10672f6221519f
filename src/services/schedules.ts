import { invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, nowSeconds } from '../domain/ids.js';
import { canonicalInterval } from '../domain/schedules.js';
import type { ScheduleRow } from '../store/database.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { schedulesRepo } from '../store/repositories/schedules.js';
import type { Executor } from '../store/store.js';
import type { Actor, Principal } from './principal.js';
import type { TestService } from './tests.js';

export interface ScheduleInput {
  environment_id?: string | null | undefined;
  interval: string;
  note?: string | null | undefined;
}

/** What a schedule write gives: null means "not given"; the interval in its canonical form (`1.0h` → `1h`). */
function given(input: Partial<ScheduleInput>) {
  const { environment_id, interval, note } = input;
  return {
    environment_id: environment_id ?? undefined,
    interval: interval === undefined ? undefined : canonicalInterval(interval),
    note: note ?? undefined,
  };
}

/** A schedule runs its test with one environment: one of the test's own, or a shared one of the bucket. */
async function checkEnvironment(
  db: Executor,
  bucketKey: string,
  testId: string,
  envId: string,
): Promise<void> {
  const env = isUuid(envId) ? await environmentsRepo.inBucket(db, bucketKey, envId) : undefined;
  if (!env || (env.test_id !== null && env.test_id !== testId)) {
    throw invalid(
      '/environment_id',
      `names environment ${envId}, which is neither this test's nor shared in the bucket`,
    );
  }
}

export class ScheduleService {
  constructor(private readonly deps: { tests: TestService }) {}

  async list(principal: Principal, bucketKey: string, testId: string): Promise<ScheduleRow[]> {
    return (await this.deps.tests.get(principal, bucketKey, testId)).schedules;
  }

  async get(principal: Principal, bucketKey: string, testId: string, id: string): Promise<ScheduleRow> {
    const schedule = (await this.list(principal, bucketKey, testId)).find((s) => s.id === id);
    if (!schedule) throw notFound(`Schedule ${id}`);
    return schedule;
  }

  /** Schedule writes change the test's snapshot, so each one goes through the test's edit (and revision). */
  async create(actor: Actor, bucketKey: string, testId: string, body: ScheduleInput): Promise<ScheduleRow> {
    const id = newId();
    const input = given(body);
    const aggregate = await this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      const environmentId = input.environment_id ?? aggregate.test.default_environment_id;
      await checkEnvironment(trx, bucketKey, testId, environmentId);
      await schedulesRepo.insert(trx, [
        {
          id,
          test_id: testId,
          environment_id: environmentId,
          interval: input.interval!,
          note: input.note ?? '',
          created_at: nowSeconds(),
          next_run_at: null,
        },
      ]);
    });
    return aggregate.schedules.find((s) => s.id === id)!;
  }

  async update(
    actor: Actor,
    bucketKey: string,
    testId: string,
    id: string,
    body: Partial<ScheduleInput>,
  ): Promise<ScheduleRow> {
    const patch = given(body);
    const aggregate = await this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      const schedule = aggregate.schedules.find((s) => s.id === id);
      if (!schedule) throw notFound(`Schedule ${id}`);
      if (patch.environment_id !== undefined)
        await checkEnvironment(trx, bucketKey, testId, patch.environment_id);
      await schedulesRepo.update(trx, {
        ...schedule,
        environment_id: patch.environment_id ?? schedule.environment_id,
        interval: patch.interval ?? schedule.interval,
        note: patch.note ?? schedule.note,
        // A new interval takes a new phase: the scheduler plans it afresh on its next tick.
        next_run_at:
          patch.interval !== undefined && patch.interval !== schedule.interval ? null : schedule.next_run_at,
      });
    });
    return aggregate.schedules.find((s) => s.id === id)!;
  }

  async delete(actor: Actor, bucketKey: string, testId: string, id: string): Promise<void> {
    await this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      if (!aggregate.schedules.some((s) => s.id === id)) throw notFound(`Schedule ${id}`);
      await schedulesRepo.delete(trx, id);
    });
  }
}
