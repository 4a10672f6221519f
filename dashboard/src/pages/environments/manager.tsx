import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Environment } from '../../api/resources';
import { Empty, ErrorBanner, Notice } from '../../components/ui';
import { EnvironmentEditor } from './editor';
import './environments.css';

type Editing = { kind: 'new' } | { kind: 'edit'; id: string } | null;

function summary(env: Environment, parents: readonly Environment[]): string {
  const parts: string[] = [];
  const parent = parents.find((p) => p.id === env.parent_environment_id);
  if (parent) parts.push(`inherits from ${parent.name}`);
  const count = Object.keys(env.initial_variables).length;
  parts.push(`${count} variable${count === 1 ? '' : 's'}`);
  if (env.regions.length) parts.push(`regions ${env.regions.join(', ')}`);
  if (env.remote_agents.length) parts.push(`${env.remote_agents.length} agent(s)`);
  if (env.webhooks?.length) parts.push(`${env.webhooks.length} webhook(s)`);
  return parts.join(' · ');
}

/**
 * A list of environments (a test's or the bucket's shared ones) with create, edit and delete; one
 * editor open at a time. `defaultId` and `onMakeDefault` add the test's default-environment choice.
 */
export function EnvironmentManager(props: {
  environments: readonly Environment[];
  collectionPath: string;
  parents: readonly Environment[];
  teamId: string | undefined;
  /** Called after any write, to load the list again. */
  onChanged: () => Promise<void>;
  defaultId?: string;
  onMakeDefault?: (id: string) => Promise<void>;
  noun: string;
}) {
  const [editing, setEditing] = useState<Editing>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  const act = async (work: () => Promise<void>, done: string) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await work();
      setNotice(done);
    } catch (failure) {
      setError(failure);
    }
  };

  const remove = (env: Environment) => {
    if (!confirm(`Delete the environment ${env.name}? Its schedules are deleted with it.`)) return;
    void act(async () => {
      await api.delete(`${props.collectionPath}/${env.id}`);
      if (editing?.kind === 'edit' && editing.id === env.id) setEditing(null);
      await props.onChanged();
    }, `${env.name} was deleted.`);
  };

  const editor = (environment?: Environment) => (
    <EnvironmentEditor
      key={environment?.id ?? 'new'}
      environment={environment}
      collectionPath={props.collectionPath}
      parents={props.parents}
      teamId={props.teamId}
      onCancel={() => setEditing(null)}
      onSaved={async (saved) => {
        setEditing(null);
        setNotice(`${saved.name} was saved.`);
        await props.onChanged();
      }}
    />
  );

  return (
    <div class="env-manager">
      <ErrorBanner error={error} />
      {notice && <Notice kind="success">{notice}</Notice>}
      {props.environments.length === 0 && <Empty>There are no {props.noun} yet.</Empty>}
      <ul class="env-list" aria-label={props.noun}>
        {props.environments.map((env) => (
          <li key={env.id} class="card env-item">
            <div class="env-item-head">
              <div>
                <h3 class="env-name">
                  {env.name}
                  {env.id === props.defaultId && <span class="badge">default</span>}
                </h3>
                <p class="muted env-summary">{summary(env, props.parents)}</p>
              </div>
              <div class="actions">
                {props.onMakeDefault && env.id !== props.defaultId && (
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() =>
                      void act(
                        () => props.onMakeDefault!(env.id),
                        `${env.name} is now the default environment.`,
                      )
                    }
                  >
                    Make default<span class="visually-hidden"> {env.name}</span>
                  </button>
                )}
                <button
                  type="button"
                  class="secondary small"
                  aria-expanded={editing?.kind === 'edit' && editing.id === env.id}
                  onClick={() =>
                    setEditing(
                      editing?.kind === 'edit' && editing.id === env.id ? null : { kind: 'edit', id: env.id },
                    )
                  }
                >
                  Edit<span class="visually-hidden"> {env.name}</span>
                </button>
                <button type="button" class="danger small" onClick={() => remove(env)}>
                  Delete<span class="visually-hidden"> {env.name}</span>
                </button>
              </div>
            </div>
            {editing?.kind === 'edit' && editing.id === env.id && editor(env)}
          </li>
        ))}
      </ul>
      {editing?.kind === 'new' ? (
        editor()
      ) : (
        <button type="button" onClick={() => setEditing({ kind: 'new' })}>
          New environment
        </button>
      )}
    </div>
  );
}
