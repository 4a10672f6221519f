import type { SessionService } from '../auth/sessions.js';
import type { EgressPolicy } from '../runner/http/egress.js';
import type { AccountService } from '../services/accounts.js';
import type { AgentService } from '../services/agents.js';
import type { ApplicationService } from '../services/applications.js';
import type { BucketService } from '../services/buckets.js';
import type { EnvironmentService } from '../services/environments.js';
import type { IntegrationService } from '../services/integrations.js';
import type { MessageService } from '../services/messages.js';
import type { NotificationService } from '../services/notifications.js';
import type { RestoreService } from '../services/restore.js';
import type { RunService } from '../services/runs.js';
import type { ScheduleService } from '../services/schedules.js';
import type { StepService } from '../services/steps.js';
import type { TestService } from '../services/tests.js';
import type { TeamService } from '../services/teams.js';
import type { TokenService } from '../services/tokens.js';
import type { ViewService } from '../services/views.js';
import type { WorkerRegistry } from '../services/workers.js';
import type { Store } from '../store/store.js';

export interface Services {
  tokens: TokenService;
  accounts: AccountService;
  applications: ApplicationService;
  buckets: BucketService;
  tests: TestService;
  steps: StepService;
  environments: EnvironmentService;
  schedules: ScheduleService;
  runs: RunService;
  messages: MessageService;
  teams: TeamService;
  integrations: IntegrationService;
  notifications: NotificationService;
  /** Live workers, serve processes and agents, and the regions they serve. */
  workers: WorkerRegistry;
  /** Remote agents: their registration and their protocol (docs/agents.md). */
  agents: AgentService;
  /** Restoring revisions of tests and environments. */
  restore: RestoreService;
  /** Saved stream views of the dashboard. */
  views: ViewService;
}

/** What the routes need: the services, the base of every URL they print, and outbound settings. */
export interface ApiContext {
  services: Services;
  store: Store;
  publicUrl: string;
  /** Which addresses the gateway and replay may reach (EGRESS_POLICY). */
  egressPolicy: EgressPolicy;
  /** Response body bytes kept in a message the gateway or replay stores (RESPONSE_BODY_LIMIT). */
  responseBodyLimit: number;
  /** Longest a whole test run may take, in seconds (RUN_TIMEOUT); remote agents are told it. */
  runTimeoutSeconds?: number;
  /** Browser sessions of the web pages (sign-in, account, OAuth consent). */
  sessions: SessionService;
  /** Whether the sign-up page accepts new accounts (SIGNUP). */
  signup: 'open' | 'closed';
  /** The built dashboard (default: the package's `dist/dashboard/`); tests point it elsewhere. */
  dashboardDir?: string;
}
