import { covers, type Weekly } from '../../domain/maintenance.js';
import type { MaintenanceMode } from '../../domain/maintenance.js';
import { nowFloat } from '../../domain/ids.js';
import { timingOfRow } from '../../services/maintenance.js';
import type { MaintenanceWindowRow } from '../../store/database.js';

export function presentMaintenanceWindow(row: MaintenanceWindowRow, now = nowFloat()) {
  return {
    id: row.id,
    bucket_key: row.bucket_key,
    test_id: row.test_id,
    mode: row.mode as MaintenanceMode,
    note: row.note,
    starts_at: row.starts_at,
    ends_at: row.ends_at,
    weekly: row.weekly === null ? null : (JSON.parse(row.weekly) as Weekly),
    active: covers(timingOfRow(row), now),
    created_at: row.created_at,
  };
}
