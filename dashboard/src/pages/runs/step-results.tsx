import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../../api/client';
import type { AssertionResult, StepRunSummary } from '../../api/resources';
import { bytes, ms, words } from '../../components/format';
import { viewBody } from '../../components/message/body';
import { BodyDisplay } from '../../components/message/body-view';
import { ErrorBanner, Loading, ResultBadge } from '../../components/ui';
import type { SentBody, StepDetail } from './types';
import { Waterfall } from './waterfall';

function display(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

export function AssertionTable(props: { assertions: AssertionResult[] }) {
  if (props.assertions.length === 0) return <p class="muted">No assertions.</p>;
  return (
    <div class="table-wrap">
      <table class="assertions">
        <caption class="visually-hidden">Assertions</caption>
        <thead>
          <tr>
            <th scope="col">Result</th>
            <th scope="col">Source</th>
            <th scope="col">Property</th>
            <th scope="col">Comparison</th>
            <th scope="col">Expected</th>
            <th scope="col">Actual</th>
          </tr>
        </thead>
        <tbody>
          {props.assertions.map((assertion, index) => (
            <tr key={index} class={`assertion-${assertion.result}`}>
              <td>
                <ResultBadge result={assertion.result} />
              </td>
              <td>{words(assertion.source)}</td>
              <td class="mono">{assertion.property || '—'}</td>
              <td>{words(assertion.comparison)}</td>
              <td class="mono" data-label="expected">
                {display(assertion.target_value)}
              </td>
              <td class="mono" data-label="actual">
                {display(assertion.actual_value)}
                {assertion.error && <div class="fail">{assertion.error}</div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function VariableTable(props: { variables: StepRunSummary['variables'] }) {
  if (props.variables.length === 0) return null;
  return (
    <>
      <h4>Variables extracted</h4>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Result</th>
              <th scope="col">Name</th>
              <th scope="col">Source</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {props.variables.map((variable, index) => (
              <tr key={index}>
                <td>
                  <ResultBadge result={variable.result} />
                </td>
                <td class="mono">{variable.name}</td>
                <td>
                  {words(variable.source)} <span class="mono">{variable.property}</span>
                </td>
                <td class="mono">
                  {display(variable.value)}
                  {variable.error && <div class="fail">{variable.error}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function ScriptOutput(props: { scripts: StepRunSummary['scripts'] }) {
  if (props.scripts.length === 0) return null;
  return (
    <>
      <h4>Script output</h4>
      {props.scripts.map((script, index) => (
        <div key={index} class="script-result">
          <p>
            Script {index + 1} <ResultBadge result={script.result} />
          </p>
          {script.output && <pre>{script.output}</pre>}
          {script.error && <p class="fail">{script.error}</p>}
        </div>
      ))}
    </>
  );
}

function Headers(props: { headers: Record<string, string[]> }) {
  const entries = Object.entries(props.headers);
  if (entries.length === 0) return <p class="muted">No headers.</p>;
  return (
    <pre class="headers">
      {entries.flatMap(([name, values]) => values.map((value) => `${name}: ${value}`)).join('\n')}
    </pre>
  );
}

function Body(props: { body: SentBody; headers: Record<string, string[]>; label: string }) {
  const { body } = props;
  const view = useMemo(
    () => viewBody(body.body, body.body_encoding, props.headers),
    [body.body, body.body_encoding, props.headers],
  );
  if (view.kind === 'empty') return <p class="muted">No body.</p>;
  return (
    <>
      <p class="muted">
        {props.label}: {bytes(body.size_bytes)}
        {body.truncated && <strong class="warn-text"> (truncated: only the start was kept)</strong>}
      </p>
      <BodyDisplay label={props.label} view={view} size={body.size_bytes} />
    </>
  );
}

function StepDetailView(props: { detail: StepDetail }) {
  const { detail } = props;
  return (
    <div class="step-detail">
      <div class="grid-2">
        <section aria-label="Request sent">
          <h4>Request sent</h4>
          {detail.request ? (
            <>
              <p class="mono">
                {detail.request.method} {detail.request.url}
              </p>
              <Headers headers={detail.request.headers} />
              <Body body={detail.request} headers={detail.request.headers} label="Request body" />
            </>
          ) : (
            <p class="muted">Nothing was sent.</p>
          )}
        </section>
        <section aria-label="Response received">
          <h4>Response received</h4>
          {detail.response ? (
            <>
              <p class="mono">
                {detail.response.status} {detail.response.reason}
              </p>
              <Headers headers={detail.response.headers} />
              <Body body={detail.response} headers={detail.response.headers} label="Response body" />
            </>
          ) : (
            <p class="muted">No response was received.</p>
          )}
        </section>
      </div>
    </div>
  );
}

/** One executed step: a summary line that expands to its checks, timings and the full exchange. */
function StepRow(props: {
  step: StepRunSummary;
  index: number;
  /** Open on first render (the first failing step of a run). */
  initiallyOpen: boolean;
  detailPath?: string;
  subtestHref?: (step: StepRunSummary) => string | undefined;
}) {
  const { step } = props;
  const [open, setOpen] = useState(props.initiallyOpen);
  const [detail, setDetail] = useState<StepDetail | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(false);
  const panelId = `step-${props.index}-${step.uuid}`;

  const load = async () => {
    if (!props.detailPath) return;
    setLoading(true);
    setError(undefined);
    try {
      setDetail(await api.get<StepDetail>(props.detailPath));
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };

  // The exchange loads on the first opening, or once the path is known (a live run that finished).
  useEffect(() => {
    if (open && !detail && !loading) void load();
  }, [open, props.detailPath]);

  const toggle = () => setOpen(!open);

  const passed = step.assertions.filter((a) => a.result === 'pass').length;
  const subtest = step.subtest_run_id ? props.subtestHref?.(step) : undefined;
  return (
    <li class={`step-result step-${step.result}`}>
      <button
        type="button"
        class="step-summary"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={toggle}
      >
        <span class="step-index">{props.index + 1}</span>
        <ResultBadge result={step.result} />
        <span class="step-title">
          {step.method ? (
            <span class="mono">
              {step.method} {step.url}
            </span>
          ) : (
            <span>{words(step.step_type)}</span>
          )}
          {step.note && <span class="muted step-note">{step.note}</span>}
        </span>
        <span class="step-stats">
          <span>
            <span class="visually-hidden">Status </span>
            {step.response_status_code ?? '—'}
          </span>
          <span>
            <span class="visually-hidden">Time </span>
            {ms(step.response_time_ms)}
          </span>
          <span>
            <span class="visually-hidden">Size </span>
            {bytes(step.response_size_bytes)}
          </span>
          {step.assertions.length > 0 && (
            <span>
              {passed}/{step.assertions.length} assertions
            </span>
          )}
        </span>
      </button>
      {step.error && <p class="fail step-error">{step.error}</p>}
      {subtest && (
        <p>
          <Link href={subtest}>Open the subtest's run</Link>
        </p>
      )}
      <div id={panelId} hidden={!open} class="step-panel">
        {open && (
          <>
            <h4>Assertions</h4>
            <AssertionTable assertions={step.assertions} />
            <VariableTable variables={step.variables} />
            <ScriptOutput scripts={step.scripts} />
            {step.timings && (
              <>
                <h4>Timing</h4>
                <Waterfall timings={step.timings} />
              </>
            )}
            {loading && <Loading label="Loading the request and response…" />}
            <ErrorBanner error={error} onRetry={() => void load()} />
            {detail && <StepDetailView detail={detail} />}
          </>
        )}
      </div>
    </li>
  );
}

/** The executed steps of a run (or of its previous attempt), each expandable; the first failing one starts open. */
export function StepResults(props: {
  steps: StepRunSummary[];
  /** Base of step detail paths (`…/results/<run>`); without it the exchange is not loaded. */
  runPath?: string;
  subtestHref?: (step: StepRunSummary) => string | undefined;
  label: string;
}) {
  // A row reads this only when it mounts, so closing the failing step keeps it closed.
  const firstFailing = props.steps.findIndex((step) => step.result === 'fail');
  if (props.steps.length === 0) return <p class="muted">No steps have finished yet.</p>;
  return (
    <ol class="step-results" aria-label={props.label}>
      {props.steps.map((step, index) => (
        <StepRow
          key={`${step.uuid}-${index}`}
          step={step}
          index={index}
          initiallyOpen={index === firstFailing}
          detailPath={props.runPath ? `${props.runPath}/steps/${step.uuid}` : undefined}
          subtestHref={props.subtestHref}
        />
      ))}
    </ol>
  );
}
