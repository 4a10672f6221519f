import { type Static, Type } from '@sinclair/typebox';
import { type Auth, AuthSchema, normalizeAuth } from './auth.js';
import { NotificationTemplate } from './notification-templates.js';
import { dropNulls, OrNull, StringEnum, StringMap } from './schema.js';
import { HeaderMapSchema } from './steps.js';
import { NOTIFY_ON } from './vocabulary.js';

export { NOTIFY_ON };

export type NotifyOn = (typeof NOTIFY_ON)[number];

/** Test-specific environments a bucket may hold (spec 8). */
export const MAX_TEST_ENVIRONMENTS_PER_BUCKET = 100;

const Recipient = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  id: Type.Optional(Type.String({ anyOf: [{ format: 'uuid' }, { maxLength: 0 }] })),
});

/** `notify_on: ""` and `notify_threshold: 0` are how clients of the original service write "not set". */
export const EmailsSchema = Type.Object({
  notify_all: Type.Optional(Type.Boolean()),
  notify_on: Type.Optional(
    StringEnum([...NOTIFY_ON, ''], { description: `${NOTIFY_ON.join(', ')}; "" means all` }),
  ),
  notify_threshold: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0, maximum: 1000, description: '0 means not set' }), Type.Null()]),
  ),
  recipients: OrNull(Type.Array(Recipient, { maxItems: 100 })),
  template: OrNull(NotificationTemplate),
});

/** Highest `alert_quorum`: as many as the regions an environment may list. */
export const MAX_ALERT_QUORUM = 50;

/**
 * How often a request step that failed before any HTTP answer (connection refused or reset, DNS,
 * TLS, timeout) is sent again, and how long to wait between two sends.
 */
export const RetryTransportErrorsSchema = Type.Object(
  {
    attempts: Type.Integer({ minimum: 0, maximum: 5, description: 'Sends after the first one' }),
    backoff_ms: Type.Integer({ minimum: 0, maximum: 60_000, description: 'Wait between two sends' }),
  },
  { additionalProperties: false },
);
export type RetryTransportErrors = Static<typeof RetryTransportErrorsSchema>;

/** The settings of an environment, every one optional: what an environment leaves out it inherits. */
export const EnvironmentSettingsInput = Type.Object({
  auth: OrNull(AuthSchema),
  emails: OrNull(EmailsSchema),
  headers: OrNull(HeaderMapSchema),
  initial_variables: OrNull(
    StringMap({ pattern: '^[A-Za-z_][A-Za-z0-9_.\\-]{0,99}$' }, Type.String({ maxLength: 100_000 }), {
      maxProperties: 500,
    }),
  ),
  integrations: OrNull(
    Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        integration_type: Type.Optional(Type.String({ maxLength: 64 })),
        description: Type.Optional(Type.String({ maxLength: 1_000 })),
      }),
      { maxItems: 50 },
    ),
  ),
  preserve_cookies: Type.Optional(Type.Boolean()),
  regions: OrNull(Type.Array(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }), { maxItems: 50 })),
  remote_agents: OrNull(
    Type.Array(
      Type.Object({
        uuid: Type.String({ format: 'uuid' }),
        name: Type.Optional(Type.String({ maxLength: 255 })),
      }),
      {
        maxItems: 50,
      },
    ),
  ),
  retry_on_failure: Type.Optional(Type.Boolean()),
  retry_transport_errors: OrNull(RetryTransportErrorsSchema),
  alert_quorum: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_ALERT_QUORUM,
      description: 'Failed regions of one scheduled round needed before its notifications go out',
    }),
  ),
  stop_on_failure: Type.Optional(Type.Boolean()),
  script: Type.Optional(Type.String({ maxLength: 100_000 })),
  verify_ssl: Type.Optional(Type.Boolean()),
  client_certificate: Type.Optional(Type.String({ maxLength: 100_000 })),
  webhooks: OrNull(
    Type.Array(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2_048 }), { maxItems: 20 }),
  ),
});
export type EnvironmentSettingsInput = Static<typeof EnvironmentSettingsInput>;

export const EnvironmentInput = Type.Composite([
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 255 }),
    parent_environment_id: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  }),
  EnvironmentSettingsInput,
]);
export type EnvironmentInput = Static<typeof EnvironmentInput>;

export const EnvironmentPatch = Type.Partial(EnvironmentInput);
export type EnvironmentPatch = Static<typeof EnvironmentPatch>;

export interface Emails {
  notify_all: boolean;
  notify_on: NotifyOn;
  notify_threshold: number | null;
  recipients: { email: string; name: string; id: string }[];
  /** The mail's own subject and body (docs/alerting.md); absent: the standard mail. */
  template?: NotificationTemplate;
}

/** The complete settings of an environment, as the API shows them and a run uses them. */
export interface EnvironmentSettings {
  auth: Auth;
  emails: Emails;
  initial_variables: Record<string, string>;
  integrations: { description: string; integration_type: string; id: string }[];
  preserve_cookies: boolean;
  regions: string[];
  remote_agents: { name: string; uuid: string }[];
  retry_on_failure: boolean;
  /** `null`: a request step that fails on the network is not sent again. */
  retry_transport_errors: RetryTransportErrors | null;
  /** 1: every run notifies on its own (see docs/alerting.md). */
  alert_quorum: number;
  stop_on_failure: boolean;
  script: string;
  verify_ssl: boolean;
  client_certificate: string;
  webhooks: string[] | null;
  /** Headers sent with every request step of a run (a step's own header of the same name wins). */
  headers: Record<string, string[]>;
}

/** The settings an environment sets itself; a field it does not hold is inherited. */
export type StoredSettings = Partial<EnvironmentSettings>;

export const SETTING_KEYS = [
  'auth',
  'emails',
  'initial_variables',
  'integrations',
  'preserve_cookies',
  'regions',
  'remote_agents',
  'retry_on_failure',
  'retry_transport_errors',
  'alert_quorum',
  'stop_on_failure',
  'script',
  'verify_ssl',
  'client_certificate',
  'webhooks',
  'headers',
] as const satisfies readonly (keyof EnvironmentSettings)[];

/** Deeply frozen: results of withDefaults and resolveSettings share these nested values. */
export const DEFAULT_SETTINGS: Readonly<EnvironmentSettings> = deepFreeze({
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
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Normalises the settings present in input; absent ones stay absent. */
export function normalizeSettings(body: EnvironmentSettingsInput): StoredSettings {
  // null means "not given" (clients of the original service send unset fields as null), except for
  // `webhooks`, whose null is a value of its own (spec 2.3): no webhooks.
  const input = dropNulls(
    body,
    SETTING_KEYS.filter((key) => key !== 'webhooks'),
  );
  const out: StoredSettings = {};
  if (input.auth !== undefined) out.auth = normalizeAuth(input.auth);
  if (input.emails !== undefined) {
    out.emails = {
      notify_all: input.emails.notify_all ?? false,
      notify_on: input.emails.notify_on || 'all',
      notify_threshold: input.emails.notify_threshold || null,
      recipients: (input.emails.recipients ?? []).map((r) => ({
        email: r.email,
        name: r.name ?? '',
        id: r.id ?? '',
      })),
      ...(input.emails.template && {
        template: {
          ...(input.emails.template.subject !== undefined && { subject: input.emails.template.subject }),
          body: input.emails.template.body,
        },
      }),
    };
  }
  if (input.initial_variables !== undefined) out.initial_variables = { ...input.initial_variables };
  if (input.integrations !== undefined) {
    out.integrations = input.integrations.map((i) => ({
      description: i.description ?? '',
      integration_type: i.integration_type ?? '',
      id: i.id,
    }));
  }
  if (input.remote_agents !== undefined) {
    out.remote_agents = input.remote_agents.map((a) => ({ name: a.name ?? '', uuid: a.uuid }));
  }
  if (input.retry_transport_errors !== undefined) {
    const { attempts, backoff_ms } = input.retry_transport_errors;
    out.retry_transport_errors = { attempts, backoff_ms };
  }
  if (input.alert_quorum !== undefined) out.alert_quorum = input.alert_quorum;
  for (const key of [
    'preserve_cookies',
    'retry_on_failure',
    'stop_on_failure',
    'verify_ssl',
    'script',
    'client_certificate',
  ] as const) {
    const value = input[key];
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  if (input.regions !== undefined) out.regions = [...input.regions];
  if (input.webhooks !== undefined) out.webhooks = input.webhooks === null ? null : [...input.webhooks];
  if (input.headers !== undefined) {
    out.headers = Object.fromEntries(
      Object.entries(input.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? [...value] : [value],
      ]),
    );
  }
  return out;
}

/** What an environment shows: its own settings over the defaults. */
export function withDefaults(settings: StoredSettings): EnvironmentSettings {
  return { ...DEFAULT_SETTINGS, ...settings };
}

/**
 * The settings a run uses: each field from the nearest environment in the chain (child first) that
 * sets it, `initial_variables` merged with the child winning, defaults for the rest.
 */
export function resolveSettings(chain: readonly StoredSettings[]): EnvironmentSettings {
  const resolved: EnvironmentSettings = { ...DEFAULT_SETTINGS };
  const variables: Record<string, string> = {};
  for (let i = chain.length - 1; i >= 0; i--) {
    const settings = chain[i]!;
    Object.assign(resolved, settings);
    Object.assign(variables, settings.initial_variables ?? {});
  }
  resolved.initial_variables = variables;
  return resolved;
}
