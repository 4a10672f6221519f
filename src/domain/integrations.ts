/**
 * Integrations (DESIGN §5): services a team notifies (Slack, PagerDuty, a webhook of its own) or
 * drives (the browser-test partner of `partner-inspector` steps). One list of types feeds the union,
 * the API schema and the docs; secrets in a configuration are never shown whole.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';

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

/** The body of `POST /teams/<id>/integrations`: one branch per type, picked by `integration_type`. */
export const IntegrationInput = Type.Unsafe<
  {
    [T in IntegrationType]: { integration_type: T; description?: string; config: IntegrationConfigs[T] };
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
      },
      { additionalProperties: false },
    ),
  ),
});
export type IntegrationInput = Static<typeof IntegrationInput>;

/** An integration with its configuration read back. */
export type Integration = {
  [T in IntegrationType]: {
    id: string;
    team_id: string;
    integration_type: T;
    description: string;
    config: IntegrationConfigs[T];
    created_at: number;
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
