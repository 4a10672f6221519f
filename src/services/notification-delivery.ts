import { newId, nowFloat } from '../domain/ids.js';
import { type HttpPoster, type PostOutcome, signature } from '../notify/http.js';
import type { Mail, Mailer } from '../notify/mail.js';
import type { NotificationRow, OutboxRow, TestRunRow } from '../store/database.js';
import { integrationsRepo } from '../store/repositories/integrations.js';
import { notificationsRepo } from '../store/repositories/notifications.js';
import type { Store } from '../store/store.js';
import { integrationOf } from './integrations.js';

export const CHANNELS = ['webhook', 'email', 'slack', 'pagerduty', 'integration-webhook'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface NotificationLog {
  info(obj: object, msg: string): void;
}

export type AttemptOutcome = Pick<PostOutcome, 'ok' | 'statusCode' | 'error' | 'durationMs'> & {
  /** Retrying cannot help (egress refusal, deleted integration): the notification fails now. */
  permanent: boolean;
};

/**
 * One delivery attempt of a stored notification over its channel: a signed webhook, a mail (or the
 * outbox without SMTP), Slack or PagerDuty through the team's integration.
 */
export class NotificationDelivery {
  constructor(
    private readonly deps: {
      store: Store;
      poster: HttpPoster;
      /** SMTP; null keeps mails in the outbox. */
      mailer: Mailer | null;
      settings: { pagerdutyEventsUrl: string };
    },
  ) {}

  /** Sends `notification` once; answers how the attempt went. */
  async attempt(
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
