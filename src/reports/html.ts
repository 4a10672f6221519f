/**
 * A test report as one self-contained HTML file: inline CSS, no scripts, no external resources, so
 * it reads the same with JavaScript disabled and opens offline. `vigil run --reporter html` and the
 * API's report download (built from a stored result) both render through here.
 *
 * Every value that came from a run (URLs, headers, bodies, assertion values, variable names) is
 * escaped. Bodies are pretty-printed when they are JSON and cut at BODY_SHOWN_CHARS; once the bodies
 * of a report have used BODY_BUDGET_CHARS, the rest are cut at BODY_TAIL_CHARS, so a long run stays
 * small. Pure: data in, a string out.
 */
import { layoutJson } from '../domain/body-layout.js';
import { escapeHtml } from '../domain/html.js';
import type { AssertionResult, BodyRecord, RunOutcome, StepResult, Timings } from '../domain/results.js';

/** Characters of one body shown; a longer body is collapsed and cut, with a note. */
export const BODY_SHOWN_CHARS = 16 * 1024;
/** Characters of bodies one report shows in full before it cuts the rest shorter. */
export const BODY_BUDGET_CHARS = 1024 * 1024;
/** Characters of a body shown once the report's budget is spent. */
export const BODY_TAIL_CHARS = 1024;

/** One run of the report: a test, or one row of a data-driven run of it. */
export interface ReportRun {
  /** The test's name. */
  test_name: string;
  /** "row 3" of a data-driven run, or null. */
  iteration: string | null;
  environment_name: string;
  /** Where the test came from: a file name, or the result's URL. */
  source: string | null;
  outcome: Pick<
    RunOutcome,
    | 'result'
    | 'started_at'
    | 'finished_at'
    | 'error'
    | 'initial_variables'
    | 'variables'
    | 'environment_script'
    | 'requests'
  > & { previous_attempt?: ReportRun['outcome'] | null };
}

export interface HtmlReport {
  title: string;
  /** Unix seconds. */
  generated_at: number;
  runs: readonly ReportRun[];
  /** Runs left out (after a failure under --bail). */
  not_run?: number;
}

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2330;--muted:#5d6678;--card:#fff;--line:#dde1e8;
--code:#f0f2f5;--pass:#1f7a3a;--fail:#c0262d;--skip:#5d6678}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e4e7ec;--muted:#9aa3b2;--card:#1c2027;
--line:#2e343e;--code:#232830;--pass:#7fd18f;--fail:#ff7b80;--skip:#9aa3b2}}
*{box-sizing:border-box}
body{margin:0;padding:1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header,main{max-width:90rem;margin:0 auto}
h1{font-size:1.3rem;margin:0 0 .5rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:0;overflow-wrap:anywhere}
h3{font-size:.8rem;margin:1rem 0 .35rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
code,pre,td,th{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.totals{display:flex;flex-wrap:wrap;gap:.35rem 1.5rem;margin:0 0 1rem;padding:0}
.totals dt{display:inline;font-weight:600}.totals dd{display:inline;margin:0 0 0 .35rem}
.filter{margin:0 0 1rem}
.run{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1rem}
.run>header{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;margin:0 0 .5rem}
.meta{color:var(--muted)}
.badge{font-weight:700}
.pass>.badge,.badge.pass,.r-pass{color:var(--pass)}
.fail>.badge,.badge.fail,.r-fail{color:var(--fail)}
.badge.skipped,.badge.canceled{color:var(--skip)}
details{border-top:1px solid var(--line);padding:.35rem 0}
summary{cursor:pointer;overflow-wrap:anywhere}
.step>.body{padding:.25rem 0 .5rem 1.25rem}
.error{color:var(--fail);font-weight:600;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;table-layout:fixed;margin:0 0 .25rem}
th,td{text-align:left;vertical-align:top;padding:.2rem .45rem;border-top:1px solid var(--line);overflow-wrap:anywhere}
thead th{border-top:0;color:var(--muted);font-weight:600}
pre{margin:0;padding:.6rem;background:var(--code);border-radius:6px;overflow:auto;max-height:40rem;
white-space:pre-wrap;overflow-wrap:anywhere}
.note{color:var(--muted);font-style:italic}
.exchange{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:1rem}
@media (max-width:60rem){.exchange{grid-template-columns:minmax(0,1fr)}}
#failed-only:checked~main .run.pass,#failed-only:checked~main .step.pass,
#failed-only:checked~main .step.skipped{display:none}
footer{max-width:90rem;margin:1.5rem auto 0;color:var(--muted);font-size:.85rem}
`;

/** The whole report document. */
export function renderHtmlReport(report: HtmlReport): string {
  const budget = { left: BODY_BUDGET_CHARS };
  const passed = report.runs.filter((r) => r.outcome.result === 'pass').length;
  const failed = report.runs.length - passed;
  const steps = report.runs.flatMap((r) => r.outcome.requests);
  const assertions = steps.flatMap((s) => s.assertions);
  const seconds = report.runs.reduce((t, r) => t + (r.outcome.finished_at - r.outcome.started_at), 0);
  const totals: [string, string][] = [
    ['Runs', String(report.runs.length)],
    ['Passed', String(passed)],
    ['Failed', String(failed)],
    ...(report.not_run ? ([['Not run', String(report.not_run)]] as [string, string][]) : []),
    ['Steps', String(steps.length)],
    [
      'Assertions',
      `${assertions.filter((a) => a.result === 'pass').length} passed, ` +
        `${assertions.filter((a) => a.result === 'fail').length} failed`,
    ],
    ['Time', formatMs(seconds * 1000)],
  ];
  const verdict = failed > 0 || report.not_run ? 'fail' : 'pass';
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="referrer" content="no-referrer">' +
    `<title>${escapeHtml(report.title)}</title><style>${STYLE}</style></head><body>` +
    // The filter is a checkbox before <main>: `:checked ~ main …` hides what passed, without scripts.
    '<input type="checkbox" id="failed-only" class="filter">' +
    '<label for="failed-only" class="filter"> Show failed only</label>' +
    `<header><h1>${escapeHtml(report.title)} <span class="badge ${verdict}">${verdict === 'pass' ? 'passed' : 'failed'}</span></h1>` +
    `<dl class="totals">${totals.map(([k, v]) => `<div><dt>${k}</dt><dd>${escapeHtml(v)}</dd></div>`).join('')}</dl></header>` +
    `<main>${report.runs.map((r) => renderRun(r, budget)).join('\n')}</main>` +
    `<footer>Generated ${escapeHtml(formatTime(report.generated_at))} by Vigil.</footer>` +
    '</body></html>\n'
  );
}

function renderRun(run: ReportRun, budget: Budget): string {
  const { outcome } = run;
  const label = run.iteration ? `${run.test_name} · ${run.iteration}` : run.test_name;
  const meta = [
    `environment "${run.environment_name}"`,
    ...(run.source ? [run.source] : []),
    `started ${formatTime(outcome.started_at)}`,
    formatMs((outcome.finished_at - outcome.started_at) * 1000),
  ];
  const parts = [
    `<header><h2>${escapeHtml(label)}</h2><span class="badge ${outcome.result}">${outcome.result}</span>` +
      `<span class="meta">${escapeHtml(meta.join(' · '))}</span></header>`,
  ];
  if (outcome.error !== null) parts.push(`<p class="error">Run error: ${escapeHtml(outcome.error)}</p>`);
  if (outcome.environment_script) {
    const script = outcome.environment_script;
    parts.push(
      `<p class="${script.result === 'fail' ? 'error' : 'meta'}">Environment script ${script.result}` +
        `${script.error ? `: ${escapeHtml(script.error)}` : ''}</p>` +
        (script.output ? `<pre>${escapeHtml(script.output)}</pre>` : ''),
    );
  }
  parts.push(...outcome.requests.map((step, i) => renderStep(step, i + 1, budget)));
  parts.push(
    `<details class="variables"><summary>Variables</summary>` +
      `<h3>Initial</h3>${pairs(Object.entries(outcome.initial_variables), 'No initial variables.')}` +
      `<h3>At the end</h3>${pairs(Object.entries(outcome.variables), 'No variables.')}</details>`,
  );
  if (outcome.previous_attempt) {
    const previous = outcome.previous_attempt;
    parts.push(
      `<details class="attempt"><summary>First attempt (${escapeHtml(previous.result)}), retried under retry_on_failure</summary>` +
        `<div class="body">${previous.requests.map((step, i) => renderStep(step, i + 1, budget)).join('')}</div></details>`,
    );
  }
  return `<section class="run ${outcome.result === 'pass' ? 'pass' : 'fail'}">${parts.join('')}</section>`;
}

function renderStep(step: StepResult, number: number, budget: Budget): string {
  const label =
    step.method !== null || step.url !== null ? `${step.method ?? ''} ${step.url ?? ''}` : step.step_type;
  const status = step.response_status_code === null ? '' : ` · ${step.response_status_code}`;
  const time = step.result === 'skipped' ? '' : ` · ${formatMs(stepMs(step))}`;
  const note = step.note ? ` · ${step.note}` : '';
  const summary =
    `<summary><span class="badge ${step.result}">${step.result}</span> ` +
    `${number}. ${escapeHtml(`${label.trim()}${status}${time}${note}`)}</summary>`;
  const parts: string[] = [];
  if (step.error !== null) parts.push(`<p class="error">Error: ${escapeHtml(step.error)}</p>`);
  if (step.assertions.length > 0) parts.push(`<h3>Assertions</h3>${assertionTable(step.assertions)}`);
  if (step.variables.length > 0) {
    const rows = step.variables.map(
      (v) =>
        `<tr class="r-${v.result}"><td>${v.result}</td><td>${escapeHtml(v.name)}</td>` +
        `<td>${escapeHtml(v.property ? `${v.source} ${v.property}` : v.source)}</td>` +
        `<td>${escapeHtml(v.error ?? v.value ?? '')}</td></tr>`,
    );
    parts.push(
      '<h3>Variables extracted</h3><table><thead><tr><th style="width:4rem">Result</th><th>Name</th>' +
        `<th>From</th><th>Value</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
    );
  }
  for (const [index, script] of step.scripts.entries()) {
    parts.push(
      `<h3>Script ${index + 1} <span class="r-${script.result}">${script.result}</span></h3>` +
        (script.error ? `<p class="error">${escapeHtml(script.error)}</p>` : '') +
        (script.output ? `<pre>${escapeHtml(script.output)}</pre>` : ''),
    );
  }
  if (step.request || step.response) {
    const request = step.request
      ? `<div><h3>Request</h3><p><code>${escapeHtml(`${step.request.method} ${step.request.url}`)}</code></p>` +
        `${headerTable(step.request.headers)}${renderBody(step.request, budget)}</div>`
      : '<div><h3>Request</h3><p class="note">Not sent.</p></div>';
    const response = step.response
      ? `<div><h3>Response</h3><p><code>${escapeHtml(`${step.response.status} ${step.response.reason}`)}</code></p>` +
        `${headerTable(step.response.headers)}${renderBody(step.response, budget)}</div>`
      : '<div><h3>Response</h3><p class="note">No response.</p></div>';
    parts.push(`<div class="exchange">${request}${response}</div>`);
  } else if (step.step_type === 'request' && step.result !== 'skipped') {
    parts.push('<p class="note">The request and response are not kept for this step.</p>');
  }
  if (step.timings) parts.push(`<h3>Timings</h3>${timingTable(step.timings)}`);
  // Failed steps open, so their failures read without a click.
  const open = step.result === 'fail' ? ' open' : '';
  return `<details class="step ${step.result}"${open}>${summary}<div class="body">${parts.join('')}</div></details>`;
}

function assertionTable(assertions: readonly AssertionResult[]): string {
  const rows = assertions.map((a) => {
    const where = a.property ? `${a.source} ${a.property}` : a.source;
    return (
      `<tr class="r-${a.result}"><td>${a.result}</td><td>${escapeHtml(where)}</td>` +
      `<td>${escapeHtml(a.comparison)}</td><td class="expected">${escapeHtml(String(a.target_value))}</td>` +
      `<td class="actual">${escapeHtml(showValue(a.actual_value))}${a.error ? ` <span class="error">(${escapeHtml(a.error)})</span>` : ''}</td></tr>`
    );
  });
  return (
    '<table><thead><tr><th style="width:4rem">Result</th><th>Source</th><th>Comparison</th>' +
    `<th>Expected</th><th>Actual</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

function headerTable(headers: Record<string, string[]>): string {
  const rows = Object.entries(headers).flatMap(([name, values]) =>
    values.map((value): [string, string] => [name, value]),
  );
  return pairs(rows, 'No headers.');
}

function timingTable(timings: Timings): string {
  return pairs(
    Object.entries(timings).map(([name, ms]): [string, string] => [name.replace(/_ms$/, ''), formatMs(ms)]),
    '',
  );
}

function pairs(rows: readonly (readonly [string, string])[], empty: string): string {
  if (rows.length === 0) return `<p class="note">${escapeHtml(empty)}</p>`;
  const body = rows
    .map(
      ([name, value]) =>
        `<tr><th scope="row" style="width:35%">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`,
    )
    .join('');
  return `<table><tbody>${body}</tbody></table>`;
}

interface Budget {
  left: number;
}

/** A body: pretty JSON when it parses, cut at the shown length (collapsed then, with a note). */
function renderBody(record: BodyRecord, budget: Budget): string {
  if (record.size_bytes === 0 && record.body === '') return '<p class="note">Empty body.</p>';
  const size = `${record.size_bytes.toLocaleString('en-US')} bytes`;
  if (record.body_encoding === 'base64') {
    return `<p class="note">Binary body, ${size}; not shown.</p>`;
  }
  const text = (record.truncated ? null : layoutJson(record.body)) ?? record.body;
  const limit = Math.min(text.length, budget.left > 0 ? BODY_SHOWN_CHARS : BODY_TAIL_CHARS);
  budget.left -= limit;
  const shown = `<pre>${escapeText(text.slice(0, limit))}</pre>`;
  const notes: string[] = [];
  if (limit < text.length) {
    notes.push(
      `showing the first ${limit.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters`,
    );
  }
  if (record.truncated) notes.push(`the run kept only the start of the ${size}`);
  if (notes.length === 0) return `<h3>Body · ${size}</h3>${shown}`;
  return (
    `<details class="long-body"><summary>Body · ${size} (cut: ${escapeHtml(notes.join('; '))})</summary>` +
    `${shown}<p class="note">Cut: ${escapeHtml(notes.join('; '))}.</p></details>`
  );
}

/** Element content only (never an attribute): `&`, `<` and `>` escaped; quotes stay, bodies stay small. */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function showValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return value;
  const text = JSON.stringify(value);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function stepMs(step: StepResult): number {
  return step.response_time_ms ?? (step.finished_at - step.started_at) * 1000;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function formatTime(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}
