/** The environment editor's draft, and how it becomes the body of a create or an update. */
import type { Environment, StepAuth } from '../../api/resources';

export interface VariableRow {
  key: string;
  value: string;
}

export interface Draft {
  name: string;
  parent_environment_id: string | null;
  variables: VariableRow[];
  script: string;
  regions: string[];
  remote_agents: { uuid: string; name: string }[];
  emails: Environment['emails'];
  webhooks: string[];
  stop_on_failure: boolean;
  retry_on_failure: boolean;
  preserve_cookies: boolean;
  verify_ssl: boolean;
  client_certificate: string;
  auth: StepAuth;
}

/** Settings the API lets an environment leave unset (and inherit); the editor sends only those changed. */
export type SettingKey = Exclude<keyof Draft, 'name' | 'parent_environment_id'>;

/** Environment fields the editor works on (the rest are identity and the answer's export stamp). */
type EnvironmentFields = Omit<Environment, 'id' | 'test_id' | 'version' | 'exported_at'>;

export const EMPTY_ENVIRONMENT: EnvironmentFields = {
  name: '',
  parent_environment_id: null,
  auth: {},
  emails: { notify_all: false, notify_on: 'all', notify_threshold: null, recipients: [] },
  initial_variables: {},
  integrations: [],
  preserve_cookies: false,
  regions: [],
  remote_agents: [],
  retry_on_failure: false,
  retry_transport_errors: null,
  alert_quorum: 1,
  stop_on_failure: false,
  script: '',
  verify_ssl: true,
  client_certificate: '',
  webhooks: null,
  headers: {},
};

export function draftOf(env: EnvironmentFields): Draft {
  return {
    name: env.name,
    parent_environment_id: env.parent_environment_id,
    variables: Object.entries(env.initial_variables).map(([key, value]) => ({ key, value })),
    script: env.script,
    regions: [...env.regions],
    remote_agents: env.remote_agents.map((agent) => ({ ...agent })),
    emails: { ...env.emails, recipients: [...env.emails.recipients] },
    webhooks: [...(env.webhooks ?? [])],
    stop_on_failure: env.stop_on_failure,
    retry_on_failure: env.retry_on_failure,
    preserve_cookies: env.preserve_cookies,
    verify_ssl: env.verify_ssl,
    client_certificate: env.client_certificate,
    auth: { ...env.auth },
  };
}

/** The variables an environment inherits: its parent chain's, nearest parent winning. */
export function inheritedVariables(
  parentId: string | null,
  environments: readonly Environment[],
): { key: string; value: string; from: string }[] {
  const chain: Environment[] = [];
  let next = parentId;
  while (next && chain.length < 10) {
    const parent = environments.find((env) => env.id === next);
    if (!parent || chain.includes(parent)) break;
    chain.push(parent);
    next = parent.parent_environment_id;
  }
  const merged = new Map<string, { value: string; from: string }>();
  for (const env of chain.reverse()) {
    for (const [key, value] of Object.entries(env.initial_variables))
      merged.set(key, { value, from: env.name });
  }
  return [...merged.entries()].map(([key, entry]) => ({ key, ...entry }));
}

/** A problem the editor finds before asking the API, with the field it concerns. */
export interface DraftProblem {
  field: string;
  message: string;
}

export function checkDraft(draft: Draft): DraftProblem | undefined {
  if (!draft.name.trim()) return { field: '/name', message: 'Give the environment a name.' };
  const seen = new Set<string>();
  for (const row of draft.variables) {
    if (!row.key.trim()) return { field: '/initial_variables', message: 'Every variable needs a name.' };
    if (seen.has(row.key))
      return { field: '/initial_variables', message: `The variable ${row.key} is listed twice.` };
    seen.add(row.key);
  }
  if (draft.emails.notify_on === 'threshold' && !draft.emails.notify_threshold)
    return {
      field: '/emails/notify_threshold',
      message: 'Say after how many consecutive failures to send a mail.',
    };
  return undefined;
}

function authBody(auth: StepAuth): StepAuth {
  switch (auth.auth_type) {
    case 'basic':
      return { auth_type: 'basic', username: auth.username ?? '', password: auth.password ?? '' };
    case 'oauth_1':
      return {
        auth_type: 'oauth_1',
        consumer_key: auth.consumer_key ?? '',
        consumer_secret: auth.consumer_secret ?? '',
        access_token: auth.access_token ?? '',
        token_secret: auth.token_secret ?? '',
        signature_type: auth.signature_type ?? 'auth_header',
      };
    case 'client_certificate':
      return { auth_type: 'client_certificate' };
    default:
      return {};
  }
}

/**
 * The body of a write: name and parent always, and of the settings only those the user changed, so an
 * environment keeps inheriting what it never set (docs/api-decisions.md, Environments).
 */
export function bodyOf(draft: Draft, touched: ReadonlySet<SettingKey>): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: draft.name.trim(),
    parent_environment_id: draft.parent_environment_id,
  };
  for (const key of touched) {
    switch (key) {
      case 'variables':
        body.initial_variables = Object.fromEntries(
          draft.variables.map((row) => [row.key.trim(), row.value]),
        );
        break;
      case 'webhooks':
        body.webhooks = draft.webhooks.map((url) => url.trim()).filter(Boolean);
        break;
      case 'emails':
        body.emails = {
          ...draft.emails,
          notify_threshold: draft.emails.notify_on === 'threshold' ? draft.emails.notify_threshold : null,
        };
        break;
      case 'auth':
        body.auth = authBody(draft.auth);
        break;
      default:
        body[key] = draft[key];
    }
  }
  return body;
}
