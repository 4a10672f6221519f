import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api } from '../../api/client';
import { bytes, dateTime, ms } from '../../components/format';
import { MessageStatus } from '../../components/message/message-view';
import { saveFile } from '../../components/save-file';
import type { Message, MessageListItem } from '../../components/message/types';
import { Empty, ErrorBanner, Loading, PageHeader, TabLinks } from '../../components/ui';
import { usePolling } from '../../components/use-resource';
import { paths, useBucket } from '../../session';
import { CapturePanel } from './capture-panel';
import {
  type Filters,
  filtersFromSearch,
  isStream,
  listQuery,
  searchOf,
  STREAMS,
  type StreamKey,
  WINDOWS,
  windowSince,
} from './filters';
import { fetchHarWindow, mapLimit, toHar } from './har';
import { SavedViews } from './saved-views';
import { ImportPreviewDialog } from '../test/import-file';
import './traffic.css';

/** Rows per page; the DOM holds only the pages loaded so far. */
export const PAGE_SIZE = 100;
const POLL_MS = 2000;
/** Polling looks back this far before the newest row, for exchanges stored after a later one started. */
const POLL_OVERLAP_S = 5;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const STATUS_OPTIONS = [
  { value: '', label: 'Any status' },
  { value: '1xx', label: '1xx' },
  { value: '2xx', label: '2xx success' },
  { value: '3xx', label: '3xx redirect' },
  { value: '4xx', label: '4xx client error' },
  { value: '5xx', label: '5xx server error' },
  { value: 'none', label: 'No response' },
];

interface ListState {
  rows: MessageListItem[];
  loading: boolean;
  loadingOlder: boolean;
  hasMore: boolean;
  error: unknown;
  /** Rows that arrived by polling, highlighted once. */
  fresh: Set<string>;
  announcement: string;
}

const initialState = (): ListState => ({
  rows: [],
  loading: true,
  loadingOlder: false,
  hasMore: false,
  error: undefined,
  fresh: new Set(),
  announcement: '',
});

function pathOf(item: MessageListItem): string {
  const url = item.request?.url;
  if (!url) return '—';
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return item.request?.path ?? url;
  }
}

function clock(seconds: number): string {
  return new Date(seconds * 1000).toLocaleTimeString(undefined, { hour12: false });
}

/**
 * A bucket's traffic: the four streams, newest first, live (polled every 2 s), filtered through the
 * address bar, paged with `before` as the list scrolls; selection and HAR export; capture helpers.
 */
export function TrafficPage(props: { bucket: string; stream: string }) {
  const bucket = useBucket(props.bucket);
  if (!bucket) return <Empty>There is no bucket “{props.bucket}” in this account.</Empty>;
  if (!isStream(props.stream)) return <Empty>There is no such stream.</Empty>;
  return <Stream bucketKey={props.bucket} stream={props.stream} />;
}

function Stream(props: { bucketKey: string; stream: StreamKey }) {
  const { bucketKey, stream } = props;
  const bucket = useBucket(bucketKey)!;
  const search = useSearch();
  const [, navigate] = useLocation();
  const filters = useMemo(() => filtersFromSearch(search), [search]);
  const filterKey = searchOf(filters);
  const [state, setState] = useState<ListState>(initialState);
  const stateRef = useRef(state);
  stateRef.current = state;
  const generation = useRef(0);
  const polling = useRef(false);
  const [live, setLive] = useState(true);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [exporting, setExporting] = useState(false);
  const [turning, setTurning] = useState<string[] | undefined>(undefined);
  const [exportError, setExportError] = useState<unknown>(undefined);
  const base = `/buckets/${bucketKey}/${stream}`;
  const pageSize = PAGE_SIZE;
  // Lists are newest first by the exchange's time; the Shared list by the time of sharing.
  const orderTime = (row: MessageListItem) => (stream === 'shared' ? (row.shared_at ?? 0) : row.timestamp);

  const show = (next: Filters) => navigate(paths.traffic(bucketKey, stream) + searchOf(next));

  async function loadFirst() {
    const run = ++generation.current;
    setState(initialState());
    setSelected(new Set());
    try {
      const rows = await api.get<MessageListItem[]>(base, { ...listQuery(filters), count: pageSize });
      if (run !== generation.current) return;
      setState({
        ...initialState(),
        rows,
        loading: false,
        hasMore: rows.length === pageSize,
      });
    } catch (error) {
      if (run !== generation.current) return;
      setState({ ...initialState(), loading: false, error });
    }
  }

  useEffect(() => {
    void loadFirst();
    return () => void generation.current++;
  }, [bucketKey, stream, filterKey]);

  async function loadOlder() {
    const current = stateRef.current;
    const oldest = current.rows[current.rows.length - 1];
    if (!oldest || !current.hasMore || current.loadingOlder || current.loading) return;
    const run = generation.current;
    setState((s) => ({ ...s, loadingOlder: true, error: undefined }));
    try {
      // `before` is exclusive: a hair past the oldest row, so rows sharing its time are not skipped;
      // one more than a page, as the oldest row comes again.
      const page = await api.get<MessageListItem[]>(base, {
        ...listQuery(filters),
        count: pageSize + 1,
        before: orderTime(oldest) + 0.000001,
      });
      if (run !== generation.current) return;
      setState((s) => {
        const seen = new Set(s.rows.map((r) => r.uuid));
        const older = page.filter((r) => !seen.has(r.uuid));
        return {
          ...s,
          rows: [...s.rows, ...older],
          loadingOlder: false,
          hasMore: page.length === pageSize + 1 && older.length > 0,
        };
      });
    } catch (error) {
      if (run !== generation.current) return;
      setState((s) => ({ ...s, loadingOlder: false, error }));
    }
  }
  const loadOlderRef = useRef(loadOlder);
  loadOlderRef.current = loadOlder;

  async function poll() {
    const current = stateRef.current;
    if (polling.current || current.loading) return;
    polling.current = true;
    const run = generation.current;
    try {
      const query = listQuery(filters);
      const newest = current.rows[0];
      if (newest) {
        query.since = Math.max(orderTime(newest) - POLL_OVERLAP_S, windowSince(filters.window) ?? 0);
      }
      const page = await api.get<MessageListItem[]>(base, { ...query, count: PAGE_SIZE });
      if (run !== generation.current) return;
      setState((s) => {
        const seen = new Set(s.rows.map((r) => r.uuid));
        const added = page.filter((r) => !seen.has(r.uuid));
        if (added.length === 0) return s.error ? { ...s, error: undefined } : s;
        const rows = [...added, ...s.rows];
        rows.sort((a, b) => orderTime(b) - orderTime(a));
        const n = added.length;
        return {
          ...s,
          rows,
          error: undefined,
          fresh: new Set(added.map((r) => r.uuid)),
          announcement: `${n} new message${n === 1 ? '' : 's'}`,
        };
      });
    } catch (error) {
      if (run === generation.current) setState((s) => ({ ...s, error }));
    } finally {
      polling.current = false;
    }
  }
  usePolling(() => void poll(), POLL_MS, live && !state.loading);

  // Loads the next page when the end of the list scrolls into view.
  const sentinel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const target = sentinel.current;
    if (!target || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(
      (entries) => {
        // A report queued before the first page was drawn is stale: check where the end is now.
        const near = target.getBoundingClientRect().top < innerHeight + 400;
        if (near && entries.some((entry) => entry.isIntersecting)) void loadOlderRef.current();
      },
      { rootMargin: '400px' },
    );
    observer.observe(target);
    return () => observer.disconnect();
  }, [state.hasMore, state.loading]);

  async function exportSelection() {
    setExporting(true);
    setExportError(undefined);
    try {
      const details = await mapLimit([...selected], 6, (uuid) =>
        api.get<Message>(`/buckets/${bucketKey}/messages/${uuid}`),
      );
      saveFile(
        new Blob([JSON.stringify(toHar(details), null, 2)], { type: 'application/json' }),
        `${bucketKey}-selection.har`,
      );
    } catch (error) {
      setExportError(error);
    } finally {
      setExporting(false);
    }
  }

  async function exportWindow() {
    setExporting(true);
    setExportError(undefined);
    try {
      saveFile(await fetchHarWindow(bucketKey, listQuery(filters)), `${bucketKey}.har`);
    } catch (error) {
      setExportError(error);
    } finally {
      setExporting(false);
    }
  }

  const allSelected = state.rows.length > 0 && state.rows.every((r) => selected.has(r.uuid));
  const toggle = (uuid: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(uuid);
      else next.delete(uuid);
      return next;
    });

  return (
    <>
      <PageHeader
        title="Traffic"
        subtitle={`Recorded HTTP exchanges of ${bucket.name}, newest first.`}
        actions={
          <label class="live-toggle">
            <input
              type="checkbox"
              checked={live}
              onChange={(event) => setLive(event.currentTarget.checked)}
            />
            Live updates
          </label>
        }
      />
      <TabLinks
        label="Streams"
        tabs={STREAMS.map((s) => ({
          href: paths.traffic(bucketKey, s.key) + filterKey,
          label: s.label,
          current: s.key === stream,
        }))}
      />
      <CapturePanel bucket={bucket} open={stream === 'captures'} />
      <FilterBar filters={filters} onApply={show} />
      <SavedViews
        bucket={bucketKey}
        stream={stream}
        filters={filters}
        onOpen={(view) => navigate(paths.traffic(bucketKey, view.stream) + searchOf(view.filters))}
      />
      <div class="stream-toolbar">
        <span class="muted" data-testid="row-count">
          {state.rows.length} loaded{state.hasMore ? ', more older' : ''}
        </span>
        <span role="status" aria-live="polite" class="new-count">
          {state.announcement}
        </span>
        <div class="actions">
          <button
            type="button"
            class="secondary small"
            disabled={selected.size === 0 || exporting}
            onClick={() => void exportSelection()}
          >
            Export selection as HAR{selected.size ? ` (${selected.size})` : ''}
          </button>
          <button
            type="button"
            class="secondary small"
            disabled={exporting}
            onClick={() => void exportWindow()}
          >
            Export window as HAR
          </button>
          <button
            type="button"
            class="secondary small"
            disabled={selected.size === 0 || selected.size > 50}
            title={selected.size > 50 ? 'At most 50 messages make one test' : undefined}
            onClick={() =>
              // Oldest first: the order the requests were sent in.
              setTurning(
                state.rows
                  .filter((row) => selected.has(row.uuid))
                  .sort((a, b) => a.timestamp - b.timestamp)
                  .map((row) => row.uuid),
              )
            }
          >
            Turn into a test{selected.size ? ` (${selected.size})` : ''}
          </button>
        </div>
      </div>
      {turning && (
        <ImportPreviewDialog
          bucket={bucketKey}
          title={`Turn ${turning.length} message${turning.length === 1 ? '' : 's'} into a test`}
          body={{ format: 'messages', message_ids: turning }}
          chainOption
          onClose={() => setTurning(undefined)}
          onCreated={(answer) => {
            setTurning(undefined);
            const first = answer.tests[0];
            if (first?.id) navigate(paths.test(bucketKey, first.id));
          }}
        />
      )}
      <ErrorBanner error={exportError} />
      <ErrorBanner error={state.error} onRetry={() => void (state.rows.length ? poll() : loadFirst())} />
      {state.loading ? (
        <Loading label="Loading messages…" />
      ) : state.rows.length === 0 ? (
        <Empty>
          {filterKey ? 'No messages match these filters.' : 'No messages yet.'}{' '}
          {live && 'New ones appear here as they arrive.'}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="stream-table">
            <caption class="visually-hidden">{STREAMS.find((s) => s.key === stream)!.label}</caption>
            <thead>
              <tr>
                <th scope="col" class="select-col">
                  <input
                    type="checkbox"
                    aria-label="Select all loaded messages"
                    checked={allSelected}
                    onChange={(event) =>
                      setSelected(
                        event.currentTarget.checked ? new Set(state.rows.map((r) => r.uuid)) : new Set(),
                      )
                    }
                  />
                </th>
                <th scope="col">Time</th>
                <th scope="col">Method</th>
                <th scope="col">Status</th>
                <th scope="col" class="hide-narrow">
                  Host
                </th>
                <th scope="col">Path</th>
                <th scope="col" class="hide-narrow">
                  Duration
                </th>
                <th scope="col" class="hide-narrow">
                  Size
                </th>
              </tr>
            </thead>
            <tbody>
              {state.rows.map((row) => (
                <Row
                  key={row.uuid}
                  bucket={bucketKey}
                  row={row}
                  fresh={state.fresh.has(row.uuid)}
                  selected={selected.has(row.uuid)}
                  onSelect={toggle}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div ref={sentinel} class="stream-end">
        {state.hasMore && (
          <button
            type="button"
            class="secondary"
            disabled={state.loadingOlder}
            onClick={() => void loadOlder()}
          >
            {state.loadingOlder ? 'Loading older messages…' : 'Load older'}
          </button>
        )}
      </div>
    </>
  );
}

function Row(props: {
  bucket: string;
  row: MessageListItem;
  fresh: boolean;
  selected: boolean;
  onSelect: (uuid: string, on: boolean) => void;
}) {
  const { row } = props;
  const method = row.request?.method ?? '—';
  const path = pathOf(row);
  const duration = row.response?.response_time;
  return (
    <tr class={`${props.fresh ? 'fresh' : ''}${props.selected ? ' selected' : ''}`} data-uuid={row.uuid}>
      <td class="select-col">
        <input
          type="checkbox"
          aria-label={`Select ${method} ${path}`}
          checked={props.selected}
          onChange={(event) => props.onSelect(row.uuid, event.currentTarget.checked)}
        />
      </td>
      <td class="nowrap">
        <time dateTime={new Date(row.timestamp * 1000).toISOString()} title={dateTime(row.timestamp)}>
          {clock(row.timestamp)}
        </time>
      </td>
      <td class="mono">{method}</td>
      <td>
        <MessageStatus source={row.source} status={row.response?.status} reason={row.response?.reason} />
      </td>
      <td class="hide-narrow mono cell-host">{row.request?.host ?? '—'}</td>
      <td class="mono cell-path">
        <Link href={paths.message(props.bucket, row.uuid)}>{path}</Link>
      </td>
      <td class="hide-narrow nowrap">
        {duration === null || duration === undefined ? '—' : ms(duration * 1000)}
      </td>
      <td class="hide-narrow nowrap">{bytes(row.response?.size_bytes ?? row.request?.size_bytes)}</td>
    </tr>
  );
}

function FilterBar(props: { filters: Filters; onApply: (filters: Filters) => void }) {
  const [draft, setDraft] = useState<Filters>(props.filters);
  useEffect(() => setDraft(props.filters), [searchOf(props.filters)]);
  const set = (name: keyof Filters, value: string) => setDraft((d) => ({ ...d, [name]: value }));
  const applyNow = (name: keyof Filters, value: string) => props.onApply({ ...draft, [name]: value });
  const status = draft.status ?? '';
  const statusOptions = STATUS_OPTIONS.some((o) => o.value === status)
    ? STATUS_OPTIONS
    : [...STATUS_OPTIONS, { value: status, label: status }];
  const method = draft.method ?? '';
  const methods = METHODS.includes(method.toUpperCase()) || !method ? METHODS : [...METHODS, method];
  return (
    <form
      class="filter-bar card"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        props.onApply(draft);
      }}
    >
      <div class="field">
        <label for="filter-window">Time</label>
        <select
          id="filter-window"
          value={draft.window ?? ''}
          onChange={(e) => applyNow('window', e.currentTarget.value)}
        >
          <option value="">All time</option>
          {Object.keys(WINDOWS).map((w) => (
            <option key={w} value={w}>
              Last {w}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-method">Method</label>
        <select
          id="filter-method"
          value={method.toUpperCase()}
          onChange={(e) => applyNow('method', e.currentTarget.value)}
        >
          <option value="">Any method</option>
          {methods.map((m) => (
            <option key={m} value={m.toUpperCase()}>
              {m.toUpperCase()}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={status} onChange={(e) => applyNow('status', e.currentTarget.value)}>
          {statusOptions.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-host">Host</label>
        <input
          id="filter-host"
          value={draft.host ?? ''}
          placeholder="api.example.com"
          onInput={(e) => set('host', e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="filter-path">Path starts with</label>
        <input
          id="filter-path"
          value={draft.path ?? ''}
          placeholder="/v1/"
          onInput={(e) => set('path', e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="filter-q">URL contains</label>
        <input
          id="filter-q"
          type="search"
          value={draft.q ?? ''}
          onInput={(e) => set('q', e.currentTarget.value)}
        />
      </div>
      <div class="actions">
        <button type="submit">Apply</button>
        <button type="button" class="secondary" onClick={() => props.onApply({})}>
          Clear
        </button>
      </div>
    </form>
  );
}
