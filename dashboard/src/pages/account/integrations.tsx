import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Integration, IntegrationType } from '../../api/resources';
import { dateTime } from '../../components/format';
import { NOTIFY_ON_OPTIONS, type NotifyOnValue, notifyOnLabel } from '../../components/notify-on';
import { Empty, SelectField, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { useSession } from '../../session';
import { MessageCell } from './integration-template';
import { FormError, ListState, useRowActions, useSubmit } from './shared';

interface ConfigField {
  name: string;
  label: string;
  secret?: boolean;
  optional?: boolean;
  hint?: string;
  placeholder?: string;
}

/** The configuration each type takes (src/domain/integrations.ts); secrets are never shown back whole. */
const TYPES: Record<
  IntegrationType,
  {
    label: string;
    fields: ConfigField[];
    /** When it hears of runs without a `notify_on` of its own; absent: it does not notify. */
    ownRule?: string;
  }
> = {
  slack: {
    label: 'Slack',
    fields: [
      {
        name: 'url',
        label: 'Incoming webhook URL',
        secret: true,
        placeholder: 'https://hooks.slack.com/services/…',
        hint: 'https only. Shown afterwards as its host only.',
      },
    ],
    ownRule: 'failures and recoveries',
  },
  pagerduty: {
    label: 'PagerDuty',
    fields: [
      {
        name: 'routing_key',
        label: 'Routing key',
        secret: true,
        hint: 'The Events API v2 integration key: letters and digits. Shown afterwards as its last four characters.',
      },
    ],
    ownRule: 'failures and recoveries',
  },
  webhook: {
    label: 'Webhook',
    fields: [
      { name: 'url', label: 'URL', placeholder: 'https://example.com/vigil-hook' },
      {
        name: 'secret',
        label: 'Signing secret',
        secret: true,
        optional: true,
        hint: "Signs the payload instead of the bucket's signing secret. Optional.",
      },
    ],
    ownRule: 'every finished run',
  },
  'partner-inspector': {
    label: 'Browser-test partner',
    fields: [
      { name: 'base_url', label: 'Base URL', placeholder: 'https://partner.example/api' },
      { name: 'api_key', label: 'API key', secret: true },
    ],
  },
};

const TYPE_OPTIONS = (Object.keys(TYPES) as IntegrationType[]).map((value) => ({
  value,
  label: TYPES[value].label,
}));

/** When an integration notifies: `notify_on` (null: the type's own rule) and its threshold. */
interface NotifyChoice {
  notify_on: NotifyOnValue | null;
  notify_threshold: number | null;
}

/** The "Notify on" choice of a notifying integration, as an environment's e-mail settings offer it. */
function NotifyFields(props: {
  type: IntegrationType;
  value: NotifyChoice;
  onChange: (value: NotifyChoice) => void;
  error: unknown;
}) {
  const { value } = props;
  return (
    <>
      <SelectField<NotifyOnValue | 'own'>
        label="Notify on"
        value={value.notify_on ?? 'own'}
        options={[{ value: 'own', label: TYPES[props.type].ownRule ?? 'every run' }, ...NOTIFY_ON_OPTIONS]}
        onValue={(choice) =>
          props.onChange({
            notify_on: choice === 'own' ? null : choice,
            notify_threshold: choice === 'threshold' ? value.notify_threshold : null,
          })
        }
        error={props.error}
        field="/notify_on"
      />
      {value.notify_on === 'threshold' && (
        <TextField
          label="Consecutive failures"
          type="number"
          min={1}
          max={1000}
          value={value.notify_threshold === null ? '' : String(value.notify_threshold)}
          onValue={(text) =>
            props.onChange({ ...value, notify_threshold: text === '' ? null : Number(text) })
          }
          error={props.error}
          field="/notify_threshold"
        />
      )}
    </>
  );
}

function notifiesText(integration: Integration): string {
  if (integration.notify_on === null) return TYPES[integration.integration_type].ownRule ?? '—';
  if (integration.notify_on === 'threshold') {
    return `after ${integration.notify_threshold ?? 1} consecutive failure${integration.notify_threshold && integration.notify_threshold > 1 ? 's' : ''}`;
  }
  return notifyOnLabel(integration.notify_on);
}

/** A row's "Notifies" cell: the current choice, and a form to change it. */
function NotifyCell(props: {
  base: string;
  integration: Integration;
  onSaved: (saved: Integration) => void;
}) {
  const { integration } = props;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<NotifyChoice>({
    notify_on: integration.notify_on,
    notify_threshold: integration.notify_threshold,
  });
  const submit = useSubmit();
  if (!TYPES[integration.integration_type].ownRule) return <span class="muted">—</span>;
  const name = integration.description || TYPES[integration.integration_type].label;
  if (!editing) {
    return (
      <>
        <span data-testid="notifies">{notifiesText(integration)}</span>{' '}
        <button
          type="button"
          class="link"
          aria-label={`Change when ${name} is notified`}
          onClick={() => {
            setDraft({ notify_on: integration.notify_on, notify_threshold: integration.notify_threshold });
            setEditing(true);
          }}
        >
          Change
        </button>
      </>
    );
  }
  const save = async (event: Event) => {
    event.preventDefault();
    const ok = await submit.run(async () => {
      const saved = await api.put<Integration>(`${props.base}/${encodeURIComponent(integration.id)}`, draft);
      props.onSaved(saved);
    });
    if (ok) setEditing(false);
  };
  return (
    <form onSubmit={save} noValidate aria-label={`When ${name} is notified`}>
      <NotifyFields
        type={integration.integration_type}
        value={draft}
        onChange={setDraft}
        error={submit.error}
      />
      <FormError error={submit.error} fields={['/notify_on', '/notify_threshold']} />
      <div class="actions">
        <button type="submit" class="small" disabled={submit.busy}>
          {submit.busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" class="secondary small" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The integrations of every team of the account. */
export function IntegrationsSection() {
  const { account } = useSession();
  return (
    <>
      <h2>Team integrations</h2>
      <p class="muted">
        Services a team notifies about its runs (Slack, PagerDuty, a webhook) or drives from partner-inspector
        steps. Environments choose which of them they notify.
      </p>
      {account.teams.length === 0 && <Empty>You are not a member of any team.</Empty>}
      {account.teams.map((team) => (
        <TeamIntegrations key={team.id} team={team} />
      ))}
    </>
  );
}

function TeamIntegrations(props: { team: { id: string; name: string } }) {
  const { team } = props;
  const base = `/teams/${encodeURIComponent(team.id)}/integrations`;
  const list = useResource((signal) => api.get<Integration[]>(base, undefined, signal), [base]);
  const rows = useRowActions();
  const headingId = `integrations-${team.id}`;

  const remove = (integration: Integration) => {
    const name = integration.description || TYPES[integration.integration_type].label;
    return rows.run(
      `Delete the integration ${name}? Environments that use it stop notifying it.`,
      async () => {
        await api.delete(`${base}/${encodeURIComponent(integration.id)}`);
        await list.reload();
        return `${name} was deleted.`;
      },
    );
  };

  return (
    <section class="card" aria-labelledby={headingId} data-team={team.id}>
      <h3 id={headingId}>{team.name}</h3>
      <ListState
        list={list}
        rows={rows}
        loading="Loading integrations…"
        empty={<p class="muted">This team has no integrations yet.</p>}
      />
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="integrations-table">
            <caption class="visually-hidden">Integrations of {team.name}</caption>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Description</th>
                <th scope="col">Configuration</th>
                <th scope="col">Notifies on</th>
                <th scope="col">Message</th>
                <th scope="col" class="hide-narrow">
                  Created
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((integration) => (
                <tr key={integration.id}>
                  <td>{TYPES[integration.integration_type]?.label ?? integration.integration_type}</td>
                  <td class="wrap">{integration.description || <span class="muted">—</span>}</td>
                  <td class="wrap">
                    {Object.entries(integration.config).map(([key, value]) => (
                      <div key={key}>
                        <span class="muted">{key}:</span> <code>{value}</code>
                      </div>
                    ))}
                    <div class="muted small-text">id {integration.id}</div>
                  </td>
                  <td class="wrap">
                    <NotifyCell
                      base={base}
                      integration={integration}
                      onSaved={(saved) => {
                        list.setData(list.data!.map((row) => (row.id === saved.id ? saved : row)));
                        rows.setNotice(
                          `${saved.description || TYPES[saved.integration_type].label} was saved.`,
                        );
                      }}
                    />
                  </td>
                  <td class="wrap">
                    <MessageCell
                      base={base}
                      integration={integration}
                      name={integration.description || TYPES[integration.integration_type].label}
                      onSaved={(saved) => {
                        list.setData(list.data!.map((row) => (row.id === saved.id ? saved : row)));
                        rows.setNotice(
                          `The message of ${saved.description || TYPES[saved.integration_type].label} was saved.`,
                        );
                      }}
                    />
                  </td>
                  <td class="hide-narrow">{dateTime(integration.created_at)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Delete integration ${integration.description || integration.integration_type}`}
                      onClick={() => void remove(integration)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <NewIntegration
        base={base}
        teamName={team.name}
        onCreated={async (created) => {
          rows.setNotice(
            `${created.description || TYPES[created.integration_type].label} was added. Its secrets are kept and shown masked from now on.`,
          );
          await list.reload();
        }}
      />
    </section>
  );
}

function NewIntegration(props: {
  base: string;
  teamName: string;
  onCreated: (created: Integration) => Promise<void>;
}) {
  const [type, setType] = useState<IntegrationType>('slack');
  const [description, setDescription] = useState('');
  const [config, setConfig] = useState<Record<string, string>>({});
  const [notify, setNotify] = useState<NotifyChoice>({ notify_on: null, notify_threshold: null });
  const submit = useSubmit();
  const fields = TYPES[type].fields;
  const notifies = TYPES[type].ownRule !== undefined;

  const create = async (event: Event) => {
    event.preventDefault();
    const body = {
      integration_type: type,
      description,
      config: Object.fromEntries(
        fields
          .map((field) => [field.name, config[field.name] ?? ''] as const)
          .filter(([name, value]) => value !== '' || !fields.find((f) => f.name === name)?.optional),
      ),
      ...(notifies && notify.notify_on !== null && notify),
    };
    await submit.run(async () => {
      const created = await api.post<Integration>(props.base, body);
      setDescription('');
      setConfig({});
      setNotify({ notify_on: null, notify_threshold: null });
      await props.onCreated(created);
    });
  };

  return (
    <details class="new-item">
      <summary>Add an integration to {props.teamName}</summary>
      <form onSubmit={create} noValidate data-testid="new-integration">
        <div class="row">
          <SelectField
            label="Type"
            value={type}
            options={TYPE_OPTIONS}
            onValue={(value) => {
              setType(value);
              setConfig({});
              submit.setError(undefined);
            }}
            error={submit.error}
            field="/integration_type"
          />
          <TextField
            label="Description"
            value={description}
            onValue={setDescription}
            error={submit.error}
            field="/description"
            maxLength={1000}
            placeholder="e.g. #alerts channel"
          />
        </div>
        <div class="row">
          {fields.map((field) => (
            <TextField
              key={`${type}-${field.name}`}
              label={field.optional ? `${field.label} (optional)` : field.label}
              type={field.secret ? 'password' : 'text'}
              autoComplete="off"
              value={config[field.name] ?? ''}
              onValue={(value) => setConfig({ ...config, [field.name]: value })}
              error={submit.error}
              field={`/config/${field.name}`}
              placeholder={field.placeholder}
              hint={field.hint}
            />
          ))}
        </div>
        {notifies && (
          <div class="row">
            <NotifyFields type={type} value={notify} onChange={setNotify} error={submit.error} />
          </div>
        )}
        <FormError
          error={submit.error}
          fields={[
            '/integration_type',
            '/description',
            ...fields.map((f) => `/config/${f.name}`),
            '/notify_on',
            '/notify_threshold',
          ]}
        />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Adding…' : 'Add integration'}
        </button>
      </form>
    </details>
  );
}
