import { Type } from '@sinclair/typebox';
import {
  MAINTENANCE_MODES,
  MaintenanceWindowInput,
  MaintenanceWindowPatch,
  WEEKDAYS,
} from '../../domain/maintenance.js';
import { StringEnum } from '../../domain/schema.js';
import { Nullable } from '../shared/envelope.js';

export { MaintenanceWindowInput, MaintenanceWindowPatch };

export const MaintenanceWindowOut = Type.Object({
  id: Type.String(),
  bucket_key: Type.String(),
  test_id: Nullable(Type.String({ description: 'null: every test of the bucket' })),
  mode: StringEnum(MAINTENANCE_MODES),
  note: Type.String(),
  starts_at: Nullable(Type.Number({ description: 'One-off windows: Unix seconds' })),
  ends_at: Nullable(Type.Number({ description: 'One-off windows: Unix seconds' })),
  weekly: Nullable(
    Type.Object({
      days: Type.Array(StringEnum(WEEKDAYS)),
      start_time: Type.String(),
      duration_minutes: Type.Integer(),
      time_zone: Type.String(),
    }),
  ),
  active: Type.Boolean({ description: 'Whether the window covers the present moment' }),
  created_at: Type.Number(),
});

export const MaintenanceParams = Type.Object({ bucket_key: Type.String(), window_id: Type.String() });
