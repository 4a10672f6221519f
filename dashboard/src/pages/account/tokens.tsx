import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { dateTime, timeAgo } from '../../components/format';
import { Checkbox, Empty, SelectField, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { FormError, ListState, SecretPanel, useRowActions, useSubmit } from './shared';

interface AccessToken {
  id: string;
  kind: 'personal' | 'oauth' | 'dashboard';
  client_id: string | null;
  client_name: string | null;
  name: string | null;
  scopes: string[];
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
}

/** What each scope lets a token do, in the order the API lists them. */
const SCOPES = [
  { scope: 'api:read', label: 'Read tests, results and buckets (api:read)' },
  { scope: 'test:write', label: 'Create and change tests (test:write)' },
  { scope: 'bucket:write', label: 'Create and change buckets (bucket:write)' },
  { scope: 'message:write', label: 'Send captured messages (message:write)' },
  { scope: 'account:email', label: "See the account's e-mail address (account:email)" },
] as const;

const DAY = 24 * 3600;
const LIFETIMES = [
  { value: '', label: 'Never (until revoked)' },
  { value: String(DAY), label: '1 day' },
  { value: String(7 * DAY), label: '7 days' },
  { value: String(30 * DAY), label: '30 days' },
  { value: String(90 * DAY), label: '90 days' },
  { value: String(365 * DAY), label: '1 year' },
];

const KIND_LABELS: Record<AccessToken['kind'], string> = {
  personal: 'Personal',
  oauth: 'Granted to an application',
  dashboard: 'Dashboard sign-in',
};

/** The account's live access tokens (spec 5.4): what each may do, when it was last used, revoke. */
export function TokensSection() {
  const list = useResource((signal) => api.get<AccessToken[]>('/account/tokens', undefined, signal), []);
  const rows = useRowActions();
  const [shown, setShown] = useState<{ name: string; token: string } | null>(null);

  const revoke = (token: AccessToken) => {
    const what = token.name
      ? `the token ${token.name}`
      : token.client_name
        ? `the token of ${token.client_name}`
        : 'this token';
    const warning =
      token.kind === 'dashboard'
        ? ' It is a dashboard sign-in: the browser using it is signed out (if it is this one, you will be asked to sign in again).'
        : ' Whatever uses it stops working at once.';
    return rows.run(`Revoke ${what}?${warning}`, async () => {
      await api.delete(`/account/tokens/${encodeURIComponent(token.id)}`);
      await list.reload();
      return 'The token was revoked.';
    });
  };

  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Access tokens</h2>
      <p class="muted">
        Tokens stay valid until revoked. Revoking a <em>dashboard sign-in</em> signs that browser out; this
        dashboard uses one of them too.
      </p>
      {shown && (
        <SecretPanel
          title={`Token ${shown.name} was created`}
          secrets={[{ label: 'Access token', value: shown.token }]}
          onDismiss={() => setShown(null)}
        />
      )}
      <ListState
        list={list}
        rows={rows}
        loading="Loading tokens…"
        empty={<Empty>There are no live tokens.</Empty>}
      />
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="tokens-table">
            <caption class="visually-hidden">Your live access tokens, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Name or application</th>
                <th scope="col" class="hide-narrow">
                  Scopes
                </th>
                <th scope="col" class="hide-narrow">
                  Created
                </th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((token) => (
                <tr key={token.id} data-token-id={token.id}>
                  <td>
                    <span class={`badge kind-${token.kind}`}>{KIND_LABELS[token.kind]}</span>
                  </td>
                  <td class="wrap">
                    {token.name ?? token.client_name ?? <span class="muted">none</span>}
                    {token.expires_at && (
                      <>
                        <br />
                        <span class="muted">expires {dateTime(token.expires_at)}</span>
                      </>
                    )}
                    {token.client_id && (
                      <>
                        <br />
                        <code class="muted">{token.client_id}</code>
                      </>
                    )}
                  </td>
                  <td class="wrap hide-narrow">
                    {token.scopes.map((scope) => (
                      <code key={scope} class="scope">
                        {scope}
                      </code>
                    ))}
                  </td>
                  <td class="hide-narrow">{dateTime(token.created_at)}</td>
                  <td title={dateTime(token.last_used_at)}>
                    {token.last_used_at ? timeAgo(token.last_used_at) : 'never'}
                  </td>
                  <td>
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Revoke ${KIND_LABELS[token.kind].toLowerCase()} token${
                        token.name ? ` ${token.name}` : token.client_name ? ` of ${token.client_name}` : ''
                      } created ${dateTime(token.created_at)}`}
                      onClick={() => void revoke(token)}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateToken
        onCreated={async (created) => {
          rows.setNotice(undefined);
          setShown({ name: created.name ?? '', token: created.token });
          await list.reload();
        }}
      />
    </section>
  );
}

/** A named personal token with the scopes and lifetime chosen; the answer holds it, shown once. */
function CreateToken(props: { onCreated: (created: AccessToken & { token: string }) => Promise<void> }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(() => new Set(['api:read']));
  const [lifetime, setLifetime] = useState('');
  const submit = useSubmit();

  const create = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      const created = await api.post<AccessToken & { token: string }>('/account/tokens', {
        name,
        scopes: SCOPES.map((s) => s.scope).filter((scope) => scopes.has(scope)),
        expires_in: lifetime ? Number(lifetime) : null,
      });
      setName('');
      await props.onCreated(created);
    });
  };

  const toggle = (scope: string, on: boolean) =>
    setScopes((current) => {
      const next = new Set(current);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });

  return (
    <section class="card" aria-labelledby="new-token-heading">
      <h3 id="new-token-heading">Create token</h3>
      <form onSubmit={create} data-testid="new-token" noValidate>
        <div class="row">
          <TextField
            label="Token name"
            value={name}
            onValue={setName}
            error={submit.error}
            field="/name"
            placeholder="CI pipeline"
          />
          <SelectField label="Expires" value={lifetime} options={LIFETIMES} onValue={setLifetime} />
        </div>
        <fieldset class="subsection">
          <legend>Scopes</legend>
          {SCOPES.map(({ scope, label }) => (
            <Checkbox
              key={scope}
              label={label}
              checked={scopes.has(scope)}
              onValue={(on) => toggle(scope, on)}
            />
          ))}
        </fieldset>
        <FormError error={submit.error} fields={['/name']} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Creating…' : 'Create token'}
        </button>
      </form>
    </section>
  );
}
