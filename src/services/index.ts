import type { AccountService } from './accounts.js';
import type { AgentService } from './agents.js';
import type { ApplicationService } from './applications.js';
import type { BucketService } from './buckets.js';
import type { IdempotencyService } from './idempotency.js';
import type { ImportService } from './imports.js';
import type { EnvironmentService } from './environments.js';
import type { IntegrationService } from './integrations.js';
import type { MessageService } from './messages.js';
import type { NotificationService } from './notifications.js';
import type { OAuthService } from './oauth.js';
import type { RestoreService } from './restore.js';
import type { RunExecutor } from './runs/executor.js';
import type { RunLauncher } from './runs/launcher.js';
import type { RunResults } from './runs/results.js';
import type { MaintenanceService } from './maintenance.js';
import type { ScheduleService } from './schedules.js';
import type { StatusPageService } from './status-pages.js';
import type { StepService } from './steps.js';
import type { TestService } from './tests.js';
import type { TeamService } from './teams.js';
import type { TokenService } from './tokens.js';
import type { TrafficService } from './traffic.js';
import type { ViewService } from './views.js';
import type { WorkerRegistry } from './workers.js';

/** The services the composition root (main.ts `createServices`) builds, one per resource. */
export interface Services {
  tokens: TokenService;
  accounts: AccountService;
  applications: ApplicationService;
  buckets: BucketService;
  tests: TestService;
  /** Tests made from Postman, OpenAPI, curl, HAR files and captured messages (docs/import.md). */
  imports: ImportService;
  steps: StepService;
  environments: EnvironmentService;
  schedules: ScheduleService;
  maintenance: MaintenanceService;
  /** Starting runs: triggers, manual runs. */
  launcher: RunLauncher;
  /** Reading and canceling results. */
  results: RunResults;
  /** Executing queued runs: the worker's `run-test` job, hand-overs. */
  executor: RunExecutor;
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
  /** Public status pages of buckets (docs/alerting.md). */
  statusPages: StatusPageService;
  /** Saved stream views of the dashboard. */
  views: ViewService;
  /** First answers to requests sent with an Idempotency-Key. */
  idempotency: IdempotencyService;
  /** The OAuth 2.0 web application flow: codes, the code exchange, revocation (docs/oauth.md). */
  oauth: OAuthService;
  /** Capture URLs, the gateway and replay (docs/capture.md). */
  traffic: TrafficService;
}
