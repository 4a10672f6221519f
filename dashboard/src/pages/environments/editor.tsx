import { useId, useState } from 'preact/hooks';
import { SIGNATURE_TYPES } from '../../../../src/domain/vocabulary';
import { api, fieldError } from '../../api/client';
import type { Agent, Environment, NotifyOn, SignatureType, StepAuth } from '../../api/resources';
import { CodeEditor } from '../../components/code-editor';
import { words } from '../../components/format';
import { NOTIFY_ON_OPTIONS } from '../../components/notify-on';
import { Checkbox, ErrorBanner, SelectField, TextArea, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import type { RegionInfo } from '../runs/types';
import { PLACEHOLDERS, Preview } from '../account/integration-template';
import {
  bodyOf,
  checkDraft,
  type Draft,
  draftOf,
  EMPTY_ENVIRONMENT,
  inheritedVariables,
  type SettingKey,
} from './model';
import './environments.css';

/** An agent to pick; one the environment names that the team no longer has shows as 'unknown'. */
type AgentChoice = Pick<Agent, 'uuid' | 'name' | 'region'> & { status: Agent['status'] | 'unknown' };

/** An error the editor found itself, shaped like the API's so it shows next to the same field. */
class LocalError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function errorFor(error: unknown, field: string): string | undefined {
  if (error instanceof LocalError)
    return error.field === field || error.field.startsWith(`${field}/`) ? error.message : undefined;
  return fieldError(error, field);
}

/** The message under a group of controls when the last save named a field inside it. */
function FieldMessage(props: { error: unknown; field: string; id?: string }) {
  const message = errorFor(props.error, props.field);
  if (!message) return null;
  return (
    <p class="field-error" id={props.id} role="alert">
      {message}
    </p>
  );
}

function Variables(props: {
  draft: Draft;
  inherited: { key: string; value: string; from: string }[];
  error: unknown;
  onChange: (rows: Draft['variables']) => void;
}) {
  const rows = props.draft.variables;
  const own = new Set(rows.map((row) => row.key));
  const inheritedOnly = props.inherited.filter((row) => !own.has(row.key));
  const overrides = new Map(props.inherited.map((row) => [row.key, row.from]));
  const set = (index: number, patch: Partial<Draft['variables'][number]>) =>
    props.onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <fieldset class="env-section">
      <legend>Initial variables</legend>
      <FieldMessage error={props.error} field="/initial_variables" />
      <div class="table-wrap">
        <table class="variables-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={index}>
                <td>
                  <input
                    aria-label={`Name of variable ${index + 1}`}
                    value={row.key}
                    class="mono"
                    onInput={(event) => set(index, { key: event.currentTarget.value })}
                  />
                  {overrides.has(row.key) && (
                    <small class="muted block">overrides {overrides.get(row.key)}</small>
                  )}
                </td>
                <td>
                  <input
                    aria-label={`Value of ${row.key || `variable ${index + 1}`}`}
                    value={row.value}
                    class="mono"
                    onInput={(event) => set(index, { value: event.currentTarget.value })}
                  />
                </td>
                <td>
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => props.onChange(rows.filter((_, i) => i !== index))}
                  >
                    Remove<span class="visually-hidden"> {row.key || `variable ${index + 1}`}</span>
                  </button>
                </td>
              </tr>
            ))}
            {inheritedOnly.map((row) => (
              <tr key={`inherited-${row.key}`} class="inherited">
                <td class="mono">{row.key}</td>
                <td>
                  <span class="mono">{row.value}</span> <small class="muted">from {row.from}</small>
                </td>
                <td>
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => props.onChange([...rows, { key: row.key, value: row.value }])}
                  >
                    Override<span class="visually-hidden"> {row.key}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <button
        type="button"
        class="secondary small"
        onClick={() => props.onChange([...rows, { key: '', value: '' }])}
      >
        Add variable
      </button>
    </fieldset>
  );
}

function Regions(props: { value: string[]; error: unknown; onChange: (regions: string[]) => void }) {
  const known = useResource(
    (signal) =>
      api.get<{ regions: RegionInfo[] }>('/regions', undefined, signal).then((data) => data.regions),
    [],
  );
  const knownCodes = (known.data ?? []).map((r) => r.region).filter((code) => code !== '*');
  const others = props.value.filter((code) => !knownCodes.includes(code));
  const [typed, setTyped] = useState<string | undefined>(undefined);
  // Until the person types, the box shows the regions that have no checkbox (known once /regions answers).
  const text = typed ?? others.join(', ');
  return (
    <fieldset class="env-section">
      <legend>Regions</legend>
      <p class="muted">
        One run per region. None: the server's own region. Regions with live workers are listed; others can be
        typed.
      </p>
      {knownCodes.map((code) => (
        <Checkbox
          key={code}
          label={code}
          checked={props.value.includes(code)}
          onValue={(checked) =>
            props.onChange(
              checked ? [...new Set([...props.value, code])] : props.value.filter((c) => c !== code),
            )
          }
        />
      ))}
      <TextField
        label="Other regions"
        hint="Region codes separated by commas, e.g. eu-west, us-east"
        value={text}
        onValue={(value) => {
          setTyped(value);
          const codes = value
            .split(/[\s,]+/)
            .map((code) => code.trim())
            .filter(Boolean);
          const checked = props.value.filter((code) => knownCodes.includes(code));
          props.onChange([...new Set([...checked, ...codes])]);
        }}
        error={props.error}
        field="/regions"
      />
    </fieldset>
  );
}

function Agents(props: {
  teamId: string | undefined;
  value: Draft['remote_agents'];
  error: unknown;
  onChange: (agents: Draft['remote_agents']) => void;
}) {
  const agents = useResource(
    (signal) =>
      props.teamId
        ? api.get<Agent[]>(`/teams/${props.teamId}/agents`, undefined, signal)
        : Promise.resolve([]),
    [props.teamId],
  );
  const chosen = new Set(props.value.map((agent) => agent.uuid));
  const list: AgentChoice[] = [...(agents.data ?? [])];
  for (const agent of props.value) {
    if (!list.some((a) => a.uuid === agent.uuid))
      list.push({ uuid: agent.uuid, name: agent.name || agent.uuid, region: '?', status: 'unknown' });
  }
  return (
    <fieldset class="env-section">
      <legend>Remote agents</legend>
      {agents.error !== undefined && <ErrorBanner error={agents.error} onRetry={agents.reload} />}
      {list.length === 0 && <p class="muted">The team has no remote agents.</p>}
      {list.map((agent) => (
        <Checkbox
          key={agent.uuid}
          label={`${agent.name} (${agent.region}, ${agent.status})`}
          checked={chosen.has(agent.uuid)}
          onValue={(checked) =>
            props.onChange(
              checked
                ? [...props.value, { uuid: agent.uuid, name: agent.name }]
                : props.value.filter((a) => a.uuid !== agent.uuid),
            )
          }
        />
      ))}
      <FieldMessage error={props.error} field="/remote_agents" />
    </fieldset>
  );
}

function Emails(props: {
  value: Draft['emails'];
  error: unknown;
  onChange: (emails: Draft['emails']) => void;
}) {
  const emails = props.value;
  const [text, setText] = useState(emails.recipients.map((r) => r.email).join('\n'));
  return (
    <fieldset class="env-section">
      <legend>E-mail notifications</legend>
      <div class="row">
        <SelectField
          label="Notify on"
          value={emails.notify_on}
          options={NOTIFY_ON_OPTIONS}
          onValue={(notify_on: NotifyOn) => props.onChange({ ...emails, notify_on })}
          error={props.error}
          field="/emails/notify_on"
        />
        {emails.notify_on === 'threshold' && (
          <TextField
            label="Consecutive failures"
            type="number"
            min={1}
            max={1000}
            value={emails.notify_threshold === null ? '' : String(emails.notify_threshold)}
            onValue={(value) =>
              props.onChange({ ...emails, notify_threshold: value === '' ? null : Number(value) })
            }
            error={props.error}
            field="/emails/notify_threshold"
          />
        )}
      </div>
      <Checkbox
        label="Send to every member of the team"
        checked={emails.notify_all}
        onValue={(notify_all) => props.onChange({ ...emails, notify_all })}
      />
      {!emails.notify_all && (
        <TextArea
          label="Recipients (one address per line)"
          value={text}
          rows={3}
          onValue={(value) => {
            setText(value);
            const addresses = value
              .split(/[\s,;]+/)
              .map((a) => a.trim())
              .filter(Boolean);
            props.onChange({
              ...emails,
              recipients: addresses.map(
                (email) => emails.recipients.find((r) => r.email === email) ?? { email, name: '', id: '' },
              ),
            });
          }}
          error={props.error}
          field="/emails/recipients"
        />
      )}
      <FieldMessage error={props.error} field="/emails/notify_all" />
      <Checkbox
        label="Write the e-mail's subject and body myself"
        checked={emails.template !== undefined}
        onValue={(own) => {
          const { template: _standard, ...rest } = emails;
          props.onChange(own ? { ...rest, template: { body: '' } } : rest);
        }}
      />
      {emails.template !== undefined && <EmailTemplate {...props} template={emails.template} />}
    </fieldset>
  );
}

/** The e-mail's own subject and body, with the placeholders listed and a preview. */
function EmailTemplate(props: {
  value: Draft['emails'];
  template: NonNullable<Draft['emails']['template']>;
  error: unknown;
  onChange: (emails: Draft['emails']) => void;
}) {
  const { template } = props;
  const set = (subject: string, body: string) =>
    props.onChange({ ...props.value, template: { ...(subject !== '' && { subject }), body } });
  return (
    <div class="email-template">
      <p class="muted small-text">
        Placeholders:{' '}
        {PLACEHOLDERS.map((name, index) => (
          <span key={name}>
            {index > 0 && ', '}
            <code>{`{{${name}}}`}</code>
          </span>
        ))}
        . An empty subject keeps the standard one.
      </p>
      <TextField
        label="E-mail subject"
        value={template.subject ?? ''}
        onValue={(subject) => set(subject, template.body)}
        error={props.error}
        field="/emails/template/subject"
        maxLength={1000}
      />
      <TextArea
        label="E-mail body"
        value={template.body}
        onValue={(body) => set(template.subject ?? '', body)}
        error={props.error}
        field="/emails/template/body"
        rows={6}
      />
      <Preview channel="email" template={template.body.trim() === '' ? null : template} />
    </div>
  );
}

function Webhooks(props: { value: string[]; error: unknown; onChange: (urls: string[]) => void }) {
  return (
    <fieldset class="env-section">
      <legend>Webhooks</legend>
      <p class="muted">Every finished run is posted to these URLs.</p>
      {props.value.map((url, index) => (
        <div class="row" key={index}>
          <TextField
            label={`Webhook ${index + 1}`}
            type="url"
            placeholder="https://hooks.example.com/vigil"
            value={url}
            onValue={(value) => props.onChange(props.value.map((u, i) => (i === index ? value : u)))}
            error={props.error}
            field={`/webhooks/${index}`}
          />
          <button
            type="button"
            class="secondary small webhook-remove"
            onClick={() => props.onChange(props.value.filter((_, i) => i !== index))}
          >
            Remove<span class="visually-hidden"> webhook {index + 1}</span>
          </button>
        </div>
      ))}
      <FieldMessage error={props.error} field="/webhooks" />
      <button type="button" class="secondary small" onClick={() => props.onChange([...props.value, ''])}>
        Add webhook
      </button>
    </fieldset>
  );
}

function Auth(props: { value: StepAuth; error: unknown; onChange: (auth: StepAuth) => void }) {
  const auth = props.value;
  const type = auth.auth_type ?? 'none';
  const set = (patch: Partial<StepAuth>) => props.onChange({ ...auth, ...patch });
  const text = (key: keyof StepAuth, label: string, secret = false) => (
    <TextField
      label={label}
      type={secret ? 'password' : 'text'}
      autoComplete="off"
      value={String(auth[key] ?? '')}
      onValue={(value) => set({ [key]: value })}
      error={props.error}
      field={`/auth/${key}`}
    />
  );
  return (
    <fieldset class="env-section">
      <legend>Authentication</legend>
      <p class="muted">Used by request steps that have no authentication of their own.</p>
      <SelectField
        label="Method"
        value={type}
        options={[
          { value: 'none', label: 'None' },
          { value: 'basic', label: 'Basic' },
          { value: 'oauth_1', label: 'OAuth 1.0' },
          { value: 'client_certificate', label: 'Client certificate' },
        ]}
        onValue={(value) => props.onChange(value === 'none' ? {} : { ...auth, auth_type: value })}
        error={props.error}
        field="/auth/auth_type"
      />
      {type === 'basic' && (
        <div class="row">
          {text('username', 'User name')}
          {text('password', 'Password', true)}
        </div>
      )}
      {type === 'oauth_1' && (
        <>
          <div class="row">
            {text('consumer_key', 'Consumer key')}
            {text('consumer_secret', 'Consumer secret', true)}
          </div>
          <div class="row">
            {text('access_token', 'Access token')}
            {text('token_secret', 'Token secret', true)}
          </div>
          <SelectField
            label="Signature goes in"
            value={auth.signature_type ?? 'auth_header'}
            options={SIGNATURE_TYPES.map((value) => ({ value, label: words(value) }))}
            onValue={(signature_type: SignatureType) => set({ signature_type })}
          />
        </>
      )}
      <FieldMessage error={props.error} field="/auth" />
    </fieldset>
  );
}

/**
 * Creates or edits one environment, of a test or shared in the bucket. Settings the user leaves alone
 * are not sent, so they keep being inherited from the parent.
 */
export function EnvironmentEditor(props: {
  /** The environment to edit; undefined creates one. */
  environment?: Environment;
  /** Where the environments live: `…/tests/<t>/environments` or `/buckets/<key>/environments`. */
  collectionPath: string;
  /** Shared environments of the bucket: the parents it may inherit from. */
  parents: readonly Environment[];
  teamId: string | undefined;
  onSaved: (environment: Environment) => void | Promise<void>;
  onCancel: () => void;
}) {
  const { environment } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(environment ?? EMPTY_ENVIRONMENT));
  const [touched, setTouched] = useState<Set<SettingKey>>(() => new Set());
  const [error, setError] = useState<unknown>(undefined);
  const [saving, setSaving] = useState(false);
  const headingId = useId();

  const update = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setDraft((current) => ({ ...current, [key]: value }));
    if (key !== 'name' && key !== 'parent_environment_id')
      setTouched((current) => new Set(current).add(key as SettingKey));
  };

  const parentOptions = props.parents.filter((env) => env.id !== environment?.id);
  const parent = parentOptions.find((env) => env.id === draft.parent_environment_id);
  const inherited = inheritedVariables(draft.parent_environment_id, props.parents);

  const save = async () => {
    const problem = checkDraft(draft);
    if (problem) {
      setError(new LocalError(problem.field, problem.message));
      return;
    }
    setSaving(true);
    setError(undefined);
    try {
      const body = bodyOf(draft, touched);
      const saved = environment
        ? await api.put<Environment>(`${props.collectionPath}/${environment.id}`, body)
        : await api.post<Environment>(props.collectionPath, body);
      await props.onSaved(saved);
    } catch (failure) {
      setError(failure);
    } finally {
      setSaving(false);
    }
  };

  const shownFields = [
    '/name',
    '/parent_environment_id',
    '/initial_variables',
    '/script',
    '/regions',
    '/remote_agents',
    '/emails',
    '/webhooks',
    '/client_certificate',
    '/auth',
  ];
  const unplaced =
    error !== undefined && !shownFields.some((field) => errorFor(error, field)) ? error : undefined;

  return (
    <form
      class="card env-editor"
      aria-labelledby={headingId}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <h3 id={headingId}>{environment ? `Edit ${environment.name}` : 'New environment'}</h3>
      <ErrorBanner error={unplaced} />
      <div class="row">
        <TextField
          label="Name"
          value={draft.name}
          onValue={(value) => update('name', value)}
          error={error}
          field="/name"
          required
        />
        <SelectField
          label="Inherits from"
          value={draft.parent_environment_id ?? ''}
          options={[
            { value: '', label: 'No parent' },
            ...parentOptions.map((env) => ({ value: env.id, label: env.name })),
          ]}
          onValue={(value) => update('parent_environment_id', value || null)}
          error={error}
          field="/parent_environment_id"
        />
      </div>
      {parent && (
        <p class="muted">
          Settings this environment does not change are taken from {parent.name} when it runs; its variables
          are merged, this environment's winning.
        </p>
      )}

      <Variables
        draft={draft}
        inherited={inherited}
        error={error}
        onChange={(rows) => update('variables', rows)}
      />

      <fieldset class="env-section">
        <legend>Environment script</legend>
        <p class="muted">Runs once before the first step; it may set variables.</p>
        <CodeEditor
          label="Environment script"
          language="javascript"
          value={draft.script}
          onValue={(value) => update('script', value)}
          placeholder="variables.set('token', encode_base64('user:secret'));"
        />
        <FieldMessage error={error} field="/script" />
      </fieldset>

      <div class="grid-2">
        <Regions value={draft.regions} error={error} onChange={(regions) => update('regions', regions)} />
        <Agents
          teamId={props.teamId}
          value={draft.remote_agents}
          error={error}
          onChange={(agents) => update('remote_agents', agents)}
        />
      </div>

      <fieldset class="env-section">
        <legend>Run settings</legend>
        <Checkbox
          label="Stop at the first failing step"
          checked={draft.stop_on_failure}
          onValue={(value) => update('stop_on_failure', value)}
        />
        <Checkbox
          label="Retry a failed run once"
          checked={draft.retry_on_failure}
          onValue={(value) => update('retry_on_failure', value)}
        />
        <Checkbox
          label="Keep cookies between steps"
          checked={draft.preserve_cookies}
          onValue={(value) => update('preserve_cookies', value)}
        />
        <Checkbox
          label="Verify TLS certificates"
          checked={draft.verify_ssl}
          onValue={(value) => update('verify_ssl', value)}
        />
        <TextArea
          label="Client certificate (PEM with certificate and key)"
          value={draft.client_certificate}
          rows={3}
          placeholder="-----BEGIN CERTIFICATE-----"
          onValue={(value) => update('client_certificate', value)}
          error={error}
          field="/client_certificate"
        />
      </fieldset>

      <Auth value={draft.auth} error={error} onChange={(auth) => update('auth', auth)} />

      <div class="grid-2">
        <Emails value={draft.emails} error={error} onChange={(emails) => update('emails', emails)} />
        <Webhooks value={draft.webhooks} error={error} onChange={(urls) => update('webhooks', urls)} />
      </div>

      <div class="actions sticky-actions">
        <button type="submit" disabled={saving}>
          {saving ? 'Saving…' : environment ? 'Save environment' : 'Create environment'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
