import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Agent, AgentCreated } from '../../api/resources';
import { dateTime, timeAgo } from '../../components/format';
import { Empty, TextField } from '../../components/ui';
import { usePolling, useResource } from '../../components/use-resource';
import { useSession } from '../../session';
import type { RegionInfo } from '../runs/types';
import { FormError, ListState, SecretPanel, useRowActions, useSubmit } from './shared';

/** Remote agents of every team, and the regions the server's live workers serve. */
export function AgentsSection() {
  const { account } = useSession();
  return (
    <>
      <h2>Remote agents</h2>
      <p class="muted">
        A remote agent (<code>vigil agent</code>) runs the tests meant for it on a machine of your own and
        reports back over HTTPS. Environments choose agents in their settings.
      </p>
      {account.teams.length === 0 && <Empty>You are not a member of any team.</Empty>}
      {account.teams.map((team) => (
        <TeamAgents key={team.id} team={team} />
      ))}
      <Regions />
    </>
  );
}

function StatusBadge(props: { status: Agent['status'] }) {
  return (
    <span class={`badge ${props.status === 'online' ? 'result-pass' : 'status-offline'}`}>
      {props.status}
    </span>
  );
}

function TeamAgents(props: { team: { id: string; name: string } }) {
  const { team } = props;
  const base = `/teams/${encodeURIComponent(team.id)}/agents`;
  const list = useResource((signal) => api.get<Agent[]>(base, undefined, signal), [base]);
  usePolling(() => void list.reload(), 15_000, list.data !== undefined);
  const [token, setToken] = useState<{ agent: Agent; token: string } | null>(null);
  const rows = useRowActions();
  const headingId = `agents-${team.id}`;

  const remove = (agent: Agent) =>
    rows.run(`Delete the agent ${agent.name}? Its token stops working at once.`, async () => {
      await api.delete(`${base}/${encodeURIComponent(agent.id)}`);
      if (token?.agent.id === agent.id) setToken(null);
      await list.reload();
      return `${agent.name} was deleted.`;
    });

  return (
    <section class="card" aria-labelledby={headingId} data-team={team.id}>
      <h3 id={headingId}>{team.name}</h3>
      {token && (
        <SecretPanel
          title={`Token of the agent ${token.agent.name}`}
          secrets={[{ label: 'Agent token', value: token.token }]}
          onDismiss={() => setToken(null)}
        >
          <p>Start the agent with it:</p>
          <pre>{`VIGIL_AGENT_TOKEN=${token.token} npx vigil agent --url ${location.origin}`}</pre>
        </SecretPanel>
      )}
      <ListState
        list={list}
        rows={rows}
        loading="Loading agents…"
        empty={<p class="muted">This team has no agents yet.</p>}
      />
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="agents-table">
            <caption class="visually-hidden">Agents of {team.name}</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Status</th>
                <th scope="col">Region</th>
                <th scope="col" class="hide-narrow">
                  Version
                </th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((agent) => (
                <tr key={agent.id}>
                  <td class="wrap">
                    {agent.name}
                    {agent.hostname && <div class="muted small-text">{agent.hostname}</div>}
                  </td>
                  <td>
                    <StatusBadge status={agent.status} />
                  </td>
                  <td>
                    <code>{agent.region}</code>
                  </td>
                  <td class="hide-narrow">{agent.version ?? <span class="muted">—</span>}</td>
                  <td title={dateTime(agent.last_seen_at)}>
                    {agent.last_seen_at ? timeAgo(agent.last_seen_at) : 'never'}
                  </td>
                  <td>
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Delete agent ${agent.name}`}
                      onClick={() => void remove(agent)}
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
      <NewAgent
        base={base}
        teamName={team.name}
        onCreated={async (created) => {
          rows.setNotice(undefined);
          setToken({ agent: created, token: created.token });
          await list.reload();
        }}
      />
    </section>
  );
}

function NewAgent(props: {
  base: string;
  teamName: string;
  onCreated: (created: Agent & { token: string }) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [region, setRegion] = useState('');
  const submit = useSubmit();

  const create = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      const created = await api.post<AgentCreated>(props.base, {
        name,
        ...(region.trim() && { region: region.trim() }),
      });
      setName('');
      setRegion('');
      await props.onCreated(created);
    });
  };

  return (
    <details class="new-item">
      <summary>Register an agent for {props.teamName}</summary>
      <form onSubmit={create} noValidate data-testid="new-agent">
        <div class="row">
          <TextField label="Name" value={name} onValue={setName} error={submit.error} field="/name" />
          <TextField
            label="Region label (optional)"
            value={region}
            onValue={setRegion}
            error={submit.error}
            field="/region"
            placeholder="remote"
            hint="Lower-case letters, digits and dashes; runs and metrics show it. Default remote."
          />
        </div>
        <FormError error={submit.error} fields={['/name', '/region']} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Registering…' : 'Register agent'}
        </button>
      </form>
    </details>
  );
}

function Regions() {
  const list = useResource(
    (signal) =>
      api.get<{ regions: RegionInfo[] }>('/regions', undefined, signal).then((data) => data.regions),
    [],
  );
  return (
    <section class="card" aria-labelledby="regions-heading">
      <h3 id="regions-heading">Regions of the server's workers</h3>
      <p class="muted">
        Regions that live worker processes announce; an environment's <code>regions</code> pick among them.{' '}
        <code>*</code> is a worker that serves every region.
      </p>
      <ListState
        list={list}
        loading="Loading regions…"
        empty={<p class="muted">No worker is announcing a region now.</p>}
      />
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="regions-table">
            <caption class="visually-hidden">Regions of live workers</caption>
            <thead>
              <tr>
                <th scope="col">Region</th>
                <th scope="col">Workers</th>
                <th scope="col">Concurrency</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((region) => (
                <tr key={region.region}>
                  <td>
                    <code>{region.region}</code>
                  </td>
                  <td>{region.workers}</td>
                  <td>{region.concurrency}</td>
                  <td title={dateTime(region.last_seen_at)}>{timeAgo(region.last_seen_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
