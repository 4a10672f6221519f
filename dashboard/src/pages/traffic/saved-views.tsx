import type { Static } from '@sinclair/typebox';
import { useId, useState } from 'preact/hooks';
import type { ViewOut } from '../../../../src/api/views/schemas';
import { api } from '../../api/client';
import { useResource } from '../../components/use-resource';
import { ErrorBanner } from '../../components/ui';
import { type Filters, sameFilters, type StreamKey } from './filters';

// ViewOut serves `stream` as any string; the server only stores the streams this page offers.
export type SavedView = Omit<Static<typeof ViewOut>, 'stream'> & { stream: StreamKey };

/**
 * The bucket's saved views: pick one to open it, save the current stream and filters under a name,
 * delete the view that is open.
 */
export function SavedViews(props: {
  bucket: string;
  stream: StreamKey;
  filters: Filters;
  onOpen: (view: SavedView) => void;
}) {
  const views = useResource(
    (signal) => api.get<SavedView[]>(`/buckets/${props.bucket}/views`, undefined, signal),
    [props.bucket],
  );
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const pickId = useId();
  const nameId = useId();
  const current = views.data?.find((v) => v.stream === props.stream && sameFilters(v.filters, props.filters));

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.post(`/buckets/${props.bucket}/views`, {
        name: name.trim(),
        stream: props.stream,
        filters: props.filters,
      });
      setName('');
      await views.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  async function remove(view: SavedView) {
    if (!confirm(`Delete the saved view “${view.name}”?`)) return;
    setError(undefined);
    try {
      await api.delete(`/buckets/${props.bucket}/views/${view.id}`);
      await views.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <div class="saved-views">
      <div class="field">
        <label for={pickId}>Saved view</label>
        <select
          id={pickId}
          value={current?.id ?? ''}
          onChange={(event) => {
            const view = views.data?.find((v) => v.id === event.currentTarget.value);
            if (view) props.onOpen(view);
          }}
        >
          <option value="">{views.data?.length ? 'Choose a view…' : 'No saved views'}</option>
          {views.data?.map((view) => (
            <option key={view.id} value={view.id}>
              {view.name}
            </option>
          ))}
        </select>
      </div>
      {current && (
        <button type="button" class="danger small" onClick={() => void remove(current)}>
          Delete view “{current.name}”
        </button>
      )}
      <form class="save-view" onSubmit={(event) => void save(event)}>
        <div class="field">
          <label for={nameId}>New view name</label>
          <input
            id={nameId}
            value={name}
            maxLength={100}
            required
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </div>
        <button type="submit" class="secondary" disabled={busy || !name.trim()}>
          Save view
        </button>
      </form>
      <ErrorBanner error={error ?? views.error} />
    </div>
  );
}
