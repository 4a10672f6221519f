/**
 * The public page of a shared message (`/public/messages/<token>`): no sign-in; it reads the same
 * address as JSON and renders it with the dashboard's own message renderer, read-only.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { MessageView } from './components/message/message-view';
import type { Message } from './components/message/types';
import { applyTheme } from './components/theme';
import './styles.css';

type State = { kind: 'loading' } | { kind: 'ready'; message: Message } | { kind: 'failed'; text: string };

function PublicMessage() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  useEffect(() => {
    fetch(location.pathname, { headers: { Accept: 'application/json' }, cache: 'no-store' })
      .then(async (response) => {
        const body = (await response.json().catch(() => null)) as {
          data?: Message;
          error?: { message: string } | null;
        } | null;
        if (response.status === 404) {
          setState({
            kind: 'failed',
            text: 'This link does not point to a shared exchange, or it is no longer shared.',
          });
        } else if (!response.ok || !body?.data) {
          setState({
            kind: 'failed',
            text: body?.error?.message ?? `The server answered ${response.status}.`,
          });
        } else {
          setState({ kind: 'ready', message: body.data });
        }
      })
      .catch(() =>
        setState({ kind: 'failed', text: 'Vigil could not be reached. Reload the page to try again.' }),
      );
  }, []);

  const request = state.kind === 'ready' ? state.message.request : null;
  useEffect(() => {
    if (request) document.title = `${request.method} ${request.path} · Shared exchange · Vigil`;
  }, [request]);

  return (
    <main id="main" class="page public-message">
      <header class="page-header">
        <div>
          <p class="muted">Shared HTTP exchange</p>
          <h1>
            <span class="mono">
              {state.kind === 'ready'
                ? request
                  ? `${request.method} ${request.path}`
                  : `Response ${state.message.response?.status ?? ''}`
                : state.kind === 'failed'
                  ? 'Not found'
                  : 'Loading…'}
            </span>
          </h1>
        </div>
      </header>
      {state.kind === 'loading' && (
        <p class="loading" role="status">
          Loading the shared exchange…
        </p>
      )}
      {state.kind === 'failed' && (
        <div class="banner error" role="alert">
          {state.text}
        </div>
      )}
      {state.kind === 'ready' && <MessageView message={state.message} />}
      <footer class="muted public-footer">Recorded and shared with Vigil.</footer>
    </main>
  );
}

applyTheme();
render(<PublicMessage />, document.getElementById('root')!);
