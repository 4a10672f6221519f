import { Type } from '@sinclair/typebox';
import { IntervalSchema } from '../../domain/schedules.js';
import { OrNull } from '../../domain/schema.js';
import { Nullable } from '../shared/envelope.js';

export const ScheduleOut = Type.Object({
  id: Type.String(),
  environment_id: Type.String(),
  interval: Type.String(),
  note: Type.String(),
  created_at: Type.Integer(),
  next_run_at: Nullable(
    Type.Number({
      description:
        'When the schedule starts its next run, Unix seconds; null until the scheduler has planned a new or changed schedule. Read-only',
    }),
  ),
  version: Type.String({ description: 'Format version of the answer' }),
  exported_at: Type.Integer({ description: 'When this version was written, Unix seconds' }),
});

/** A schedule write; null means not given (environment_id: the test's default environment). */
export const ScheduleCreate = Type.Object({
  environment_id: OrNull(
    Type.String({ maxLength: 64, description: "Defaults to the test's default environment" }),
  ),
  interval: IntervalSchema,
  note: OrNull(Type.String({ maxLength: 2_000 })),
});
export const SchedulePatch = Type.Partial(ScheduleCreate);

export const ScheduleParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  schedule_id: Type.String(),
});
