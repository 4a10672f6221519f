import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Integration, IntegrationType } from '../../api/resources';
import { dateTime } from '../../components/format';
import { Empty, SelectField, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { useSession } from '../../session';
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
const TYPES: Record<IntegrationType, { label: string; fields: ConfigField[] }> = {
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
  const submit = useSubmit();
  const fields = TYPES[type].fields;

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
    };
    await submit.run(async () => {
      const created = await api.post<Integration>(props.base, body);
      setDescription('');
      setConfig({});
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
        <FormError
          error={submit.error}
          fields={['/integration_type', '/description', ...fields.map((f) => `/config/${f.name}`)]}
        />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Adding…' : 'Add integration'}
        </button>
      </form>
    </details>
  );
}
