import type { EnvironmentSettings } from '../domain/environments.js';
import { conflict, invalid, notFound } from '../domain/errors.js';
import { TEMPLATE_CHANNELS } from '../domain/integrations.js';
import {
  type NotificationTemplate,
  type PreviewChannel,
  renderNotificationTemplate,
  SAMPLE_VARIABLES,
  templateProblem,
} from '../domain/notification-templates.js';
import { isUuid, newId, newSecret, nowFloat } from '../domain/ids.js';
import type { RetryPolicy } from '../jobs/jobs.js';
import type { JobQueue } from '../jobs/queue.js';
import type { HttpPoster } from '../notify/http.js';
import type { Mail, Mailer } from '../notify/mail.js';
import { pagerDutyEvent, runMail, slackMessage } from '../notify/messages.js';
import { regionLabel, type RoundFacts, type RunFacts, runPayload } from '../notify/payload.js';
import {
  emailDecision,
  historyNeeded,
  integrationDecision,
  integrationRule,
  roundDecision,
} from '../notify/rules.js';
import {
  notificationVariables,
  type Preview,
  previewNotification,
  templatedMail,
  templatedPagerDuty,
  templatedSlack,
  templatedWebhook,
} from '../notify/templates.js';
import type {
  AlertRoundRow,
  NotificationAttemptRow,
  NotificationRow,
  OutboxRow,
  TestRunRow,
} from '../store/database.js';
import { bucketsRepo } from '../store/repositories/buckets.js';
import { environmentsRepo } from '../store/repositories/environments.js';
import { integrationsRepo } from '../store/repositories/integrations.js';
import { notificationsRepo } from '../store/repositories/notifications.js';
import { runsRepo } from '../store/repositories/runs.js';
import { testsRepo } from '../store/repositories/tests.js';
import type { Executor, Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import type { IntegrationService } from './integrations.js';
import {
  type AttemptOutcome,
  type Channel,
  NotificationDelivery,
  type NotificationLog,
} from './notification-delivery.js';
import type { Principal } from './principal.js';
import type { Metrics } from '../observability/metrics.js';
import type { RunDefinitions } from './runs/definitions.js';
import type { TeamService } from './teams.js';
import type { TestService } from './tests.js';

export const OUTBOX_PAGE = { default: 20, max: 100 } as const;

/** The notify-run job: cheap and idempotent, retried a few times if the store hiccups. */
const PLAN_RETRY: RetryPolicy = { limit: 3, delaySeconds: 5, backoff: true };

export interface NotificationSettings {
  publicUrl: string;
  /** Retries of a failed delivery (NOTIFY_RETRIES) and the first delay in seconds (NOTIFY_RETRY_DELAY). */
  retries: number;
  retryDelaySeconds: number;
  mailFrom: string;
  pagerdutyEventsUrl: string;
}

/**
 * Notifications of finished runs (DESIGN §5, docs/notifications.md). A finished run queues one
 * `notify-run` job; that job works out who hears about the run and stores one notification per
 * message with its exact body; each is delivered by its own `deliver-notification` job, retried with
 * backoff, every attempt recorded.
 */
export class NotificationService {
  private readonly delivery: NotificationDelivery;

  constructor(
    private readonly deps: {
      store: Store;
      queue: JobQueue;
      buckets: BucketService;
      tests: TestService;
      teams: TeamService;
      integrations: IntegrationService;
      /** Resolves the effective settings of a run's environment. */
      definitions: Pick<RunDefinitions, 'resolveEnvironment'>;
      poster: HttpPoster;
      /** SMTP; null keeps mails in the outbox. */
      mailer: Mailer | null;
      settings: NotificationSettings;
      /** Counts delivery attempts by channel and outcome. */
      metrics?: Metrics;
    },
  ) {
    this.delivery = new NotificationDelivery(deps);
  }

  /** Lets go of outgoing connections (HTTP keep-alive, SMTP) when the process stops. */
  async close(): Promise<void> {
    this.deps.mailer?.close();
    await this.deps.poster.close();
  }

  // -------------------------------------------------------------------------------------------
  // Planning (the run-finished hook and the notify-run job)

  /**
   * The run-finished handler, awaited in the transaction that ends a run: queues the notify-run
   * job, nothing else.
   */
  readonly onFinished = async (trx: Executor, runId: string): Promise<void> => {
    await this.deps.queue.enqueue(trx, 'notify-run', { runId }, { retry: PLAN_RETRY });
    // The job is visible once the caller commits; the nudge only saves a poll interval.
    setImmediate(() => this.deps.queue.notify());
  };

  /** The notify-run job: stores the run's notifications and queues their deliveries. Idempotent. */
  async planRun(runId: string): Promise<number> {
    const { db } = this.deps.store;
    const finished = await runsRepo.byId(db, runId);
    if (!finished || !['pass', 'fail', 'canceled'].includes(finished.result) || finished.source === 'subtest')
      return 0;
    // A maintenance window covered the run: its notifications are muted.
    if (finished.in_maintenance === 1) return 0;
    const test = await testsRepo.byId(db, finished.test_id);
    const bucket = await bucketsRepo.byKey(db, finished.bucket_key);
    if (!test || !bucket) return 0;
    const environment = await environmentsRepo.byId(db, finished.environment_id);
    const settings = environment ? await this.deps.definitions.resolveEnvironment(db, environment) : null;

    // Under an alert quorum the runs of a round notify together, once, when the last one finishes.
    let run = finished;
    let round: AlertRoundRow | null = null;
    let roundFacts: RoundFacts | undefined;
    if (settings && settings.alert_quorum > 1 && finished.round_id !== null) {
      const decided = await this.decideRound(finished.round_id, settings.alert_quorum);
      if (!decided) return 0;
      ({ run, round, facts: roundFacts } = decided);
    }
    const facts: RunFacts = {
      run,
      test,
      bucket,
      publicUrl: this.deps.settings.publicUrl,
      ...(roundFacts ? { round: roundFacts } : {}),
    };
    const result = (roundFacts?.result ?? run.result) as 'pass' | 'fail' | 'canceled';

    const planned: NotificationRow[] = [];
    const now = nowFloat();
    const add = (channel: Channel, target: string, body: string) =>
      planned.push({
        id: newId(),
        run_id: run.id,
        channel,
        target,
        status: 'pending',
        attempts: 0,
        created_at: now,
        delivered_at: null,
        last_error: null,
        body,
      });

    const variables = (recovered: boolean) => notificationVariables(facts, recovered);
    // Webhooks hear of every finished run, canceled ones included.
    const payload = JSON.stringify(runPayload(facts));
    const urls = new Set([
      ...(settings?.webhooks ?? []),
      ...(run.notification_url ? [run.notification_url] : []),
    ]);
    for (const url of urls) add('webhook', url, payload);

    if (settings) {
      const picked = await this.deps.integrations.picked(
        db,
        bucket.team_id,
        settings.integrations.map((i) => i.id),
      );
      const history = Math.max(
        historyNeeded(settings.emails),
        ...picked.map((integration) =>
          integration.notify_on ? historyNeeded(integrationRule(integration)) : 1,
        ),
      );
      const previous = await notificationsRepo.previousResults(db, run, history);
      const mail = await this.plannedMail(facts, settings, result, previous, bucket.team_id);
      if (mail) add('email', mail.to.map((r) => r.email).join(', '), JSON.stringify(mail));
      for (const integration of picked) {
        const decision = integrationDecision(integration, result, previous);
        if (!decision) continue;
        switch (integration.integration_type) {
          case 'webhook':
            add(
              'integration-webhook',
              integration.id,
              integration.template
                ? templatedWebhook(integration.template, variables(decision === 'resolve'), payload)
                : payload,
            );
            break;
          case 'slack': {
            const message = slackMessage(facts, { recovered: decision === 'resolve' });
            add(
              'slack',
              integration.id,
              JSON.stringify(
                integration.template
                  ? templatedSlack(integration.template, variables(decision === 'resolve'), message)
                  : message,
              ),
            );
            break;
          }
          case 'pagerduty': {
            const event = pagerDutyEvent(facts, {
              routingKey: integration.config.routing_key,
              action: decision === 'trigger' ? 'trigger' : 'resolve',
            });
            add(
              'pagerduty',
              integration.id,
              JSON.stringify(
                integration.template
                  ? templatedPagerDuty(integration.template, variables(decision === 'resolve'), event)
                  : event,
              ),
            );
            break;
          }
          case 'partner-inspector':
            break;
        }
      }
    }

    const retry: RetryPolicy = {
      limit: this.deps.settings.retries,
      delaySeconds: this.deps.settings.retryDelaySeconds,
      backoff: true,
    };
    const queued = await this.deps.store.transaction(async (trx) => {
      // The round's row is written with its notifications: whoever writes it first plans them.
      if (round && !(await notificationsRepo.claimRound(trx, round))) return 0;
      let count = 0;
      for (const row of planned) {
        if (!(await notificationsRepo.insertNew(trx, row))) continue;
        await this.deps.queue.enqueue(trx, 'deliver-notification', { notificationId: row.id }, { retry });
        count++;
      }
      return count;
    });
    if (queued > 0) this.deps.queue.notify();
    return queued;
  }

  /**
   * The decision of a complete round, or null while a run of it is still queued or working (its
   * own notify-run job decides later) and when the round was already decided.
   */
  private async decideRound(
    roundId: string,
    quorum: number,
  ): Promise<{ run: TestRunRow; round: AlertRoundRow; facts: RoundFacts } | null> {
    const { db } = this.deps.store;
    if (await notificationsRepo.roundDecided(db, roundId)) return null;
    const members = await runsRepo.ofRound(db, roundId);
    const decision = roundDecision(
      quorum,
      members.map((member) => ({ region: regionLabel(member), result: member.result })),
    );
    if (!decision.complete || members.length === 0) return null;
    const run =
      members.find((member) => member.result === decision.result) ??
      members.find((member) => member.result === 'fail') ??
      members[0]!;
    const facts: RoundFacts = {
      round_id: roundId,
      quorum,
      result: decision.result,
      failed_regions: decision.failed,
      passed_regions: decision.passed,
    };
    const round: AlertRoundRow = {
      round_id: roundId,
      run_id: run.id,
      quorum,
      result: decision.result,
      failed_regions: JSON.stringify(decision.failed),
      passed_regions: JSON.stringify(decision.passed),
      decided_at: nowFloat(),
    };
    return { run, round, facts };
  }

  private async plannedMail(
    facts: RunFacts,
    settings: EnvironmentSettings,
    result: 'pass' | 'fail' | 'canceled',
    previous: readonly ('pass' | 'fail')[],
    teamId: string,
  ): Promise<Mail | null> {
    const { emails } = settings;
    const decision = emailDecision(emails, result, previous);
    if (!decision.send) return null;
    const candidates = emails.notify_all
      ? await this.deps.teams.members(teamId)
      : emails.recipients.map((r) => ({ email: r.email, name: r.name }));
    const seen = new Set<string>();
    const to = candidates
      .filter((r) => r.email && !seen.has(r.email.toLowerCase()) && seen.add(r.email.toLowerCase()))
      .map((r) => ({ email: r.email, name: r.name }));
    if (to.length === 0) return null;
    const standard = runMail(facts, { recovered: decision.recovered });
    const content = emails.template
      ? templatedMail(emails.template, notificationVariables(facts, decision.recovered), standard)
      : standard;
    return { from: this.deps.settings.mailFrom, to, ...content };
  }

  // -------------------------------------------------------------------------------------------
  // Delivering (the deliver-notification job)

  /**
   * Sends one notification once and records the attempt. Throws when the attempt failed and may
   * succeed later, so the queue retries it; a notification already settled is left alone.
   */
  async deliver(notificationId: string, log?: NotificationLog): Promise<void> {
    const { db } = this.deps.store;
    const notification = await notificationsRepo.byId(db, notificationId);
    if (!notification || notification.status !== 'pending') return;
    const run = await runsRepo.byId(db, notification.run_id);
    const bucket = run ? await bucketsRepo.byKey(db, run.bucket_key) : undefined;
    const startedAt = nowFloat();
    const outcome: AttemptOutcome = bucket
      ? await this.delivery.attempt(notification, bucket, run!, log)
      : {
          ok: false,
          statusCode: null,
          error: 'the run or its bucket was deleted',
          durationMs: 0,
          permanent: true,
        };
    const attempt: NotificationAttemptRow = {
      notification_id: notification.id,
      attempt: notification.attempts + 1,
      started_at: startedAt,
      duration_ms: outcome.durationMs,
      status_code: outcome.statusCode,
      error: outcome.error,
    };
    await this.deps.store.transaction(async (trx) => {
      await notificationsRepo.recordAttempt(trx, attempt, { delivered: outcome.ok, finishedAt: nowFloat() });
      if (!outcome.ok && outcome.permanent)
        await notificationsRepo.markFailed(trx, notification.id, outcome.error ?? 'failed');
    });
    this.deps.metrics?.deliveryAttempted(notification.channel, outcome.ok);
    if (!outcome.ok && !outcome.permanent) throw new Error(outcome.error ?? 'delivery failed');
  }

  /** The last delivery attempt failed: the notification is given up. */
  async markFailed(notificationId: string, reason: string): Promise<void> {
    await notificationsRepo.markFailed(this.deps.store.db, notificationId, reason);
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  /**
   * The run's notifications with every delivery attempt, and the integrations they went through;
   * 404 for a run the caller cannot see.
   */
  async listForRun(
    principal: Principal,
    bucketKey: string,
    testId: string,
    runId: string,
  ): Promise<{
    items: { notification: NotificationRow; attempts: NotificationAttemptRow[] }[];
    integrations: Map<string, { id: string; description: string }>;
  }> {
    const { db } = this.deps.store;
    const { test, bucket } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const run = isUuid(runId) ? await runsRepo.ofTest(db, test.id, runId) : undefined;
    if (!run) throw notFound(`Result ${runId}`);
    const rows = await notificationsRepo.forRun(db, run.id);
    const attempts = await notificationsRepo.attemptsOf(
      db,
      rows.map((row) => row.id),
    );
    const used = await integrationsRepo.someOfTeam(
      db,
      bucket.team_id,
      rows.filter((row) => isUuid(row.target)).map((row) => row.target),
    );
    return {
      items: rows.map((notification) => ({
        notification,
        attempts: attempts.filter((a) => a.notification_id === notification.id),
      })),
      integrations: new Map(used.map((row) => [row.id, { id: row.id, description: row.description }])),
    };
  }

  /** Kept mails of the caller's teams, newest first. */
  outbox(
    principal: Principal,
    page: { count?: number | undefined; before?: number | undefined },
  ): Promise<OutboxRow[]> {
    const count = Math.min(page.count ?? OUTBOX_PAGE.default, OUTBOX_PAGE.max);
    return notificationsRepo.outboxForAccount(this.deps.store.db, principal.accountId, {
      count,
      before: page.before,
    });
  }

  // -------------------------------------------------------------------------------------------
  // Previews

  /**
   * What `channel` would send for the test's newest finished run, written from `template` (checked
   * as on save, 400 naming its field) or the standard message. Without a finished run a template is
   * shown over sample values (`sample: true`); the standard message then answers 409.
   */
  async preview(
    principal: Principal,
    bucketKey: string,
    testId: string,
    input: { channel: PreviewChannel; template?: NotificationTemplate | null | undefined },
  ): Promise<Preview & { channel: PreviewChannel; test_run_id: string | null; sample: boolean }> {
    const { db } = this.deps.store;
    const { test, bucket } = await this.deps.tests.requireTest(principal, bucketKey, testId);
    const template = input.template ?? null;
    const format = input.channel === 'email' ? 'text' : TEMPLATE_CHANNELS[input.channel].format;
    if (template) {
      if (template.subject !== undefined && !['email', 'pagerduty'].includes(input.channel)) {
        throw invalid(
          '/template/subject',
          `a ${input.channel} message has no subject; give only template.body`,
        );
      }
      const problem = templateProblem(template, format);
      if (problem) throw invalid(problem.field, problem.why);
    }
    const last = await runsRepo.lastFinished(db, test.id);
    const run = last ? await runsRepo.byId(db, last.test_run_id) : undefined;
    const facts: RunFacts | null = run
      ? { run, test, bucket, publicUrl: this.deps.settings.publicUrl }
      : null;
    const recovered = false;
    const variables = facts
      ? notificationVariables(facts, recovered)
      : { ...SAMPLE_VARIABLES, test_name: test.name, bucket_name: bucket.name };
    if (template && facts) {
      for (const part of ['subject', 'body'] as const) {
        const text = template[part];
        if (text === undefined) continue;
        const rendered = renderNotificationTemplate(text, variables, part === 'body' ? format : 'text');
        if (!rendered.ok) throw invalid(`/template/${part}`, `${rendered.error} for the newest result`);
      }
    }
    const preview = previewNotification(input.channel, template, variables, facts, {
      mail: (f) => runMail(f, { recovered }),
      slack: (f) => slackMessage(f, { recovered }),
      pagerduty: (f) =>
        pagerDutyEvent(f, { routingKey: '…', action: f.run.result === 'fail' ? 'trigger' : 'resolve' }),
      webhook: (f) => runPayload(f),
    });
    if (!preview)
      throw conflict(`Test ${testId} has no finished result yet; run it once to preview its messages`);
    return { ...preview, channel: input.channel, test_run_id: run?.id ?? null, sample: facts === null };
  }

  // -------------------------------------------------------------------------------------------
  // The bucket's signing secret

  async signingSecret(principal: Principal, bucketKey: string): Promise<string> {
    return (await this.deps.buckets.require(principal, bucketKey)).signing_secret;
  }

  /** A new signing secret; the old one stops signing at once. */
  async rotateSigningSecret(principal: Principal, bucketKey: string): Promise<string> {
    const bucket = await this.deps.buckets.require(principal, bucketKey);
    const secret = newSecret('vgl_ws_');
    await bucketsRepo.update(this.deps.store.db, bucket.key, { signing_secret: secret });
    return secret;
  }
}
