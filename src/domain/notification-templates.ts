/**
 * Notification templates (docs/alerting.md, "Notification templates"): an integration's or an
 * environment's e-mail's own subject and body, written with the step template syntax
 * (docs/templates.md) over a fixed set of placeholders. Variable substitution and the built-in
 * functions only: nothing runs. Pure.
 */
import { type Static, Type } from '@sinclair/typebox';
import { renderTemplate } from './templates.js';

/** The placeholders a notification template may use, the single source of their names. */
export const NOTIFICATION_PLACEHOLDERS = {
  test_name: 'The test name',
  environment_name: "The run's environment",
  region: "The run's region",
  result: 'pass, fail or canceled',
  recovered: '"true" for the first pass after a fail, else "false"',
  failing_assertions:
    'One line per failing assertion: "<step> <source> <property> <comparison>: expected <x>, actual <y>" (empty when none)',
  failing_assertions_count: 'How many assertions failed',
  error: "The run's error, if any (else empty)",
  duration_ms: 'How long the run took, in whole milliseconds',
  started_at: 'When the run started, ISO 8601 UTC',
  finished_at: 'When the run finished, ISO 8601 UTC',
  result_url: 'The link to the result',
  test_url: 'The link to the test',
  bucket_name: "The bucket's name",
} as const;
export type NotificationPlaceholder = keyof typeof NOTIFICATION_PLACEHOLDERS;
export type NotificationVariables = Record<NotificationPlaceholder, string>;

export const TEMPLATE_SIZE = { subject: 1_000, body: 20_000 } as const;

/** Where a channel takes a subject (e-mail and the PagerDuty summary) and where only a body. */
export const NotificationTemplate = Type.Object(
  {
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: TEMPLATE_SIZE.subject })),
    body: Type.String({ minLength: 1, maxLength: TEMPLATE_SIZE.body }),
  },
  { additionalProperties: false },
);
export const BodyTemplate = Type.Object(
  { body: Type.String({ minLength: 1, maxLength: TEMPLATE_SIZE.body }) },
  { additionalProperties: false },
);
export type NotificationTemplate = Static<typeof NotificationTemplate>;

/** The channels a template can be previewed for: e-mail and the notifying integration types. */
export const PREVIEW_CHANNELS = ['email', 'slack', 'pagerduty', 'webhook'] as const;
export type PreviewChannel = (typeof PREVIEW_CHANNELS)[number];

/** How substituted values are written: as they are, JSON string content, or Slack mrkdwn text. */
export type TemplateFormat = 'text' | 'json' | 'slack';

/** Values a template is checked against when it is saved. */
export const SAMPLE_VARIABLES: NotificationVariables = {
  test_name: 'Checkout "v2"',
  environment_name: 'Production',
  region: 'local',
  result: 'fail',
  recovered: 'false',
  failing_assertions: '#1 response_status equal_number: expected 200, actual 500',
  failing_assertions_count: '1',
  error: '',
  duration_ms: '1234',
  started_at: '2026-01-01T00:00:00Z',
  finished_at: '2026-01-01T00:00:01Z',
  result_url: 'https://vigil.example/buckets/b/tests/t/results/r',
  test_url: 'https://vigil.example/buckets/b/tests/t',
  bucket_name: 'Shop',
};

function written(value: string, format: TemplateFormat): string {
  switch (format) {
    case 'text':
      return value;
    case 'json':
      return JSON.stringify(value).slice(1, -1);
    case 'slack':
      return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }
}

export type NotificationRendering = { ok: true; value: string } | { ok: false; error: string };

/**
 * Renders one template. Values are escaped for `format` first, so that with `json` a value always
 * stays inside the JSON string it is written in; a `json` rendering must parse as JSON.
 */
export function renderNotificationTemplate(
  text: string,
  variables: NotificationVariables,
  format: TemplateFormat,
  now?: () => number,
): NotificationRendering {
  const escaped = Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, written(value, format)]),
  );
  const rendered = renderTemplate(text, { variables: escaped, ...(now && { now }) });
  if (!rendered.ok) {
    return {
      ok: false,
      error:
        rendered.variable === undefined
          ? rendered.error
          : `uses the unknown placeholder "${rendered.variable}" (known: ${Object.keys(NOTIFICATION_PLACEHOLDERS).join(', ')})`,
    };
  }
  if (format === 'json') {
    try {
      JSON.parse(rendered.value);
    } catch (error) {
      return { ok: false, error: `is not JSON once rendered (${(error as Error).message})` };
    }
  }
  return rendered;
}

/**
 * Checks a template when it is saved: each part renders against sample values. Answers the field
 * at fault (`template/subject` or `template/body`, under `prefix`) and why, or null.
 */
export function templateProblem(
  template: { subject?: string | undefined; body: string },
  format: TemplateFormat,
  prefix = '',
): { field: string; why: string } | null {
  if (template.subject !== undefined) {
    const subject = renderNotificationTemplate(template.subject, SAMPLE_VARIABLES, 'text');
    if (!subject.ok) return { field: `${prefix}/template/subject`, why: subject.error };
  }
  const body = renderNotificationTemplate(template.body, SAMPLE_VARIABLES, format);
  if (!body.ok) return { field: `${prefix}/template/body`, why: body.error };
  return null;
}
