import { useMemo, useRef, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api } from '../api/client';
import type { Test, TestSummary } from '../api/resources';
import { dateTime, timeAgo } from '../components/format';
import { Sparkline } from '../components/sparkline';
import { ImportPreviewDialog, isOtherFormat } from './test/import-file';
import { DeletedNotice, DeleteDialog, ImportDialog, type ParsedImport, parseImport } from './test/manage';
import {
  Empty,
  ErrorBanner,
  Loading,
  Notice,
  PageHeader,
  ResultBadge,
  SelectField,
  TextField,
} from '../components/ui';
import { usePolling, useResource } from '../components/use-resource';
import { paths, useBucket } from '../session';

const PAGE = 1000;
const STATUS_FILTERS = [
  { value: 'all', label: 'All results' },
  { value: 'pass', label: 'Passing' },
  { value: 'fail', label: 'Failing' },
  { value: 'never', label: 'Never run' },
  { value: 'scheduled', label: 'Scheduled' },
  { value: 'unscheduled', label: 'Not scheduled' },
] as const;
type StatusFilter = (typeof STATUS_FILTERS)[number]['value'];

/** Every test of the bucket, a page of 1,000 at a time. */
async function loadSummaries(bucket: string, signal: AbortSignal): Promise<TestSummary[]> {
  const all: TestSummary[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await api.get<TestSummary[]>(
      `/buckets/${bucket}/test-summaries`,
      { count: PAGE, offset },
      signal,
    );
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

function matches(test: TestSummary, status: StatusFilter, search: string): boolean {
  if (search) {
    const needle = search.toLowerCase();
    if (
      !test.name.toLowerCase().includes(needle) &&
      !(test.description ?? '').toLowerCase().includes(needle)
    ) {
      return false;
    }
  }
  switch (status) {
    case 'all':
      return true;
    case 'pass':
    case 'fail':
      return test.last_run?.result === status;
    case 'never':
      return test.last_run === null;
    case 'scheduled':
      return test.schedules.length > 0;
    case 'unscheduled':
      return test.schedules.length === 0;
  }
}

/** The tests of a bucket: last result, when it ran, schedules and a response-time sparkline. */
export function TestsListPage(props: { bucket: string }) {
  const bucket = useBucket(props.bucket);
  const tests = useResource((signal) => loadSummaries(props.bucket, signal), [props.bucket]);
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<StatusFilter>('all');
  const [importing, setImporting] = useState<{ fileName: string; parsed: ParsedImport } | undefined>(
    undefined,
  );
  // A file of another tool (Postman, OpenAPI, curl, HAR): previewed and created by the API.
  const [importingFile, setImportingFile] = useState<{ fileName: string; text: string } | undefined>(
    undefined,
  );
  const [deleting, setDeleting] = useState<TestSummary | undefined>(undefined);
  const [restored, setRestored] = useState<Test | undefined>(undefined);
  const fileInput = useRef<HTMLInputElement>(null);
  const [, navigate] = useLocation();
  // Results change as schedules fire; refresh quietly while the tab is visible.
  usePolling(() => void tests.reload(), 30_000, tests.data !== undefined);

  const shown = useMemo(
    () => (tests.data ?? []).filter((test) => matches(test, status, search.trim())),
    [tests.data, status, search],
  );

  if (!bucket)
    return <ErrorBanner error={new Error(`There is no bucket ${props.bucket} in this account.`)} />;

  const createTest = () => navigate(paths.newTest(props.bucket));

  const chooseImport = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    const text = await file.text();
    const parsed = parseImport(text);
    if (!parsed.ok && isOtherFormat(text)) setImportingFile({ fileName: file.name, text });
    else setImporting({ fileName: file.name, parsed });
  };

  return (
    <>
      <PageHeader
        title="Tests"
        subtitle={bucket.name}
        actions={
          <>
            <button type="button" onClick={createTest}>
              New test
            </button>
            <button type="button" class="secondary" onClick={() => fileInput.current?.click()}>
              Import…
            </button>
            <input
              ref={fileInput}
              type="file"
              accept=".json,.yaml,.yml,.har,.txt,.sh,.curl,application/json"
              class="visually-hidden"
              tabIndex={-1}
              aria-label="Import tests from a file"
              onChange={(event) => void chooseImport(event.currentTarget)}
            />
          </>
        }
      />
      <DeletedNotice
        bucket={props.bucket}
        onRestored={(test) => {
          setRestored(test);
          void tests.reload();
        }}
      />
      {restored && (
        <Notice kind="success">
          Restored the test <Link href={paths.test(props.bucket, restored.id)}>{restored.name}</Link>.
        </Notice>
      )}
      {importing && (
        <ImportDialog
          bucket={props.bucket}
          fileName={importing.fileName}
          parsed={importing.parsed}
          onClose={() => setImporting(undefined)}
          onCreated={(test) => {
            setImporting(undefined);
            navigate(paths.test(props.bucket, test.id));
          }}
        />
      )}
      {importingFile && (
        <ImportPreviewDialog
          bucket={props.bucket}
          title={`Import ${importingFile.fileName}`}
          body={{ content: importingFile.text }}
          onClose={() => setImportingFile(undefined)}
          onCreated={(answer) => {
            setImportingFile(undefined);
            const first = answer.tests[0];
            if (answer.tests.length === 1 && first?.id) navigate(paths.test(props.bucket, first.id));
            else void tests.reload();
          }}
        />
      )}
      {deleting && (
        <DeleteDialog
          bucket={props.bucket}
          test={deleting}
          onClose={() => setDeleting(undefined)}
          onDeleted={() => {
            setDeleting(undefined);
            setRestored(undefined);
            void tests.reload();
          }}
        />
      )}
      <div class="filters" role="search">
        <TextField
          label="Search tests"
          type="search"
          value={search}
          onValue={setSearch}
          placeholder="Name or description"
        />
        <SelectField label="Show" value={status} options={STATUS_FILTERS} onValue={setStatus} />
        {tests.data && (
          <p class="muted" aria-live="polite">
            {shown.length === tests.data.length
              ? `${tests.data.length} tests`
              : `${shown.length} of ${tests.data.length} tests`}
          </p>
        )}
      </div>
      <ErrorBanner error={tests.error} onRetry={tests.reload} />
      {!tests.data && !tests.error && <Loading label="Loading tests…" />}
      {tests.data && tests.data.length === 0 && (
        <Empty>
          No tests in this bucket yet.{' '}
          <button type="button" class="link" onClick={createTest}>
            Create the first one
          </button>
          .
        </Empty>
      )}
      {tests.data && tests.data.length > 0 && shown.length === 0 && (
        <Empty>No test matches these filters.</Empty>
      )}
      {shown.length > 0 && (
        <div class="table-wrap">
          <table class="tests-table" data-testid="tests-table">
            <thead>
              <tr>
                <th scope="col">Test</th>
                <th scope="col">Last result</th>
                <th scope="col">Last run</th>
                <th scope="col">Schedules</th>
                <th scope="col">Response time</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((test) => (
                <TestRow key={test.id} bucket={props.bucket} test={test} onDelete={() => setDeleting(test)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function TestRow(props: { bucket: string; test: TestSummary; onDelete: () => void }) {
  const { test } = props;
  const last = test.last_run;
  const when = last ? (last.finished_at ?? last.started_at) : null;
  return (
    <tr>
      <td class="name">
        <Link href={paths.test(props.bucket, test.id)}>{test.name}</Link>
        {test.description && <span class="description">{test.description}</span>}
      </td>
      <td>
        <ResultBadge result={last?.result} />
      </td>
      <td>
        <time dateTime={when ? new Date(when * 1000).toISOString() : undefined} title={dateTime(when)}>
          {last ? timeAgo(when) : '—'}
        </time>
      </td>
      <td>
        {test.schedules.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          test.schedules.map((schedule) => schedule.interval).join(', ')
        )}
      </td>
      <td>
        <Sparkline
          label={`Response times of ${test.name}`}
          points={test.recent_runs.map((run) => ({
            value: run.response_time_ms,
            failed: run.result === 'fail',
          }))}
        />
      </td>
      <td>
        <button
          type="button"
          class="secondary small"
          aria-label={`Delete ${test.name}`}
          onClick={props.onDelete}
        >
          Delete
        </button>
      </td>
    </tr>
  );
}
