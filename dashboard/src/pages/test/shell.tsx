import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api } from '../../api/client';
import type { Test } from '../../api/resources';
import { timeAgo } from '../../components/format';
import { confirmLeaving } from '../../components/leave-guard';
import { ErrorBanner, Loading, ResultBadge, TabLinks } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { paths } from '../../session';
import { TestContext, testPath } from './context';
import { DeleteDialog, duplicateTest, EXPORT_FORMATS, type ExportFormat, exportToFile } from './manage';
import './tabs.css';
import { RunNow } from './run-now';

export const TEST_TABS = [
  { tab: '', label: 'Steps' },
  { tab: 'environments', label: 'Environments' },
  { tab: 'schedules', label: 'Schedules' },
  { tab: 'results', label: 'Results' },
  { tab: 'metrics', label: 'Metrics' },
  { tab: 'revisions', label: 'Revisions' },
] as const;

/** The frame of a test's views: its name, last result, "Run now", and the tabs. */
export function TestShell(props: {
  bucket: string;
  testId: string;
  tab: string;
  children: ComponentChildren;
}) {
  const { bucket, testId } = props;
  const test = useResource(
    (signal) => api.get<Test>(testPath(bucket, testId), undefined, signal),
    [bucket, testId],
  );
  if (test.error && !test.data) return <ErrorBanner error={test.error} onRetry={test.reload} />;
  if (!test.data) return <Loading label="Loading the test…" />;
  const current = test.data;
  return (
    <TestContext.Provider value={{ bucket, test: current, setTest: test.setData, reload: test.reload }}>
      <div class="test-header">
        <div>
          <p class="breadcrumb">
            <a href={`/app${paths.tests(bucket)}`}>Tests</a> /
          </p>
          <h1>{current.name}</h1>
          <p class="muted">
            Last result <ResultBadge result={current.last_run?.result} />{' '}
            {current.last_run && (
              <span>{timeAgo(current.last_run.finished_at ?? current.last_run.started_at)}</span>
            )}
          </p>
        </div>
        <div class="actions">
          <RunNow />
          <TestActions bucket={bucket} test={current} />
        </div>
      </div>
      <TabLinks
        label="Test sections"
        tabs={TEST_TABS.map(({ tab, label }) => ({
          href: paths.test(bucket, testId, tab || undefined),
          label,
          current: props.tab === tab,
        }))}
      />
      <section class="tab-panel">{props.children}</section>
    </TestContext.Provider>
  );
}

/** Duplicate, Export and Delete of the test on screen. */
function TestActions(props: { bucket: string; test: Test }) {
  const { bucket, test } = props;
  const [, navigate] = useLocation();
  const [busy, setBusy] = useState<'duplicate' | 'export' | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [deleting, setDeleting] = useState(false);
  const act = async (what: 'duplicate' | 'export', format: ExportFormat = 'vigil') => {
    setBusy(what);
    setError(undefined);
    try {
      if (what === 'export') await exportToFile(bucket, test.id, format);
      // The copy is made of the saved test; unsaved edits on screen would be left behind.
      else if (confirmLeaving()) navigate(paths.test(bucket, (await duplicateTest(bucket, test.id)).id));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <>
      <button
        type="button"
        class="secondary"
        disabled={busy !== undefined}
        onClick={() => void act('duplicate')}
      >
        {busy === 'duplicate' ? 'Duplicating…' : 'Duplicate test'}
      </button>
      <details class="export-menu">
        <summary class="button secondary">{busy === 'export' ? 'Exporting…' : 'Export test'}</summary>
        <ul role="list">
          {EXPORT_FORMATS.map(({ format, label }) => (
            <li key={format}>
              <button
                type="button"
                class="secondary"
                disabled={busy !== undefined}
                onClick={(event) => {
                  (event.currentTarget.closest('details') as HTMLDetailsElement | null)?.removeAttribute(
                    'open',
                  );
                  void act('export', format);
                }}
              >
                {label}
              </button>
            </li>
          ))}
        </ul>
      </details>
      <button type="button" class="danger" onClick={() => setDeleting(true)}>
        Delete test
      </button>
      <ErrorBanner error={error} />
      {deleting && (
        <DeleteDialog
          bucket={bucket}
          test={test}
          onClose={() => setDeleting(false)}
          onDeleted={() => navigate(paths.tests(bucket))}
        />
      )}
    </>
  );
}
