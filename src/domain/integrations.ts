/**
 * Integrations (DESIGN §5): services a team notifies (Slack, PagerDuty, a webhook of its own) or
 * drives (the browser-test partner of `partner-inspector` steps). One list of types feeds the union,
 * the API schema and the docs; secrets in a configuration are never shown whole.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { BodyTemplate, NotificationTemplate, type TemplateFormat } from './notification-templates.js';
import { NOTIFY_ON } from './vocabulary.js';

export const INTEGRATION_TYPES = ['slack', 'pagerduty', 'webhook', 'partner-inspector'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

const HttpUrl = (description: string) =>
  Type.String({ format: 'uri', pattern: '^https?://[^\\s]+$', maxLength: 2_048, description });

export const SlackConfig = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      pattern: '^https://[^\\s]+$',
      maxLength: 2_048,
      description: 'Incoming webhook URL (https)',
    }),
  },
  { additionalProperties: false },
);
export const PagerDutyConfig = Type.Object(
  {
    routing_key: Type.String({
      pattern: '^[A-Za-z0-9]{1,64}$',
      description: 'Events API v2 integration (routing) key: 1–64 letters and digits',
    }),
  },
  { additionalProperties: false },
);
export const WebhookConfig = Type.Object(
  {
    url: HttpUrl('Receives the run payload of DESIGN §5'),
    secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Signs the payload instead of the bucket signing secret',
      }),
    ),
  },
  { additionalProperties: false },
);
export const PartnerConfig = Type.Object(
  {
    base_url: HttpUrl("Base URL of the partner's API"),
    api_key: Type.String({ minLength: 1, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' }),
  },
  { additionalProperties: false },
);

export interface IntegrationConfigs {
  slack: Static<typeof SlackConfig>;
  pagerduty: Static<typeof PagerDutyConfig>;
  webhook: Static<typeof WebhookConfig>;
  'partner-inspector': Static<typeof PartnerConfig>;
}

const CONFIG_SCHEMAS: { [T in IntegrationType]: TSchema } = {
  slack: SlackConfig,
  pagerduty: PagerDutyConfig,
  webhook: WebhookConfig,
  'partner-inspector': PartnerConfig,
};

const Description = Type.String({ maxLength: 1_000 });

/** The integration types that notify of runs, and so take `notify_on`. */
export const NOTIFYING_TYPES = [
  'slack',
  'pagerduty',
  'webhook',
] as const satisfies readonly IntegrationType[];
type NotifyingType = (typeof NOTIFYING_TYPES)[number];

/** When a notifying integration hears of a run: the values of an environment's e-mail `notify_on`. */
export type IntegrationNotifyOn = (typeof NOTIFY_ON)[number];

const notifyProperties = {
  notify_on: Type.Optional(
    Type.Unsafe<IntegrationNotifyOn | null>({
      type: ['string', 'null'],
      enum: [...NOTIFY_ON, null],
      description: `${NOTIFY_ON.join(', ')} as for e-mail; null: the type's own rule`,
    }),
  ),
  notify_threshold: Type.Optional(
    Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 1_000,
      description: 'With notify_on threshold: the streak of fails that notifies (null counts as 1)',
    }),
  ),
};

/** How each notifying type writes a template's values, and whether it takes a subject. */
export const TEMPLATE_CHANNELS: { [T in NotifyingType]: { format: TemplateFormat; subject: boolean } } = {
  slack: { format: 'slack', subject: false },
  pagerduty: { format: 'text', subject: true },
  webhook: { format: 'json', subject: false },
};

const templateProperty = (type: NotifyingType) => ({
  template: Type.Optional(
    Type.Union([TEMPLATE_CHANNELS[type].subject ? NotificationTemplate : BodyTemplate, Type.Null()], {
      description: 'The message written from a template (docs/alerting.md); null: the standard message',
    }),
  ),
});

export const isNotifying = (type: IntegrationType): type is NotifyingType =>
  (NOTIFYING_TYPES as readonly IntegrationType[]).includes(type);

/** The body of `POST /teams/<id>/integrations`: one branch per type, picked by `integration_type`. */
export const IntegrationInput = Type.Unsafe<
  {
    [T in IntegrationType]: {
      integration_type: T;
      description?: string;
      config: IntegrationConfigs[T];
      notify_on?: IntegrationNotifyOn | null;
      notify_threshold?: number | null;
      template?: NotificationTemplate | null;
    };
  }[IntegrationType]
>({
  type: 'object',
  required: ['integration_type'],
  discriminator: { propertyName: 'integration_type' },
  oneOf: INTEGRATION_TYPES.map((type) =>
    Type.Object(
      {
        integration_type: Type.Literal(type),
        description: Type.Optional(Description),
        config: CONFIG_SCHEMAS[type],
        ...(isNotifying(type) && { ...notifyProperties, ...templateProperty(type) }),
      },
      { additionalProperties: false },
    ),
  ),
});
export type IntegrationInput = Static<typeof IntegrationInput>;

/** The body of `PUT /teams/<id>/integrations/<id>`: what may change after creation. */
export const IntegrationPatch = Type.Object(
  {
    description: Type.Optional(Description),
    ...notifyProperties,
    template: Type.Optional(
      Type.Union([NotificationTemplate, Type.Null()], {
        description: 'The message written from a template; null: the standard message',
      }),
    ),
  },
  { additionalProperties: false },
);
export type IntegrationPatch = Static<typeof IntegrationPatch>;

/** An integration with its configuration read back. */
export type Integration = {
  [T in IntegrationType]: {
    id: string;
    team_id: string;
    integration_type: T;
    description: string;
    config: IntegrationConfigs[T];
    created_at: number;
    notify_on: IntegrationNotifyOn | null;
    notify_threshold: number | null;
    template: NotificationTemplate | null;
  };
}[IntegrationType];

/** `…abcd`: the last four characters of a secret. */
export const lastFour = (secret: string): string => `…${secret.slice(-4)}`;

/** A URL with only its scheme and host left, `https://hooks.slack.com/…`. */
export function urlHostOnly(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '…';
  }
}

/** The configuration as output shows it: secrets masked. */
export function maskedConfig(integration: Integration): Record<string, string> {
  switch (integration.integration_type) {
    case 'slack':
      return { url: urlHostOnly(integration.config.url) };
    case 'pagerduty':
      return { routing_key: lastFour(integration.config.routing_key) };
    case 'webhook':
      return {
        url: integration.config.url,
        ...(integration.config.secret !== undefined && { secret: lastFour(integration.config.secret) }),
      };
    case 'partner-inspector':
      return { base_url: integration.config.base_url, api_key: lastFour(integration.config.api_key) };
  }
}
