import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { RUN_RESULTS } from '../../../../src/domain/vocabulary';
import { api } from '../../api/client';
import type { Run } from '../../api/resources';
import { dateTime, ms, timeAgo, words } from '../../components/format';
import { Empty, ErrorBanner, Loading, ResultBadge, SelectField } from '../../components/ui';
import { usePolling } from '../../components/use-resource';
import { paths } from '../../session';
import { isActive, resultsPath } from '../runs/types';
import '../runs/runs.css';
import { useTest } from './context';

const PAGE = 50;

/** Newest first, one entry per run: `fresh` replaces what it holds, older runs stay. */
function merge(current: Run[], fresh: Run[]): Run[] {
  const byId = new Map(current.map((run) => [run.test_run_id, run]));
  for (const run of fresh) byId.set(run.test_run_id, run);
  return [...byId.values()].sort((a, b) => b.queued_at - a.queued_at);
}

function duration(run: Run): string {
  if (run.started_at === null || run.finished_at === null) return '—';
  return ms((run.finished_at - run.started_at) * 1000);
}

/** The test's runs, newest first, with filters over what is loaded and "Load older" paging. */
export function ResultsTab() {
  const { bucket, test } = useTest();
  const path = resultsPath(bucket, test.id);
  const [runs, setRuns] = useState<Run[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [older, setOlder] = useState<'idle' | 'loading' | 'done'>('idle');
  const [result, setResult] = useState('all');
  const [environment, setEnvironment] = useState('all');
  const [region, setRegion] = useState('all');
  const [cancelError, setCancelError] = useState<unknown>(undefined);

  const refresh = async () => {
    try {
      const fresh = await api.get<Run[]>(path, { count: PAGE });
      setRuns((current) => merge(current ?? [], fresh));
      if (fresh.length < PAGE) setOlder((state) => (state === 'idle' ? 'done' : state));
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  };

  useEffect(() => {
    setRuns(undefined);
    setOlder('idle');
    void refresh();
  }, [path]);

  const active = (runs ?? []).some((run) => isActive(run.result));
  usePolling(() => void refresh(), 2000, active);

  const loadOlder = async () => {
    const oldest = runs?.[runs.length - 1];
    if (!oldest) return;
    setOlder('loading');
    try {
      // `before` is exclusive and runs started together share their queued_at: ask from a hair past
      // the oldest run, so the rest of its batch comes too (the ones already shown come again).
      const page = await api.get<Run[]>(path, { count: PAGE, before: oldest.queued_at + 0.000001 });
      const known = new Set((runs ?? []).map((run) => run.test_run_id));
      const added = page.filter((run) => !known.has(run.test_run_id)).length;
      setRuns((current) => merge(current ?? [], page));
      setOlder(page.length < PAGE || added === 0 ? 'done' : 'idle');
    } catch (failure) {
      setError(failure);
      setOlder('idle');
    }
  };

  const cancel = async (run: Run) => {
    setCancelError(undefined);
    try {
      await api.delete(`${path}/${run.test_run_id}`);
      await refresh();
    } catch (failure) {
      setCancelError(failure);
    }
  };

  const environments = useMemo(() => {
    const names = new Map<string, string>();
    for (const env of test.environments) names.set(env.id, env.name);
    for (const run of runs ?? []) names.set(run.environment_id, run.environment_name);
    return [...names.entries()].map(([value, label]) => ({ value, label }));
  }, [runs, test.environments]);
  const regions = useMemo(() => [...new Set((runs ?? []).map((run) => run.region))].sort(), [runs]);

  if (error && !runs) return <ErrorBanner error={error} onRetry={() => void refresh()} />;
  if (!runs) return <Loading label="Loading results…" />;

  const shown = runs.filter(
    (run) =>
      (result === 'all' || run.result === result) &&
      (environment === 'all' || run.environment_id === environment) &&
      (region === 'all' || run.region === region),
  );

  return (
    <div>
      <h2 class="visually-hidden">Results</h2>
      <ErrorBanner error={error} onRetry={() => void refresh()} />
      <ErrorBanner error={cancelError} />
      <div class="filters" role="group" aria-label="Filter results">
        <SelectField
          label="Result"
          value={result}
          options={[
            { value: 'all', label: 'All results' },
            ...RUN_RESULTS.map((value) => ({ value, label: value })),
          ]}
          onValue={setResult}
        />
        <SelectField
          label="Environment"
          value={environment}
          options={[{ value: 'all', label: 'All environments' }, ...environments]}
          onValue={setEnvironment}
        />
        <SelectField
          label="Region"
          value={region}
          options={[
            { value: 'all', label: 'All regions' },
            ...regions.map((value) => ({ value, label: value })),
          ]}
          onValue={setRegion}
        />
      </div>
      <p class="muted" role="status" aria-live="polite">
        {shown.length === runs.length
          ? `${runs.length} run${runs.length === 1 ? '' : 's'} loaded`
          : `${shown.length} of ${runs.length} loaded runs match`}
        {active && ' · refreshing while runs are in progress'}
      </p>
      {runs.length === 0 ? (
        <Empty>This test has not run yet. Use “Run now” above, a schedule or the trigger URL.</Empty>
      ) : shown.length === 0 ? (
        <Empty>No loaded run matches these filters.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="results-table">
            <caption class="visually-hidden">Runs of the test, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Result</th>
                <th scope="col">Environment</th>
                <th scope="col" class="hide-narrow">
                  Region
                </th>
                <th scope="col" class="hide-narrow">
                  Source
                </th>
                <th scope="col">Started</th>
                <th scope="col" class="hide-narrow">
                  Duration
                </th>
                <th scope="col">Assertions</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((run) => (
                <tr key={run.test_run_id} data-run={run.test_run_id} data-result={run.result}>
                  <td>
                    <Link
                      href={paths.result(bucket, test.id, run.test_run_id)}
                      aria-label={`${run.result} run of ${dateTime(run.started_at ?? run.queued_at)}`}
                    >
                      <ResultBadge result={run.result} />
                    </Link>
                  </td>
                  <td>{run.environment_name}</td>
                  <td class="hide-narrow">{run.region}</td>
                  <td class="hide-narrow">{words(run.source)}</td>
                  <td title={dateTime(run.started_at ?? run.queued_at)}>
                    {run.started_at === null ? `queued ${timeAgo(run.queued_at)}` : timeAgo(run.started_at)}
                  </td>
                  <td class="hide-narrow num">{duration(run)}</td>
                  <td>
                    <span class="pass">{run.assertions_passed} passed</span>
                    {run.assertions_failed > 0 && <span class="fail">, {run.assertions_failed} failed</span>}
                  </td>
                  <td>
                    {isActive(run.result) ? (
                      <button type="button" class="danger small" onClick={() => void cancel(run)}>
                        Cancel<span class="visually-hidden"> run queued {timeAgo(run.queued_at)}</span>
                      </button>
                    ) : (
                      <Link href={paths.result(bucket, test.id, run.test_run_id)}>
                        Open<span class="visually-hidden"> run of {dateTime(run.started_at)}</span>
                      </Link>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="load-more">
        {older !== 'done' && runs.length > 0 && (
          <button
            type="button"
            class="secondary"
            disabled={older === 'loading'}
            onClick={() => void loadOlder()}
          >
            {older === 'loading' ? 'Loading…' : 'Load older'}
          </button>
        )}
        {older === 'done' && runs.length > 0 && <span class="muted">All runs are loaded.</span>}
      </div>
    </div>
  );
}
