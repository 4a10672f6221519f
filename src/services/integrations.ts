import { invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, nowFloat } from '../domain/ids.js';
import {
  type Integration,
  type IntegrationInput,
  type IntegrationPatch,
  type IntegrationType,
  isNotifying,
  NOTIFYING_TYPES,
  TEMPLATE_CHANNELS,
} from '../domain/integrations.js';
import { type NotificationTemplate, templateProblem } from '../domain/notification-templates.js';
import type { HttpPoster } from '../notify/http.js';
import type { PartnerOutcome, PartnerPort } from '../runner/context.js';
import type { IntegrationRow } from '../store/database.js';
import { bucketsRepo } from '../store/repositories/buckets.js';
import { integrationsRepo } from '../store/repositories/integrations.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';
import type { TeamService } from './teams.js';

/** How long the partner may take for one browser test. */
export const PARTNER_TIMEOUT_MS = 5 * 60_000;

/** The integration with its configuration parsed. */
export function integrationOf(row: IntegrationRow): Integration {
  return {
    id: row.id,
    team_id: row.team_id,
    integration_type: row.integration_type as IntegrationType,
    description: row.description,
    config: JSON.parse(row.config) as never,
    created_at: row.created_at,
    notify_on: row.notify_on as Integration['notify_on'],
    notify_threshold: row.notify_threshold,
    template: row.template === null ? null : (JSON.parse(row.template) as NotificationTemplate),
  } as Integration;
}

/**
 * A template as stored (JSON), after checking that its type takes it and that it renders; 400
 * naming `/template/subject` or `/template/body` otherwise. Undefined and null stay as they are.
 */
function checkedTemplate(
  type: IntegrationType,
  template: NotificationTemplate | null | undefined,
): string | null | undefined {
  if (template === undefined || template === null) return template;
  if (!isNotifying(type)) throw invalid('/template', `a ${type} integration does not notify of runs`);
  const channel = TEMPLATE_CHANNELS[type];
  if (template.subject !== undefined && !channel.subject) {
    throw invalid('/template/subject', `a ${type} message has no subject; give only template.body`);
  }
  const problem = templateProblem(template, channel.format);
  if (problem) throw invalid(problem.field, problem.why);
  return JSON.stringify(template);
}

/** Integrations of a team (DESIGN §5): members read them; writing needs bucket:write (the route). */
export class IntegrationService {
  constructor(private readonly deps: { store: Store; teams: TeamService }) {}

  async list(principal: Principal, teamId: string): Promise<Integration[]> {
    await this.deps.teams.requireMember(principal, teamId);
    return (await integrationsRepo.listForTeam(this.deps.store.db, teamId)).map(integrationOf);
  }

  async get(principal: Principal, teamId: string, id: string): Promise<Integration> {
    await this.deps.teams.requireMember(principal, teamId);
    const row = isUuid(id) ? await integrationsRepo.ofTeam(this.deps.store.db, teamId, id) : undefined;
    if (!row) throw notFound(`Integration ${id}`);
    return integrationOf(row);
  }

  async create(principal: Principal, teamId: string, input: IntegrationInput): Promise<Integration> {
    await this.deps.teams.requireMember(principal, teamId);
    const row: IntegrationRow = {
      id: newId(),
      team_id: teamId,
      integration_type: input.integration_type,
      description: input.description ?? '',
      config: JSON.stringify(input.config),
      created_at: nowFloat(),
      created_by: principal.accountId,
      notify_on: ('notify_on' in input && input.notify_on) || null,
      notify_threshold: ('notify_threshold' in input && input.notify_threshold) || null,
      template:
        checkedTemplate(input.integration_type, 'template' in input ? input.template : undefined) ?? null,
    };
    await integrationsRepo.insert(this.deps.store.db, row);
    return integrationOf(row);
  }

  /** Changes the description or when the integration notifies; the configuration stays. */
  async update(
    principal: Principal,
    teamId: string,
    id: string,
    patch: IntegrationPatch,
  ): Promise<Integration> {
    const current = await this.get(principal, teamId, id);
    const notifies = (NOTIFYING_TYPES as readonly IntegrationType[]).includes(current.integration_type);
    for (const field of ['notify_on', 'notify_threshold'] as const) {
      if (!notifies && patch[field] !== undefined && patch[field] !== null) {
        throw invalid(`/${field}`, `a ${current.integration_type} integration does not notify of runs`);
      }
    }
    const template =
      patch.template === undefined
        ? current.template
        : patch.template === null
          ? null
          : (JSON.parse(checkedTemplate(current.integration_type, patch.template)!) as NotificationTemplate);
    const changes = {
      description: patch.description ?? current.description,
      notify_on: patch.notify_on === undefined ? current.notify_on : patch.notify_on,
      notify_threshold:
        patch.notify_threshold === undefined ? current.notify_threshold : patch.notify_threshold,
    };
    await integrationsRepo.update(this.deps.store.db, teamId, id, {
      ...changes,
      template: template === null ? null : JSON.stringify(template),
    });
    return { ...current, ...changes, template } as Integration;
  }

  async delete(principal: Principal, teamId: string, id: string): Promise<void> {
    await this.deps.teams.requireMember(principal, teamId);
    if (!isUuid(id) || !(await integrationsRepo.delete(this.deps.store.db, teamId, id))) {
      throw notFound(`Integration ${id}`);
    }
  }

  /** The integrations an environment names that exist and belong to the team, in its order. */
  async picked(db: Executor, teamId: string, ids: readonly string[]): Promise<Integration[]> {
    const valid = [...new Set(ids.filter(isUuid))];
    const rows = await integrationsRepo.someOfTeam(db, teamId, valid);
    const byId = new Map(rows.map((row) => [row.id, integrationOf(row)]));
    return valid.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * The server's partner port: looks the integration up within the run's team and runs the
   * browser test through the partner's API (docs/notifications.md, "Partner API").
   */
  partnerPort(poster: HttpPoster): PartnerPort {
    const { db } = this.deps.store;
    return {
      execute: async (request, signal): Promise<PartnerOutcome> => {
        const bucket = await bucketsRepo.byKey(db, request.bucket_key);
        const row =
          bucket && isUuid(request.integration_id)
            ? await integrationsRepo.ofTeam(db, bucket.team_id, request.integration_id)
            : undefined;
        const integration = row ? integrationOf(row) : undefined;
        if (!integration || integration.integration_type !== 'partner-inspector') {
          throw new Error(
            `integration_id: no partner-inspector integration ${request.integration_id} in this team`,
          );
        }
        const { base_url, api_key } = integration.config;
        const url = `${base_url.replace(/\/+$/, '')}/suites/${encodeURIComponent(request.suite_id)}/tests/${encodeURIComponent(request.test_id)}/runs`;
        const answer = await poster.post(
          url,
          JSON.stringify({ start_url: request.start_url }),
          {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${api_key}`,
          },
          { signal, timeoutMs: PARTNER_TIMEOUT_MS, readBody: true },
        );
        if (!answer.ok) throw new Error(`the partner could not run test ${request.test_id}: ${answer.error}`);
        let document: unknown;
        try {
          document = JSON.parse(answer.body ?? '');
        } catch {
          throw new Error('the partner answered with something other than JSON');
        }
        const outcome = document as { passed?: unknown; result?: unknown; url?: unknown };
        if (typeof outcome !== 'object' || outcome === null || typeof outcome.passed !== 'boolean') {
          throw new Error('the partner answered without a boolean "passed"');
        }
        return {
          passed: outcome.passed,
          result: outcome.result ?? null,
          url: typeof outcome.url === 'string' ? outcome.url : null,
        };
      },
    };
  }
}
