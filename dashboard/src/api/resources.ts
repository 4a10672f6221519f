/**
 * The API's resources as the dashboard reads them (spec §2, DESIGN §3–§4): the static types of the
 * server's own response schemas (type-only imports, so nothing of TypeBox reaches the bundle). The
 * closed lists come from the server's vocabulary, so a picker offers exactly what the API accepts.
 */
import type { Static } from '@sinclair/typebox';
import type { AgentCreatedOut, AgentOut } from '../../../src/api/agents/schemas';
import type {
  ApplicationCreated as ApplicationCreatedOut,
  ApplicationOut,
  ApplicationWithSecretOut,
} from '../../../src/api/applications/schemas';
import type { EnvironmentOut } from '../../../src/api/environments/schemas';
import type { IntegrationOut } from '../../../src/api/integrations/schemas';
import type { PreviewOut } from '../../../src/api/notifications/schemas';
import type { RunOut, StepSummaryOut, TimingsOut } from '../../../src/api/runs/schemas';
import type { ScheduleOut } from '../../../src/api/schedules/schemas';
import type { StepOut } from '../../../src/api/steps/schemas';
import type { InvitationOut, PersonOut, RoleOut } from '../../../src/api/teams/schemas';
import type {
  LastRun as LastRunOut,
  RevisionsOut,
  TestDetail,
  TestListItem as TestListItemOut,
  TestSummaryOut,
} from '../../../src/api/tests/schemas';
import type {
  AUTH_TYPES,
  COMPARISONS,
  NOTIFY_ON,
  RUN_RESULTS,
  RUN_SOURCES,
  SCHEDULE_INTERVALS,
  SIGNATURE_TYPES,
  SOURCES,
  STEP_RESULTS,
  STEP_TYPES,
  TIMEFRAMES,
} from '../../../src/domain/vocabulary';

export type StepType = (typeof STEP_TYPES)[number];
export type Source = (typeof SOURCES)[number];
export type Comparison = (typeof COMPARISONS)[number];
export type AuthType = (typeof AUTH_TYPES)[number];
export type SignatureType = (typeof SIGNATURE_TYPES)[number];
export type NotifyOn = (typeof NOTIFY_ON)[number];
export type Interval = keyof typeof SCHEDULE_INTERVALS;
export type Timeframe = (typeof TIMEFRAMES)[number];
export type RunSource = (typeof RUN_SOURCES)[number];
export type RunResult = (typeof RUN_RESULTS)[number];
export type StepResult = (typeof STEP_RESULTS)[number];

// Served by src/api/account/routes.ts and src/api/buckets/routes.ts, whose schemas are not exported.
export interface Account {
  id: string;
  uuid: string;
  name: string;
  email?: string;
  created_at: number;
  teams: { id: string; uuid: string; name: string }[];
}

export interface Bucket {
  key: string;
  name: string;
  default: boolean;
  verify_ssl: boolean;
  trigger_url: string;
  tests_url: string;
  messages_url: string;
  /** On the traffic origin, like gateway_url. */
  capture_url: string;
  gateway_url: string;
  /** The domain of host-form gateway URLs, when the server has one. */
  gateway_domain: string | null;
  /** The token capture and gateway requests must send, when the bucket requires one. */
  auth_token: string | null;
  team: { id: string; name: string };
  created_at: number;
}

export type Step = Static<typeof StepOut>;
export type RequestStep = Extract<Step, { step_type: 'request' }>;
export type PauseStep = Extract<Step, { step_type: 'pause' }>;
export type SubtestStep = Extract<Step, { step_type: 'subtest' }>;
export type PartnerInspectorStep = Extract<Step, { step_type: 'partner-inspector' }>;
export type ConditionStep = Extract<Step, { step_type: 'condition' }>;
export type EmbeddedStep = ConditionStep['steps'][number];
export type Assertion = RequestStep['assertions'][number];
export type Variable = RequestStep['variables'][number];
export type StepAuth = RequestStep['auth'];

export type Environment = Static<typeof EnvironmentOut>;
export type Schedule = Static<typeof ScheduleOut>;
export type LastRun = NonNullable<Static<typeof LastRunOut>>;
export type TestListItem = Static<typeof TestListItemOut>;
export type Test = Static<typeof TestDetail>;
export type Person = TestListItem['created_by'];
/** One row of `GET /buckets/<key>/test-summaries`: a test with its last run, schedules and recent runs. */
export type TestSummary = Static<typeof TestSummaryOut>;
export type Revisions = Static<typeof RevisionsOut>;
export type Revision = Revisions['test_revisions'][number];

export type Timings = Static<typeof TimingsOut>;
export type StepRunSummary = Static<typeof StepSummaryOut>;
export type AssertionResult = StepRunSummary['assertions'][number];
export type Run = Static<typeof RunOut>;

export type Application = Static<typeof ApplicationOut>;
export type ApplicationWithSecret = Static<typeof ApplicationWithSecretOut>;
export type ApplicationCreated = Static<typeof ApplicationCreatedOut>;
export type Integration = Static<typeof IntegrationOut>;
export type TeamMember = Static<typeof PersonOut>;
export type Role = Static<typeof RoleOut>;
export type Invitation = Static<typeof InvitationOut>;
export type IntegrationType = Integration['integration_type'];
/** What a channel would send: `POST /buckets/<key>/tests/<id>/notification-preview`. */
export type NotificationPreview = Static<typeof PreviewOut>;
export type Agent = Static<typeof AgentOut>;
export type AgentCreated = Static<typeof AgentCreatedOut>;
