import { newId } from '../domain/ids.js';
import type { RevisionRow } from '../store/database.js';
import { revisionsRepo } from '../store/repositories/revisions.js';
import type { Executor } from '../store/store.js';
import type { Actor } from './principal.js';

let lastTimestamp = 0;
/** Unix seconds with microseconds, strictly increasing within the process so revisions keep their order. */
function revisionTimestamp(): number {
  const now = Math.round(Date.now() * 1000) / 1_000_000;
  lastTimestamp = now > lastTimestamp ? now : Math.round((lastTimestamp + 0.000001) * 1_000_000) / 1_000_000;
  return lastTimestamp;
}

export interface RevisionEntry {
  itemType: 'radar_test' | 'environment';
  itemId: string;
  testId: string | null;
  action: 'create' | 'update' | 'delete';
  snapshot: unknown;
}

/** Writes revisions inside the caller's transaction, so a change and its history land together. */
export async function recordRevisions(
  db: Executor,
  actor: Actor,
  bucket: { key: string; team_id: string },
  entries: readonly RevisionEntry[],
): Promise<void> {
  const rows: RevisionRow[] = entries.map((e) => ({
    id: newId(),
    item_type: e.itemType,
    item_id: e.itemId,
    test_id: e.testId,
    action: e.action,
    timestamp: revisionTimestamp(),
    author_id: actor.accountId,
    author_name: actor.name,
    author_email: actor.email,
    team_id: bucket.team_id,
    bucket_key: bucket.key,
    source: actor.source,
    snapshot: JSON.stringify(e.snapshot),
  }));
  await revisionsRepo.insert(db, rows);
}
