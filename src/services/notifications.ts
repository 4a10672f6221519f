import type { EnvironmentSettings } from '../domain/environments.js';
import { notFound } from '../domain/errors.js';
import { isUuid, newId, newSecret, nowFloat } from '../domain/ids.js';
import type { RetryPolicy } from '../jobs/jobs.js';
import type { JobQueue } from '../jobs/queue.js';
import { type HttpPoster, type PostOutcome, signature } from '../notify/http.js';
import type { Mail, Mailer } from '../notify/mail.js';
import { pagerDutyEvent, runMail, slackMessage } from '../notify/messages.js';
import { type RunFacts, runPayload } from '../notify/payload.js';
import { alertDecision, emailDecision, historyNeeded } from '../notify/rules.js';
import type {
  EnvironmentRow,
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
import { type IntegrationService, integrationOf } from './integrations.js';
import type { Principal } from './principal.js';
import type { TeamService } from './teams.js';
import type { TestService } from './tests.js';

export const CHANNELS = ['webhook', 'email', 'slack', 'pagerduty', 'integration-webhook'] as const;
export type Channel = (typeof CHANNELS)[number];

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

export interface NotificationLog {
  info(obj: object, msg: string): void;
}

type AttemptOutcome = Pick<PostOutcome, 'ok' | 'statusCode' | 'error' | 'durationMs'> & {
  /** Retrying cannot help (egress refusal, deleted integration): the notification fails now. */
  permanent: boolean;
};

/**
 * Notifications of finished runs (DESIGN §5, docs/notifications.md). A finished run queues one
 * `notify-run` job; that job works out who hears about the run and stores one notification per
 * message with its exact body; each is delivered by its own `deliver-notification` job, retried with
 * backoff, every attempt recorded.
 */
export class NotificationService {
  constructor(
    private readonly deps: {
      store: Store;
      queue: JobQueue;
      buckets: BucketService;
      tests: TestService;
      teams: TeamService;
      integrations: IntegrationService;
      /** The effective settings of an environment (RunService.resolveEnvironment). */
      resolveEnvironment: (db: Executor, environment: EnvironmentRow) => Promise<EnvironmentSettings>;
      poster: HttpPoster;
      /** SMTP; null keeps mails in the outbox. */
      mailer: Mailer | null;
      settings: NotificationSettings;
    },
  ) {}

  /** Lets go of outgoing connections (HTTP keep-alive, SMTP) when the process stops. */
  async close(): Promise<void> {
    this.deps.mailer?.close();
    await this.deps.poster.close();
  }

  // -------------------------------------------------------------------------------------------
  // Planning (the run-finished hook and the notify-run job)

  /** Called in the transaction that ends a run: queues the notify-run job, nothing else. */
  async onFinished(trx: Executor, runId: string): Promise<void> {
    await this.deps.queue.enqueue(trx, 'notify-run', { runId }, { retry: PLAN_RETRY });
    // The job is visible once the caller commits; the nudge only saves a poll interval.
    setImmediate(() => this.deps.queue.notify());
  }

  /** The notify-run job: stores the run's notifications and queues their deliveries. Idempotent. */
  async planRun(runId: string): Promise<number> {
    const { db } = this.deps.store;
    const run = await runsRepo.byId(db, runId);
    if (!run || !['pass', 'fail', 'canceled'].includes(run.result) || run.source === 'subtest') return 0;
    const test = await testsRepo.byId(db, run.test_id);
    const bucket = await bucketsRepo.byKey(db, run.bucket_key);
    if (!test || !bucket) return 0;
    const environment = await environmentsRepo.byId(db, run.environment_id);
    const settings = environment ? await this.deps.resolveEnvironment(db, environment) : null;
    const facts: RunFacts = { run, test, bucket, publicUrl: this.deps.settings.publicUrl };
    const result = run.result as 'pass' | 'fail' | 'canceled';

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

    // Webhooks hear of every finished run, canceled ones included.
    const payload = JSON.stringify(runPayload(facts));
    const urls = new Set([
      ...(settings?.webhooks ?? []),
      ...(run.notification_url ? [run.notification_url] : []),
    ]);
    for (const url of urls) add('webhook', url, payload);

    if (settings) {
      const previous = await notificationsRepo.previousResults(db, run, historyNeeded(settings.emails));
      const mail = await this.plannedMail(facts, settings, result, previous, bucket.team_id);
      if (mail) add('email', mail.to.map((r) => r.email).join(', '), JSON.stringify(mail));
      const alert = alertDecision(result, previous);
      const picked = await this.deps.integrations.picked(
        db,
        bucket.team_id,
        settings.integrations.map((i) => i.id),
      );
      for (const integration of picked) {
        switch (integration.integration_type) {
          case 'webhook':
            add('integration-webhook', integration.id, payload);
            break;
          case 'slack':
            if (alert)
              add(
                'slack',
                integration.id,
                JSON.stringify(slackMessage(facts, { recovered: alert === 'resolve' })),
              );
            break;
          case 'pagerduty':
            if (alert) {
              const event = pagerDutyEvent(facts, {
                routingKey: integration.config.routing_key,
                action: alert,
              });
              add('pagerduty', integration.id, JSON.stringify(event));
            }
            break;
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
    return { from: this.deps.settings.mailFrom, to, ...runMail(facts, { recovered: decision.recovered }) };
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
      ? await this.attempt(notification, bucket, run!, log)
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
    if (!outcome.ok && !outcome.permanent) throw new Error(outcome.error ?? 'delivery failed');
  }

  /** The last delivery attempt failed: the notification is given up. */
  async markFailed(notificationId: string, reason: string): Promise<void> {
    await notificationsRepo.markFailed(this.deps.store.db, notificationId, reason);
  }

  private async attempt(
    notification: NotificationRow,
    bucket: { team_id: string; signing_secret: string },
    run: TestRunRow,
    log: NotificationLog | undefined,
  ): Promise<AttemptOutcome> {
    const channel = notification.channel as Channel;
    if (channel === 'email') return this.sendMail(notification, bucket.team_id, run, log);
    if (channel === 'webhook')
      return this.postSigned(notification, notification.target, bucket.signing_secret);
    const row = await integrationsRepo.ofTeam(this.deps.store.db, bucket.team_id, notification.target);
    const integration = row ? integrationOf(row) : undefined;
    if (!integration) {
      return {
        ok: false,
        statusCode: null,
        error: `integration ${notification.target} was deleted`,
        durationMs: 0,
        permanent: true,
      };
    }
    const json = { 'content-type': 'application/json' };
    switch (integration.integration_type) {
      case 'webhook':
        return this.postSigned(
          notification,
          integration.config.url,
          integration.config.secret ?? bucket.signing_secret,
        );
      case 'slack':
        return asAttempt(await this.deps.poster.post(integration.config.url, notification.body, json));
      case 'pagerduty':
        return asAttempt(
          await this.deps.poster.post(this.deps.settings.pagerdutyEventsUrl, notification.body, json),
        );
      case 'partner-inspector':
        return {
          ok: false,
          statusCode: null,
          error: 'a partner integration sends no notifications',
          durationMs: 0,
          permanent: true,
        };
    }
  }

  private async postSigned(
    notification: NotificationRow,
    url: string,
    secret: string,
  ): Promise<AttemptOutcome> {
    const outcome = await this.deps.poster.post(url, notification.body, {
      'content-type': 'application/json',
      'x-vigil-signature': signature(notification.body, secret),
      'x-vigil-event': 'run.finished',
      'x-vigil-delivery': notification.id,
    });
    return asAttempt(outcome);
  }

  private async sendMail(
    notification: NotificationRow,
    teamId: string,
    run: TestRunRow,
    log: NotificationLog | undefined,
  ): Promise<AttemptOutcome> {
    const mail = JSON.parse(notification.body) as Mail;
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
    if (!this.deps.mailer) {
      const row: OutboxRow = {
        id: newId(),
        team_id: teamId,
        run_id: run.id,
        recipients: JSON.stringify(mail.to),
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        created_at: nowFloat(),
      };
      await notificationsRepo.insertOutbox(this.deps.store.db, row);
      log?.info(
        { outboxId: row.id, runId: run.id, recipients: mail.to.length },
        'no SMTP_URL: kept the notification e-mail in the outbox (GET /account/outbox)',
      );
      return { ok: true, statusCode: null, error: null, durationMs: elapsed(), permanent: false };
    }
    try {
      await this.deps.mailer.send(mail);
      return { ok: true, statusCode: null, error: null, durationMs: elapsed(), permanent: false };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        statusCode: null,
        error: `SMTP: ${message}`,
        durationMs: elapsed(),
        permanent: false,
      };
    }
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

function asAttempt(outcome: PostOutcome): AttemptOutcome {
  return {
    ok: outcome.ok,
    statusCode: outcome.statusCode,
    error: outcome.error,
    durationMs: outcome.durationMs,
    permanent: outcome.refused,
  };
}
