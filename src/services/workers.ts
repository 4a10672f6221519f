import { hostname } from 'node:os';
import { VERSION } from '../config/version.js';
import { AGENT_REGION_PREFIX } from '../jobs/queue.js';
import { nowFloat } from '../domain/ids.js';
import type { WorkerRow, WorkerTable } from '../store/database.js';
import { workersRepo } from '../store/repositories/workers.js';
import type { Store } from '../store/store.js';

/** How often a live process announces itself, and after how long without a word it counts as gone. */
export const LIVENESS = { heartbeatMs: 5_000, deadAfterMs: 20_000 } as const;

/** A region code meaning "every region" in a worker's announcement. */
export const EVERY_REGION = '*';

/** The queue region of runs meant for one remote agent. */
export function agentRegion(agentId: string): string {
  return `${AGENT_REGION_PREFIX}${agentId}`;
}

export interface Announcement {
  id: string;
  kind: WorkerTable['kind'];
  /** Regions served; null for every region. */
  regions: readonly string[] | null;
  concurrency: number;
  agentId?: string | null;
  version?: string;
  hostname?: string;
  pid?: number;
}

export interface RegionSummary {
  region: string;
  workers: number;
  concurrency: number;
  last_seen_at: number;
  /** Host name of the worker of the region heard from last. */
  hostname: string;
}

/**
 * Which processes are alive and what they serve. Every worker, serve process and agent announces
 * itself every few seconds; one silent for `LIVENESS.deadAfterMs` is gone, and its runs are handed
 * over (see the run reaper).
 */
export class WorkerRegistry {
  constructor(
    private readonly deps: { store: Store; liveness?: { heartbeatMs: number; deadAfterMs: number } },
  ) {}

  get liveness(): { heartbeatMs: number; deadAfterMs: number } {
    return this.deps.liveness ?? LIVENESS;
  }

  async announce(a: Announcement): Promise<void> {
    const now = nowFloat();
    await workersRepo.upsert(this.deps.store.db, {
      id: a.id,
      kind: a.kind,
      regions: JSON.stringify(a.regions ?? [EVERY_REGION]),
      version: a.version ?? VERSION,
      hostname: a.hostname ?? hostname(),
      pid: a.pid ?? process.pid,
      concurrency: a.concurrency,
      agent_id: a.agentId ?? null,
      started_at: now,
      last_seen_at: now,
    });
  }

  /** A process that stops cleanly says so, so that nobody waits for it to fall silent. */
  async withdraw(id: string): Promise<void> {
    await workersRepo.remove(this.deps.store.db, id);
  }

  /** The processes alive now. */
  async live(): Promise<WorkerRow[]> {
    return workersRepo.seenSince(this.deps.store.db, nowFloat() - this.liveness.deadAfterMs / 1000);
  }

  /** Regions announced by live workers (not agents: those belong to their team), with capacity. */
  async regions(): Promise<RegionSummary[]> {
    const byRegion = new Map<string, RegionSummary>();
    for (const worker of await this.live()) {
      if (worker.kind === 'agent') continue;
      for (const region of regionsOf(worker)) {
        const entry = byRegion.get(region) ?? {
          region,
          workers: 0,
          concurrency: 0,
          last_seen_at: 0,
          hostname: '',
        };
        entry.workers += 1;
        entry.concurrency += worker.concurrency;
        if (worker.last_seen_at >= entry.last_seen_at) entry.hostname = worker.hostname;
        entry.last_seen_at = Math.max(entry.last_seen_at, worker.last_seen_at);
        byRegion.set(region, entry);
      }
    }
    return [...byRegion.values()].sort((a, b) => a.region.localeCompare(b.region));
  }
}

export function regionsOf(worker: Pick<WorkerRow, 'regions'>): string[] {
  try {
    const parsed: unknown = JSON.parse(worker.regions);
    return Array.isArray(parsed) ? parsed.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    return [];
  }
}
