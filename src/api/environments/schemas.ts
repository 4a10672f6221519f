import { Type } from '@sinclair/typebox';
import { SIGNATURE_TYPES } from '../../domain/auth.js';
import { EnvironmentInput, EnvironmentPatch, NOTIFY_ON } from '../../domain/environments.js';
import { NotificationTemplate } from '../../domain/notification-templates.js';
import { StringEnum } from '../../domain/schema.js';
import { Nullable } from '../shared/envelope.js';

export { EnvironmentInput, EnvironmentPatch };

export const AuthOut = Type.Object(
  {
    auth_type: Type.Optional(Type.String()),
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    access_token: Type.Optional(Type.String()),
    consumer_secret: Type.Optional(Type.String()),
    consumer_key: Type.Optional(Type.String()),
    token_secret: Type.Optional(Type.String()),
    signature_type: Type.Optional(StringEnum(SIGNATURE_TYPES)),
  },
  { description: 'Step auth (spec 2.5); an empty object means no authentication' },
);

/** An environment as served (spec 2.3). */
export const EnvironmentOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  test_id: Nullable(Type.String()),
  parent_environment_id: Nullable(Type.String()),
  auth: AuthOut,
  emails: Type.Object({
    notify_all: Type.Boolean(),
    notify_on: StringEnum(NOTIFY_ON),
    notify_threshold: Nullable(Type.Integer()),
    recipients: Type.Array(Type.Object({ email: Type.String(), name: Type.String(), id: Type.String() })),
    template: Type.Optional(NotificationTemplate),
  }),
  initial_variables: Type.Record(Type.String(), Type.String()),
  integrations: Type.Array(
    Type.Object({ description: Type.String(), integration_type: Type.String(), id: Type.String() }),
  ),
  preserve_cookies: Type.Boolean(),
  regions: Type.Array(Type.String()),
  remote_agents: Type.Array(Type.Object({ name: Type.String(), uuid: Type.String() })),
  retry_on_failure: Type.Boolean(),
  retry_transport_errors: Nullable(
    Type.Object({ attempts: Type.Integer(), backoff_ms: Type.Integer() }, { description: 'null: no resend' }),
  ),
  alert_quorum: Type.Integer(),
  stop_on_failure: Type.Boolean(),
  script: Type.String(),
  verify_ssl: Type.Boolean(),
  client_certificate: Type.String(),
  webhooks: Nullable(Type.Array(Type.String())),
  headers: Type.Record(Type.String(), Type.Array(Type.String()), {
    description: 'Sent with every request step of a run; a header the step sets itself wins',
  }),
  version: Type.String({ description: 'Format version of the answer' }),
  exported_at: Type.Integer({ description: 'When this version was written, Unix seconds' }),
});

export const EnvironmentParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  environment_id: Type.String(),
});
export const SharedEnvironmentParams = Type.Object({
  bucket_key: Type.String(),
  environment_id: Type.String(),
});
