import { Type } from '@sinclair/typebox';
import { INTEGRATION_TYPES } from '../../domain/integrations.js';
import { NotificationTemplate } from '../../domain/notification-templates.js';
import { StringEnum } from '../../domain/schema.js';
import { NOTIFY_ON } from '../../domain/vocabulary.js';
import { Nullable } from '../shared/envelope.js';

export const IntegrationOut = Type.Object({
  id: Type.String(),
  uuid: Type.String({ description: 'Same as id (the name clients of the original service read)' }),
  team_id: Type.String(),
  integration_type: StringEnum(INTEGRATION_TYPES),
  type: StringEnum(INTEGRATION_TYPES, { description: 'Same as integration_type' }),
  description: Type.String(),
  config: Type.Record(Type.String(), Type.String(), {
    description: 'Secrets masked: Slack URL host only, keys as their last four characters',
  }),
  created_at: Type.Number(),
  notify_on: Type.Unsafe<(typeof NOTIFY_ON)[number] | null>({
    type: ['string', 'null'],
    enum: [...NOTIFY_ON, null],
    description: "When it notifies of runs, as an environment's e-mail notify_on; null: the type's own rule",
  }),
  notify_threshold: Nullable(Type.Integer({ description: 'With notify_on threshold: the streak of fails' })),
  template: Type.Union([NotificationTemplate, Type.Null()], {
    description: 'The message written from a template (docs/alerting.md); null: the standard message',
  }),
});

export const TeamParams = Type.Object({ team_id: Type.String() });
export const IntegrationParams = Type.Object({ team_id: Type.String(), integration_id: Type.String() });
