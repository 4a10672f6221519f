import type { Integration } from '../../domain/integrations.js';
import type { Channel } from '../../services/notification-delivery.js';
import type { Principal } from '../../services/principal.js';
import { visibleEmail } from '../../services/principal.js';
import type { NotificationAttemptRow, NotificationRow, OutboxRow } from '../../store/database.js';

const INTEGRATION_CHANNELS = new Set(['slack', 'pagerduty', 'integration-webhook']);

export function presentNotification(
  { notification, attempts }: { notification: NotificationRow; attempts: NotificationAttemptRow[] },
  integrations: ReadonlyMap<string, Pick<Integration, 'id' | 'description'>>,
) {
  const viaIntegration = INTEGRATION_CHANNELS.has(notification.channel);
  const integration = viaIntegration ? integrations.get(notification.target) : undefined;
  return {
    id: notification.id,
    channel: notification.channel as Channel,
    target: notification.target,
    integration: viaIntegration
      ? { id: notification.target, description: integration?.description ?? '(deleted)' }
      : null,
    status: notification.status as 'pending' | 'delivered' | 'failed',
    attempts: notification.attempts,
    created_at: notification.created_at,
    delivered_at: notification.delivered_at,
    last_error: notification.last_error,
    deliveries: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at,
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
    })),
  };
}

export function presentOutbox(row: OutboxRow, principal: Principal) {
  const recipients = JSON.parse(row.recipients) as { email: string; name?: string }[];
  return {
    id: row.id,
    team_id: row.team_id,
    run_id: row.run_id,
    recipients: recipients.map((r) => ({ email: visibleEmail(principal, r.email), name: r.name ?? '' })),
    subject: row.subject,
    text: row.text,
    html: row.html,
    created_at: row.created_at,
  };
}
