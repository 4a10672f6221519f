import { Type } from '@sinclair/typebox';
import { NotificationTemplate, PREVIEW_CHANNELS } from '../../domain/notification-templates.js';
import { StringEnum } from '../../domain/schema.js';
import { CHANNELS } from '../../services/notification-delivery.js';
import { OUTBOX_PAGE } from '../../services/notifications.js';
import { Nullable } from '../shared/envelope.js';

export const DeliveryOut = Type.Object({
  attempt: Type.Integer(),
  started_at: Type.Number({ description: 'Unix time, seconds' }),
  duration_ms: Type.Number(),
  status_code: Nullable(
    Type.Integer({ description: "The receiver's HTTP status; null for e-mail or no answer" }),
  ),
  error: Nullable(Type.String()),
});

export const NotificationOut = Type.Object({
  id: Type.String({ description: 'Also sent as X-Vigil-Delivery' }),
  channel: StringEnum(CHANNELS),
  target: Type.String({
    description: 'The webhook URL, the e-mail addresses, or the integration id (never its URL or key)',
  }),
  integration: Nullable(
    Type.Object({ id: Type.String(), description: Type.String() }, { description: 'For integrations' }),
  ),
  status: StringEnum(['pending', 'delivered', 'failed'] as const),
  attempts: Type.Integer(),
  created_at: Type.Number(),
  delivered_at: Nullable(Type.Number()),
  last_error: Nullable(Type.String()),
  deliveries: Type.Array(DeliveryOut),
});

export const SigningSecretOut = Type.Object({
  signing_secret: Type.String({ description: 'HMAC-SHA256 key of X-Vigil-Signature' }),
});

export const OutboxOut = Type.Object({
  id: Type.String(),
  team_id: Type.String(),
  run_id: Nullable(Type.String()),
  recipients: Type.Array(
    Type.Object({
      email: Type.String({ description: 'Empty unless the token has the account:email scope' }),
      name: Type.String(),
    }),
  ),
  subject: Type.String(),
  text: Type.String(),
  html: Type.String(),
  created_at: Type.Number({ description: 'Unix time, seconds' }),
});

export const OutboxQuery = Type.Object({
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Default ${OUTBOX_PAGE.default}, at most ${OUTBOX_PAGE.max} (larger values are capped)`,
    }),
  ),
  before: Type.Optional(
    Type.Number({
      minimum: 0,
      description: 'Only mails kept before this Unix time (created_at of the last seen)',
    }),
  ),
});

export const PreviewInput = Type.Object(
  {
    channel: StringEnum(PREVIEW_CHANNELS, { description: 'Whose message: e-mail or an integration type' }),
    template: Type.Optional(
      Type.Union([NotificationTemplate, Type.Null()], {
        description: 'The template to try; absent or null: the standard message',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PreviewOut = Type.Object({
  channel: StringEnum(PREVIEW_CHANNELS),
  subject: Nullable(Type.String({ description: 'E-mail subject or PagerDuty summary' })),
  body: Type.String({ description: 'The mail text, or the JSON document sent' }),
  content_type: StringEnum(['text/plain', 'application/json'] as const),
  test_run_id: Nullable(Type.String({ description: 'The result rendered; null: sample values' })),
  sample: Type.Boolean({ description: 'No finished result yet: rendered over sample values' }),
});
