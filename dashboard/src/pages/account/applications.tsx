import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Application, ApplicationCreated, ApplicationWithSecret } from '../../api/resources';
import { dateTime } from '../../components/format';
import { Checkbox, Empty, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { FormError, ListState, type Secret, SecretPanel, useRowActions, useSubmit } from './shared';

interface Shown {
  title: string;
  clientId: string;
  secrets: Secret[];
}

const FIELDS = ['/name', '/website_url', '/callback_url', '/is_public'];

/**
 * Client applications (spec 5.2): create one (its secret and the owner's token are shown once),
 * rotate a secret, delete an application with every token issued to it.
 */
export function ApplicationsSection() {
  const list = useResource((signal) => api.get<Application[]>('/applications', undefined, signal), []);
  const [shown, setShown] = useState<Shown | null>(null);
  const rows = useRowActions();

  const rotate = (application: Application) =>
    rows.run(
      `Make a new client secret for ${application.name}? The current secret stops working at once.`,
      async () => {
        const rotated = await api.post<ApplicationWithSecret>(
          `/applications/${encodeURIComponent(application.client_id)}/secret`,
        );
        setShown({
          title: `New client secret of ${application.name}`,
          clientId: application.client_id,
          secrets: [{ label: 'Client secret', value: rotated.client_secret }],
        });
      },
    );

  const remove = (application: Application) =>
    rows.run(
      `Delete ${application.name}? Every access token issued to it stops working, including the ones of people who authorized it.`,
      async () => {
        await api.delete(`/applications/${encodeURIComponent(application.client_id)}`);
        if (shown?.clientId === application.client_id) setShown(null);
        await list.reload();
        return `${application.name} was deleted.`;
      },
    );

  return (
    <>
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading">Client applications</h2>
        <p class="muted">
          An application signs people in with OAuth 2.0 (authorization code flow). Creating one also gives you
          a personal access token for your own account.
        </p>
        {shown && (
          <SecretPanel title={shown.title} secrets={shown.secrets} onDismiss={() => setShown(null)}>
            <p class="muted">
              Client id: <code>{shown.clientId}</code>
            </p>
          </SecretPanel>
        )}
        <ListState
          list={list}
          rows={rows}
          loading="Loading applications…"
          empty={<Empty>You have no client applications yet.</Empty>}
        />
        {list.data && list.data.length > 0 && (
          <div class="table-wrap">
            <table data-testid="applications-table">
              <caption class="visually-hidden">Your client applications</caption>
              <thead>
                <tr>
                  <th scope="col">Application</th>
                  <th scope="col">Client id</th>
                  <th scope="col" class="hide-narrow">
                    Callback URL
                  </th>
                  <th scope="col" class="hide-narrow">
                    Created
                  </th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((application) => (
                  <tr key={application.client_id}>
                    <td class="wrap">
                      <a href={application.website_url} rel="noopener noreferrer" target="_blank">
                        {application.name}
                      </a>
                      {application.is_public && <span class="badge">public</span>}
                    </td>
                    <td class="wrap">
                      <code>{application.client_id}</code>
                    </td>
                    <td class="wrap hide-narrow">
                      <code>{application.callback_url}</code>
                    </td>
                    <td class="hide-narrow">{dateTime(application.created_at)}</td>
                    <td>
                      <div class="actions">
                        <button
                          type="button"
                          class="secondary small"
                          aria-label={`New secret for ${application.name}`}
                          onClick={() => void rotate(application)}
                        >
                          New secret
                        </button>
                        <button
                          type="button"
                          class="danger small"
                          aria-label={`Delete ${application.name}`}
                          onClick={() => void remove(application)}
                        >
                          Delete
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <CreateApplication
        onCreated={async (created) => {
          rows.setNotice(undefined);
          setShown({
            title: `${created.name} was created`,
            clientId: created.client_id,
            secrets: [
              { label: 'Client secret', value: created.client_secret },
              { label: 'Access token', value: created.access_token },
            ],
          });
          await list.reload();
        }}
      />
    </>
  );
}

function CreateApplication(props: {
  onCreated: (created: Application & { client_secret: string; access_token: string }) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [website, setWebsite] = useState('');
  const [callback, setCallback] = useState('');
  const [isPublic, setPublic] = useState(false);
  const submit = useSubmit();

  const create = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      const created = await api.post<ApplicationCreated>('/applications', {
        name,
        website_url: website,
        callback_url: callback,
        is_public: isPublic,
      });
      setName('');
      setWebsite('');
      setCallback('');
      setPublic(false);
      await props.onCreated(created);
    });
  };

  return (
    <section class="card" aria-labelledby="new-app-heading">
      <h3 id="new-app-heading">New application</h3>
      <form onSubmit={create} data-testid="new-application" noValidate>
        <div class="row">
          <TextField label="Name" value={name} onValue={setName} error={submit.error} field="/name" />
          <TextField
            label="Website URL"
            type="url"
            value={website}
            onValue={setWebsite}
            error={submit.error}
            field="/website_url"
            placeholder="https://example.com"
          />
          <TextField
            label="Callback URL"
            type="url"
            value={callback}
            onValue={setCallback}
            error={submit.error}
            field="/callback_url"
            placeholder="https://example.com/oauth/callback"
            hint="Where the authorization step sends people back with the code."
          />
        </div>
        <Checkbox
          label="Public client (a browser or mobile app that cannot keep a secret; must use PKCE)"
          checked={isPublic}
          onValue={setPublic}
        />
        <FormError error={submit.error} fields={FIELDS} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Creating…' : 'Create application'}
        </button>
      </form>
    </section>
  );
}
