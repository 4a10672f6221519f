import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, download } from '../../api/client';
import type { Run, Step, StepRunSummary } from '../../api/resources';
import { dateTime, ms, words } from '../../components/format';
import { saveFile } from '../../components/save-file';
import { ErrorBanner, Loading, Notice, ResultBadge } from '../../components/ui';
import { usePolling, useResource } from '../../components/use-resource';
import { paths } from '../../session';
import { StepResults } from '../runs/step-results';
import { isActive, resultsPath } from '../runs/types';
import '../runs/runs.css';
import { useTest } from './context';

function findStep(steps: Step[], id: string): Step | undefined {
  for (const step of steps) {
    if (step.id === id) return step;
    if (step.step_type === 'condition') {
      const inner = step.steps.find((child) => child.id === id);
      if (inner) return inner;
    }
  }
  return undefined;
}

function duration(run: Pick<Run, 'started_at' | 'finished_at'>, now: number): string {
  if (run.started_at === null) return '—';
  return ms(((run.finished_at ?? now) - run.started_at) * 1000);
}

function Counts(props: { run: Run }) {
  const { run } = props;
  const rows: [string, number, number, number][] = [
    ['Assertions', run.assertions_defined, run.assertions_passed, run.assertions_failed],
    ['Scripts', run.scripts_defined, run.scripts_passed, run.scripts_failed],
    ['Variables', run.variables_defined, run.variables_passed, run.variables_failed],
  ];
  return (
    <>
      {rows.map(([label, defined, passed, failed]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>
            <span class="pass">{passed} passed</span>,{' '}
            <span class={failed ? 'fail' : undefined}>{failed} failed</span>{' '}
            <span class="muted">of {defined}</span>
          </dd>
        </div>
      ))}
    </>
  );
}

/** One run: its header, live progress while it is queued or working, and every step's outcome. */
export function ResultPage(props: { runId: string }) {
  const { bucket, test, reload } = useTest();
  const path = `${resultsPath(bucket, test.id)}/${props.runId}`;
  const run = useResource((signal) => api.get<Run>(path, undefined, signal), [path]);
  const active = run.data ? isActive(run.data.result) : false;
  const [now, setNow] = useState(Date.now() / 1000);
  usePolling(
    () => {
      setNow(Date.now() / 1000);
      void run.reload();
    },
    1000,
    active,
  );
  // A run that ended after the test's last run makes the header's last result stale: load the test
  // again (once per run; the run may have ended before this page first saw it).
  const finished = run.data && !active ? run.data : undefined;
  useEffect(() => {
    if (!finished || (finished.result !== 'pass' && finished.result !== 'fail')) return;
    const last = test.last_run;
    if (last?.test_run_id === finished.test_run_id) return;
    if (last && (finished.started_at ?? 0) < last.started_at) return;
    void reload();
  }, [finished?.test_run_id, finished?.result]);
  const [cancelError, setCancelError] = useState<unknown>(undefined);
  const [downloading, setDownloading] = useState(false);

  if (run.error && !run.data) return <ErrorBanner error={run.error} onRetry={run.reload} />;
  if (!run.data) return <Loading label="Loading the run…" />;
  const current = run.data;

  const cancel = async () => {
    setCancelError(undefined);
    try {
      await api.delete(path);
      await run.reload();
    } catch (error) {
      setCancelError(error);
    }
  };

  // The same self-contained HTML report `vigil run --reporter html` writes, built from the stored run.
  const downloadReport = async () => {
    setDownloading(true);
    setCancelError(undefined);
    try {
      const { text, fileName } = await download(`${path}/report.html`);
      saveFile(new Blob([text], { type: 'text/html' }), fileName);
    } catch (error) {
      setCancelError(error);
    } finally {
      setDownloading(false);
    }
  };

  const subtestHref = (step: StepRunSummary) => {
    const definition = findStep(test.steps, step.uuid);
    if (!definition || definition.step_type !== 'subtest' || !step.subtest_run_id) return undefined;
    return paths.result(definition.bucket_key || bucket, definition.test_uuid, step.subtest_run_id);
  };

  return (
    <div class="run-page">
      <p class="breadcrumb">
        <Link href={paths.test(bucket, test.id, 'results')}>Results</Link> /
      </p>
      <div class="page-header">
        <div>
          <h2 class="run-title">
            Run <ResultBadge result={current.result} />
          </h2>
          <p class="muted mono run-id">{current.test_run_id}</p>
        </div>
        <div class="actions">
          {active ? (
            <button type="button" class="danger" onClick={() => void cancel()}>
              Cancel run
            </button>
          ) : (
            <button
              type="button"
              class="secondary"
              disabled={downloading}
              onClick={() => void downloadReport()}
            >
              {downloading ? 'Preparing the report…' : 'Download report'}
            </button>
          )}
        </div>
      </div>
      <ErrorBanner error={cancelError} />
      {/* A reload that failed (the network, or the run is gone) says so instead of "Running…" forever. */}
      <ErrorBanner error={run.error} onRetry={run.reload} />
      <div role="status" aria-live="polite" class="run-progress">
        {current.result === 'queued' && (
          <Notice kind="warning">Queued: waiting for a worker in region {current.region}…</Notice>
        )}
        {current.result === 'working' && (
          <Notice kind="warning">
            Running… {current.requests.length} step{current.requests.length === 1 ? '' : 's'} finished so far.
          </Notice>
        )}
        {!active && <span class="visually-hidden">Run finished: {current.result}</span>}
      </div>
      {current.error && <ErrorBanner error={new Error(current.error)} />}
      <dl class="run-facts">
        <div>
          <dt>Environment</dt>
          <dd>{current.environment_name}</dd>
        </div>
        <div>
          <dt>Region</dt>
          <dd>{current.region}</dd>
        </div>
        <div>
          <dt>Agent</dt>
          <dd>{current.agent ?? '—'}</dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>{words(current.source)}</dd>
        </div>
        <div>
          <dt>Queued</dt>
          <dd>{dateTime(current.queued_at)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{dateTime(current.started_at)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{duration(current, now)}</dd>
        </div>
        <div>
          <dt>Response time</dt>
          <dd>{ms(current.response_time_ms)}</dd>
        </div>
        <div>
          <dt>Requests</dt>
          <dd>{current.requests_executed}</dd>
        </div>
        <Counts run={current} />
        {current.attempts > 1 && (
          <div>
            <dt>Attempts</dt>
            <dd>{current.attempts}</dd>
          </div>
        )}
        {current.parent_run_id && (
          <div>
            <dt>Started by</dt>
            <dd>a subtest step of another run</dd>
          </div>
        )}
      </dl>

      {current.environment_script && (
        <section class="card" aria-labelledby="env-script">
          <h3 id="env-script">
            Environment script <ResultBadge result={current.environment_script.result} />
          </h3>
          {current.environment_script.output ? (
            <pre>{current.environment_script.output}</pre>
          ) : (
            <p class="muted">No output.</p>
          )}
          {current.environment_script.error && <p class="fail">{current.environment_script.error}</p>}
        </section>
      )}

      <h3>Steps</h3>
      <StepResults
        label="Steps of this run"
        steps={current.requests}
        runPath={active ? undefined : path}
        subtestHref={subtestHref}
      />

      {current.previous_attempt && (
        <details class="previous-attempt">
          <summary>
            Previous attempt <ResultBadge result={current.previous_attempt.result} />{' '}
            <span class="muted">
              {dateTime(current.previous_attempt.started_at)}, {duration(current.previous_attempt, now)}
            </span>
          </summary>
          {current.previous_attempt.error && <p class="fail">{current.previous_attempt.error}</p>}
          <StepResults
            label="Steps of the previous attempt"
            steps={current.previous_attempt.requests}
            subtestHref={subtestHref}
          />
        </details>
      )}
    </div>
  );
}
