import type { AccountService } from '../services/accounts.js';
import type { BucketService } from '../services/buckets.js';
import type { EnvironmentService } from '../services/environments.js';
import type { MessageService } from '../services/messages.js';
import type { RunService } from '../services/runs.js';
import type { ScheduleService } from '../services/schedules.js';
import type { StepService } from '../services/steps.js';
import type { TestService } from '../services/tests.js';
import type { TokenService } from '../services/tokens.js';
import type { Store } from '../store/store.js';

export interface Services {
  tokens: TokenService;
  accounts: AccountService;
  buckets: BucketService;
  tests: TestService;
  steps: StepService;
  environments: EnvironmentService;
  schedules: ScheduleService;
  runs: RunService;
  messages: MessageService;
}

/** What the routes need: the services and the base of every URL they print. */
export interface ApiContext {
  services: Services;
  store: Store;
  publicUrl: string;
}
