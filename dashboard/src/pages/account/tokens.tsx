import { api } from '../../api/client';
import { dateTime, timeAgo } from '../../components/format';
import { Empty } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { ListState, useRowActions } from './shared';

interface AccessToken {
  id: string;
  kind: 'personal' | 'oauth' | 'dashboard';
  client_id: string | null;
  client_name: string | null;
  scopes: string[];
  created_at: number;
  last_used_at: number | null;
}

const KIND_LABELS: Record<AccessToken['kind'], string> = {
  personal: 'Personal',
  oauth: 'Granted to an application',
  dashboard: 'Dashboard sign-in',
};

/** The account's live access tokens (spec 5.4): what each may do, when it was last used, revoke. */
export function TokensSection() {
  const list = useResource((signal) => api.get<AccessToken[]>('/account/tokens', undefined, signal), []);
  const rows = useRowActions();

  const revoke = (token: AccessToken) => {
    const what = token.client_name ? `the token of ${token.client_name}` : 'this token';
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
                <th scope="col">Application</th>
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
                    {token.client_name ?? <span class="muted">none</span>}
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
                        token.client_name ? ` of ${token.client_name}` : ''
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
    </section>
  );
}
