import { useId, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api } from '../../api/client';
import type { TestListItem } from '../../api/resources';
import { bodyText } from '../../components/message/body';
import { forwardedHeaders } from '../../components/message/curl';
import type { Message } from '../../components/message/types';
import { ErrorBanner, Loading } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { paths } from '../../session';
import { newAssertion } from '../test/steps/draft';

const NEW_TEST = '__new__';

/** A request step that sends the message's request again and expects its status. */
export function stepOfMessage(message: Message): { step: Record<string, unknown>; warning?: string } {
  const request = message.request!;
  const headers: Record<string, string[]> = {};
  for (const [name, value] of forwardedHeaders(request.headers)) (headers[name] ??= []).push(value);
  const body = bodyText(request.body, request.body_encoding);
  const step: Record<string, unknown> = {
    step_type: 'request',
    method: request.method,
    url: request.url,
    headers,
    body: body ?? '',
    note: `From message ${message.uuid}`,
    assertions: message.response ? [{ ...newAssertion(), value: message.response.status }] : [],
  };
  return body === null ? { step, warning: 'The binary body was left out: a step body is text.' } : { step };
}

/** Picks a test (or a new one), appends the message as a request step, and opens the test. */
export function AddToTest(props: { bucket: string; message: Message; onClose: () => void }) {
  const [, navigate] = useLocation();
  const tests = useResource(
    (signal) => api.get<TestListItem[]>(`/buckets/${props.bucket}/tests`, { count: 1000 }, signal),
    [props.bucket],
  );
  const [choice, setChoice] = useState(NEW_TEST);
  const [name, setName] = useState(
    `${props.message.request!.method} ${props.message.request!.path}`.slice(0, 100),
  );
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const pickId = useId();
  const nameId = useId();
  const { step, warning } = stepOfMessage(props.message);

  async function add(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      let testId = choice;
      if (choice === NEW_TEST) {
        const created = await api.post<{ id: string }>(`/buckets/${props.bucket}/tests`, {
          name,
          steps: [step],
        });
        testId = created.id;
      } else {
        // New steps get their id from the server; POST appends at the end of the test.
        await api.post(`/buckets/${props.bucket}/tests/${choice}/steps`, step);
      }
      navigate(paths.test(props.bucket, testId));
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  }

  return (
    <form class="card add-to-test" aria-label="Add as a step to a test" onSubmit={(event) => void add(event)}>
      <h2>Add as a step to a test</h2>
      {warning && <p class="banner warning">{warning}</p>}
      {tests.loading && !tests.data ? (
        <Loading label="Loading tests…" />
      ) : (
        <div class="field">
          <label for={pickId}>Test</label>
          <select id={pickId} value={choice} onChange={(event) => setChoice(event.currentTarget.value)}>
            <option value={NEW_TEST}>New test…</option>
            {tests.data?.map((test) => (
              <option key={test.id} value={test.id}>
                {test.name}
              </option>
            ))}
          </select>
        </div>
      )}
      {choice === NEW_TEST && (
        <div class="field">
          <label for={nameId}>New test name</label>
          <input
            id={nameId}
            value={name}
            required
            maxLength={255}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
      )}
      <ErrorBanner error={error ?? tests.error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Adding…' : 'Add step'}
        </button>
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
