import type { RunOutcome, StepResult } from '../../domain/results.js';
import type { RunEvents } from '../../runner/engine.js';

/** One test run of `vigil run`, as every reporter receives it (and the JSON report lists it). */
export interface TestRun {
  /** The file the test came from, as given on the command line. */
  file: string;
  test_id: string;
  test_name: string;
  environment_name: string;
  /** The data row of a data-driven run (`--data`), counted from 1; null otherwise. */
  row: number | null;
  outcome: RunOutcome;
}

export interface RunTotals {
  passed: number;
  failed: number;
  /** Tests left out after a failure under `--bail`. */
  not_run: number;
}

type RunStarted = Parameters<NonNullable<RunEvents['runStarted']>>[0];

/** The engine's events, with the run's label (test name, and data row) at its start. */
export interface ReporterEvents {
  runStarted?(event: RunStarted, label: string): void;
  stepStarted?: RunEvents['stepStarted'];
  stepFinished?: RunEvents['stepFinished'];
}

/** A reporter follows the engine's events while tests run and renders the whole report at the end. */
export interface Reporter {
  readonly events: ReporterEvents;
  runFinished(run: TestRun): void;
  /** The report document to write, or null when the reporter printed everything as it went. */
  end(runs: readonly TestRun[], totals: RunTotals): string | null;
}

export const REPORTERS = ['cli', 'json', 'junit', 'html'] as const;
export type ReporterName = (typeof REPORTERS)[number];
/** The reporters that write a document (to a file, or to stdout when alone); `cli` prints progress. */
export type DocumentReporterName = Exclude<ReporterName, 'cli'>;
/** Where a document reporter writes when no file is named for it and stdout is taken. */
export const DEFAULT_REPORT_FILES: Record<DocumentReporterName, string> = {
  json: 'vigil-report.json',
  junit: 'vigil-report.xml',
  html: 'vigil-report.html',
};

/** The test's name, and the data row when there is one: `Users API · row 3`. */
export function runLabel(run: { test_name: string; row: number | null }): string {
  return run.row === null ? run.test_name : `${run.test_name} · row ${run.row}`;
}

/** What a step did, in a few words: `GET https://…`, `SUBTEST Child test`, `pause (paused 2 s)`. */
export function stepLabel(step: StepResult): string {
  if (step.method !== null || step.url !== null) {
    return [step.method ?? step.step_type, step.url ?? ''].join(' ').trim();
  }
  return step.note ? `${step.step_type} (${step.note})` : step.step_type;
}

/** Milliseconds the step took: the response time when it had one, else its wall time. */
export function stepTimeMs(step: StepResult): number {
  return Math.round(step.response_time_ms ?? (step.finished_at - step.started_at) * 1000);
}

/** Every failed check of a step as one sentence each: assertions, variables, scripts, the step error. */
export function failedChecks(step: StepResult): string[] {
  const lines: string[] = [];
  for (const a of step.assertions) {
    if (a.result !== 'fail') continue;
    const where = a.property ? `${a.source} ${a.property}` : a.source;
    const expected = a.target_value === '' ? a.comparison : `${a.comparison} ${show(a.target_value)}`;
    lines.push(
      `assertion ${where}: expected ${expected}, actual ${show(a.actual_value)}${a.error ? ` (${a.error})` : ''}`,
    );
  }
  for (const v of step.variables) {
    if (v.result !== 'fail') continue;
    const where = v.property ? `${v.source} ${v.property}` : v.source;
    lines.push(`variable ${v.name} from ${where}: ${v.error ?? 'could not be read'}`);
  }
  for (const [index, s] of step.scripts.entries()) {
    if (s.result === 'fail') lines.push(`script ${index + 1}: ${s.error ?? 'failed'}`);
  }
  if (step.error !== null) lines.push(`error: ${step.error}`);
  return lines;
}

const MAX_SHOWN = 200;

/** A value as JSON, cut to a readable length. */
export function show(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}
