import { Type } from '@sinclair/typebox';
import { IntervalSchema } from '../../domain/schedules.js';

export const ScheduleOut = Type.Object({
  id: Type.String(),
  environment_id: Type.String(),
  interval: Type.String(),
  note: Type.String(),
  created_at: Type.Integer(),
});

export const ScheduleCreate = Type.Object({
  environment_id: Type.Optional(
    Type.String({ maxLength: 64, description: "Defaults to the test's default environment" }),
  ),
  interval: IntervalSchema,
  note: Type.Optional(Type.String({ maxLength: 2_000 })),
});
export const SchedulePatch = Type.Partial(ScheduleCreate);

export const ScheduleParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  schedule_id: Type.String(),
});
