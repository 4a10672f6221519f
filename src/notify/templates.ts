/**
 * Notifications written from a user's template (docs/alerting.md, "Notification templates"): the
 * placeholders' values for a run, and each channel's document with the template in place of the
 * standard text. Pure. A template that fails to render for a run (a function given a value it
 * cannot take) leaves the standard message in its place.
 */
import { escapeHtml } from '../domain/html.js';
import {
  type NotificationTemplate,
  type PreviewChannel,
  type NotificationVariables,
  renderNotificationTemplate,
  type TemplateFormat,
} from '../domain/notification-templates.js';
import type { MailContent } from './messages.js';
import { type RunFacts, runUrlOf, summaryOf, testUrlOf } from './payload.js';

const shown = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? 'undefined' : JSON.stringify(value);

const iso = (seconds: number | null) =>
  seconds === null ? '' : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The values of the placeholders for a run. */
export function notificationVariables(facts: RunFacts, recovered: boolean): NotificationVariables {
  const { run } = facts;
  const failing = summaryOf(run).requests.flatMap((step, index) =>
    (step.assertions ?? [])
      .filter((a) => a.result === 'fail')
      .map(
        (a) =>
          `#${index + 1} ${a.source}${a.property ? ` ${a.property}` : ''} ${a.comparison}: expected ${shown(a.target_value)}, actual ${shown(a.actual_value)}`,
      ),
  );
  const duration =
    run.started_at !== null && run.finished_at !== null
      ? String(Math.max(0, Math.round((run.finished_at - run.started_at) * 1000)))
      : '';
  return {
    test_name: facts.test.name,
    environment_name: run.environment_name,
    region: run.region,
    result: run.result,
    recovered: String(recovered),
    failing_assertions: failing.join('\n'),
    failing_assertions_count: String(failing.length),
    error: run.error ?? '',
    duration_ms: duration,
    started_at: iso(run.started_at),
    finished_at: iso(run.finished_at),
    result_url: runUrlOf(facts),
    test_url: testUrlOf(facts),
    bucket_name: facts.bucket.name,
  };
}

function rendered(text: string, variables: NotificationVariables, format: TemplateFormat): string | null {
  const result = renderNotificationTemplate(text, variables, format);
  return result.ok ? result.value : null;
}

/** The mail with the template's subject and plain-text body (the HTML part shows that text). */
export function templatedMail(
  template: NotificationTemplate,
  variables: NotificationVariables,
  standard: MailContent,
): MailContent {
  const subject = template.subject ? rendered(template.subject, variables, 'text') : null;
  const text = rendered(template.body, variables, 'text');
  return {
    subject: subject === null ? standard.subject : subject.replace(/[\r\n]+/g, ' '),
    text: text ?? standard.text,
    html:
      text === null
        ? standard.html
        : `<!doctype html>\n<html><body><pre style="font-family:inherit;white-space:pre-wrap">${escapeHtml(text)}</pre></body></html>\n`,
  };
}

/** Slack: the body is the message's mrkdwn text (values escaped for Slack). */
export function templatedSlack(
  template: NotificationTemplate,
  variables: NotificationVariables,
  standard: object,
): object {
  const text = rendered(template.body, variables, 'slack');
  return text === null ? standard : { text };
}

/** PagerDuty: the subject is the event's summary, the body goes to its details as `message`. */
export function templatedPagerDuty<
  T extends { payload: { summary: string; custom_details: Record<string, string> } },
>(template: NotificationTemplate, variables: NotificationVariables, standard: T): T {
  const summary = template.subject ? rendered(template.subject, variables, 'text') : null;
  const body = rendered(template.body, variables, 'text');
  return {
    ...standard,
    payload: {
      ...standard.payload,
      summary: (summary ?? standard.payload.summary).slice(0, 1_024),
      custom_details: body === null ? standard.payload.custom_details : { message: body },
    },
  };
}

/** A webhook: the body, rendered with JSON-escaped values, is the JSON sent; else the standard payload. */
export function templatedWebhook(
  template: NotificationTemplate,
  variables: NotificationVariables,
  standard: string,
): string {
  return rendered(template.body, variables, 'json') ?? standard;
}

/** What a channel's notification of a run would carry: e-mail subject and text, or the JSON sent. */
export interface Preview {
  subject: string | null;
  body: string;
  content_type: 'text/plain' | 'application/json';
}

/**
 * The notification a run would send on `channel`, written from `template` or (null) the standard
 * message. Without facts (no finished run yet) only a template can be shown, over `variables`.
 */
export function previewNotification(
  channel: PreviewChannel,
  template: NotificationTemplate | null,
  variables: NotificationVariables,
  facts: RunFacts | null,
  standard: {
    mail: (facts: RunFacts) => MailContent;
    slack: (facts: RunFacts) => object;
    pagerduty: (facts: RunFacts) => { payload: { summary: string; custom_details: Record<string, string> } };
    webhook: (facts: RunFacts) => object;
  },
): Preview | null {
  const json = (value: unknown): Preview => ({
    subject: null,
    body: JSON.stringify(value, null, 2),
    content_type: 'application/json',
  });
  if (template === null && facts === null) return null;
  switch (channel) {
    case 'email': {
      const base = facts ? standard.mail(facts) : { subject: '', text: '', html: '' };
      const mail = template ? templatedMail(template, variables, base) : base;
      return { subject: mail.subject, body: mail.text, content_type: 'text/plain' };
    }
    case 'slack': {
      const base = facts ? standard.slack(facts) : {};
      return json(template ? templatedSlack(template, variables, base) : base);
    }
    case 'pagerduty': {
      const base = facts ? standard.pagerduty(facts) : { payload: { summary: '', custom_details: {} } };
      return json(template ? templatedPagerDuty(template, variables, base) : base);
    }
    case 'webhook': {
      const base = facts ? JSON.stringify(standard.webhook(facts)) : '{}';
      return json(JSON.parse(template ? templatedWebhook(template, variables, base) : base));
    }
  }
}
