import { environmentView } from '../../services/environments.js';
import type { EnvironmentRow } from '../../store/database.js';

/** Format version of environment and schedule answers, as the original service labelled them. */
export const EXPORT_VERSION = '1.0';

/**
 * An environment as served: its view plus the export stamp of the original service's answers,
 * `version` and `exported_at` (here the time this version of the environment was written, so that
 * two reads of an unchanged environment are equal).
 */
export function presentEnvironment(row: EnvironmentRow) {
  return { ...environmentView(row), version: EXPORT_VERSION, exported_at: Math.floor(row.updated_at) };
}
