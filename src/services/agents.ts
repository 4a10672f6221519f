import { DEFAULT_SETTINGS } from '../domain/environments.js';
import { AppError, notFound } from '../domain/errors.js';
import { hashSecret, isUuid, newId, newSecret, nowFloat } from '../domain/ids.js';
import type { RunOutcome } from '../domain/results.js';
import type { SubtestStep } from '../domain/steps.js';
import type { JobQueue } from '../jobs/queue.js';
import type { RunDefinition } from '../runner/engine.js';
import type { AgentRow, TestRunRow } from '../store/database.js';
import { agentsRepo } from '../store/repositories/agents.js';
import { runsRepo } from '../store/repositories/runs.js';
import type { Store } from '../store/store.js';
import type { Principal } from './principal.js';
import type { RunDefinitions } from './runs/definitions.js';
import type { RunExecutor } from './runs/executor.js';
import type { RunRecorder } from './runs/recorder.js';
import type { TeamService } from './teams.js';
import { agentRegion, type WorkerRegistry } from './workers.js';

/** Agent tokens are shown once and kept only as SHA-256 hashes, like access tokens. */
export const AGENT_TOKEN_PREFIX = 'vgl_agent_';
/** The region label of an agent registered without one. */
export const DEFAULT_AGENT_REGION = 'remote';
/** How long a long-poll waits for a run by default and at most, and how often it looks meanwhile. */
export const LONG_POLL = { defaultMs: 25_000, maxMs: 30_000, pollMs: 1_000 } as const;
/** The queue lease while a claimed job becomes a working run (the job completes right after). */
const CLAIM_LEASE_MS = 60_000;

/** The worker id an agent works under: in `workers`, and in the runs it executes. */
export function agentWorkerId(agentId: string): string {
  return `agent:${agentId}`;
}

/** An agent as its team sees it: never the token or its hash. */
export interface AgentView {
  id: string;
  team_id: string;
  name: string;
  region: string;
  version: string | null;
  hostname: string | null;
  last_seen_at: number | null;
  status: 'online' | 'offline';
  created_at: number;
}

/** What an agent says about itself on each call. */
export interface AgentClient {
  version?: string | undefined;
  hostname?: string | undefined;
  concurrency?: number | undefined;
}

export interface ClaimedAgentRun {
  run: TestRunRow;
  definition: RunDefinition;
}

/** Where a subtest of an agent's run points; resolved on the server, within the run's team. */
export interface SubtestTarget {
  test_uuid: string;
  environment_uuid?: string | undefined;
  bucket_key?: string | undefined;
}

/**
 * Remote agents (docs/agents.md): their registration by a team, and the protocol an agent speaks
 * to take runs of its own queue region, report heartbeats and results, and resolve subtests.
 */
export class AgentService {
  constructor(
    private readonly deps: {
      store: Store;
      teams: TeamService;
      executor: RunExecutor;
      definitions: RunDefinitions;
      recorder: RunRecorder;
      queue: JobQueue;
      registry: WorkerRegistry;
    },
  ) {}

  // -------------------------------------------------------------------------------------------
  // Registration (user API)

  async list(principal: Principal, teamId: string): Promise<AgentView[]> {
    const team = await this.deps.teams.requireMember(principal, teamId);
    const rows = await agentsRepo.listForTeam(this.deps.store.db, team.id);
    return rows.map((row) => this.view(row));
  }

  async get(principal: Principal, teamId: string, agentId: string): Promise<AgentView> {
    return this.view(await this.require(principal, teamId, agentId));
  }

  /** Registers an agent; the token is answered once and only its hash is kept. */
  async create(
    principal: Principal,
    teamId: string,
    input: { name: string; region?: string | undefined },
  ): Promise<{ agent: AgentView; token: string }> {
    const team = await this.deps.teams.requireMember(principal, teamId);
    const token = newSecret(AGENT_TOKEN_PREFIX);
    const row: AgentRow = {
      id: newId(),
      team_id: team.id,
      name: input.name,
      region: input.region ?? DEFAULT_AGENT_REGION,
      token_hash: hashSecret(token),
      created_at: nowFloat(),
      created_by: principal.accountId,
      last_seen_at: null,
      version: null,
      hostname: null,
      deleted_at: null,
    };
    await agentsRepo.insert(this.deps.store.db, row);
    return { agent: this.view(row), token };
  }

  /**
   * Deletes an agent: its token fails from the next request on, and it stops counting as live, so
   * the run reaper cancels the runs still queued for it and hands over the ones it was running.
   */
  async delete(principal: Principal, teamId: string, agentId: string): Promise<void> {
    const agent = await this.require(principal, teamId, agentId);
    if (!(await agentsRepo.markDeleted(this.deps.store.db, agent.team_id, agent.id, nowFloat()))) {
      throw notFound(`Agent ${agentId}`);
    }
    await this.deps.registry.withdraw(agentWorkerId(agent.id));
  }

  private async require(principal: Principal, teamId: string, agentId: string): Promise<AgentRow> {
    const team = await this.deps.teams.requireMember(principal, teamId);
    const row = isUuid(agentId) ? await agentsRepo.ofTeam(this.deps.store.db, team.id, agentId) : undefined;
    if (!row) throw notFound(`Agent ${agentId}`);
    return row;
  }

  private view(row: AgentRow): AgentView {
    const deadAfter = this.deps.registry.liveness.deadAfterMs / 1000;
    return {
      id: row.id,
      team_id: row.team_id,
      name: row.name,
      region: row.region,
      version: row.version,
      hostname: row.hostname,
      last_seen_at: row.last_seen_at,
      status: row.last_seen_at !== null && nowFloat() - row.last_seen_at <= deadAfter ? 'online' : 'offline',
      created_at: row.created_at,
    };
  }

  // -------------------------------------------------------------------------------------------
  // The agent protocol

  /** The agent behind a token, or undefined when the token is unknown or the agent deleted. */
  async authenticate(token: string): Promise<AgentRow | undefined> {
    if (!token.startsWith(AGENT_TOKEN_PREFIX) || token.length > 512) return undefined;
    return agentsRepo.byTokenHash(this.deps.store.db, hashSecret(token));
  }

  /** Every call of an agent refreshes its row and announces it as a live worker of its queue region. */
  async seen(agent: AgentRow, client: AgentClient): Promise<void> {
    const version = client.version ?? agent.version;
    const hostname = client.hostname ?? agent.hostname;
    await agentsRepo.seen(this.deps.store.db, agent.id, { last_seen_at: nowFloat(), version, hostname });
    await this.deps.registry.announce({
      id: agentWorkerId(agent.id),
      kind: 'agent',
      regions: [agentRegion(agent.id)],
      concurrency: client.concurrency ?? 1,
      agentId: agent.id,
      version: version ?? 'unknown',
      hostname: hostname ?? 'unknown',
      pid: 0,
    });
  }

  /**
   * Long-poll: waits up to `waitMs` for a run queued for this agent, claims it (queued → working,
   * stamped with the agent's worker id) and answers what to run; null when none came or `signal`
   * aborted first. Wakes on the queue's in-process notifications and looks every second (other
   * processes may enqueue).
   */
  async next(
    agent: AgentRow,
    client: AgentClient,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<ClaimedAgentRun | null> {
    const { queue, executor, registry } = this.deps;
    const workerId = agentWorkerId(agent.id);
    const region = agentRegion(agent.id);
    const deadline = Date.now() + waitMs;
    let announced = Date.now();
    while (!signal.aborted) {
      // A waiting agent is alive: its announcement is kept fresh through a long wait.
      if (Date.now() - announced >= registry.liveness.heartbeatMs) {
        await this.seen(agent, client);
        announced = Date.now();
      }
      const job = await queue.claim(workerId, ['run-test'], [region], CLAIM_LEASE_MS);
      if (job?.name === 'run-test') {
        const { runId } = job.payload as { runId: string };
        let claimed: ClaimedAgentRun | null;
        try {
          claimed = await executor.claimRun(runId, workerId, agent.name);
        } catch (error) {
          await queue.fail(job.id, workerId, error instanceof Error ? error.message : String(error));
          throw error;
        }
        await queue.complete(job.id, workerId);
        if (claimed) return claimed;
        continue;
      }
      if (job) {
        // Not a job an agent runs (its region holds only run-test jobs): leave it to its retry policy.
        await queue.fail(job.id, workerId, 'agents run only run-test jobs');
        continue;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      await wake(queue, Math.min(LONG_POLL.pollMs, remaining), signal);
    }
    return null;
  }

  /** Whether the run is still this agent's to run (false once canceled, finished or handed over). */
  async stillRunning(agent: AgentRow, runId: string): Promise<boolean> {
    return (await this.ownRun(agent, runId)) !== undefined;
  }

  /** Stores the outcome of one of the agent's runs; false when the run is no longer its own. */
  async report(agent: AgentRow, runId: string, outcome: RunOutcome): Promise<boolean> {
    const run = await this.ownRun(agent, runId);
    if (!run) return false;
    return this.deps.executor.recordOutcome(run, agentWorkerId(agent.id), outcome);
  }

  /**
   * The agent gives a run back (it is stopping, or never heard of it): the run is delivered once
   * more, or ends canceled with `reason` when it was handed over before.
   */
  async release(agent: AgentRow, runId: string, reason: string): Promise<boolean> {
    const run = await this.ownRun(agent, runId);
    if (!run) return false;
    await this.deps.executor.handOver(run.id, agentWorkerId(agent.id), reason);
    return true;
  }

  /** A subtest of one of the agent's runs, resolved within the run's team (never the agent's word). */
  async resolveSubtest(
    agent: AgentRow,
    runId: string,
    target: SubtestTarget,
    variables: Record<string, string>,
  ): Promise<RunDefinition | { error: string }> {
    const run = await this.ownRun(agent, runId);
    if (!run) throw notRunning(runId);
    return this.deps.definitions.forSubtest(subtestStep(target), parentOf(run), variables);
  }

  /** Stores a subtest run the agent finished; the child is resolved again here, as above. */
  async recordSubtest(
    agent: AgentRow,
    runId: string,
    target: SubtestTarget,
    variables: Record<string, string>,
    outcome: RunOutcome,
  ): Promise<string | { error: string }> {
    const run = await this.ownRun(agent, runId);
    if (!run) throw notRunning(runId);
    const parent = parentOf(run);
    const child = await this.deps.definitions.forSubtest(subtestStep(target), parent, variables);
    if ('error' in child) return child;
    return this.deps.recorder.recordSubtest(child, outcome, parent);
  }

  private async ownRun(agent: AgentRow, runId: string): Promise<TestRunRow | undefined> {
    const run = isUuid(runId) ? await runsRepo.byId(this.deps.store.db, runId) : undefined;
    const own =
      run !== undefined &&
      run.result === 'working' &&
      run.agent_id === agent.id &&
      run.worker_id === agentWorkerId(agent.id);
    return own ? run : undefined;
  }
}

function notRunning(runId: string): AppError {
  return new AppError(
    'conflict',
    `Run ${runId} is not running on this agent (canceled, finished or handed over)`,
  );
}

function subtestStep(target: SubtestTarget): SubtestStep {
  return {
    id: '',
    step_type: 'subtest',
    test_uuid: target.test_uuid,
    environment_uuid: target.environment_uuid ?? '',
    bucket_key: target.bucket_key ?? '',
    assertions: [],
    variables: [],
    params: [],
  };
}

/** What resolving and recording a subtest read of its parent run: its id, bucket, region and agent. */
function parentOf(run: TestRunRow): RunDefinition {
  return {
    runId: run.id,
    test: { id: run.test_id, name: '', steps: [] },
    environment: { id: run.environment_id, name: run.environment_name, settings: DEFAULT_SETTINGS },
    bucket: { key: run.bucket_key, name: '', verify_ssl: true },
    region: run.region,
    agent: run.agent,
    variables: {},
  };
}

/** Resolves after `ms`, on a queue notification, or when `signal` aborts, whichever comes first. */
function wake(queue: JobQueue, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = queue.onNotify(done);
    signal.addEventListener('abort', done, { once: true });
  });
}
