import type { StepResult } from '../../domain/results.js';
import type { Step } from '../../domain/steps.js';
import { failedChecks, type Reporter, runLabel, stepLabel, stepTimeMs, type TestRun } from './reporter.js';

export interface CliReporterOptions {
  write(text: string): void;
  /** ANSI colours and a live "running" line; only for a terminal. */
  color: boolean;
  /**
   * Print steps as they finish (default). Off when runs go in parallel: each run is then printed as
   * one block when it finishes, so the lines of two runs never mix.
   */
  live?: boolean;
}

const SYMBOLS = { pass: '✔', fail: '✘', skipped: '–' } as const;

/** Human progress: one line per step as it finishes, the failed checks under it, a summary per test. */
export function createCliReporter({ write, color, live = true }: CliReporterOptions): Reporter {
  const paint = (code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const green = (text: string) => paint(32, text);
  const red = (text: string) => paint(31, text);
  const dim = (text: string) => paint(2, text);
  const bold = (text: string) => paint(1, text);
  let pending = false;

  const clearPending = () => {
    if (pending) write('\r\u001b[2K');
    pending = false;
  };

  const stepLine = (step: StepResult): string => {
    const symbol = SYMBOLS[step.result];
    const label = stepLabel(step);
    if (step.result === 'skipped') return `  ${dim(`${symbol} ${label}  skipped`)}\n`;
    const paintResult = step.result === 'pass' ? green : red;
    const status = step.response_status_code === null ? '' : `  ${step.response_status_code}`;
    return `  ${paintResult(symbol)} ${label}${status}  ${dim(`${stepTimeMs(step)} ms`)}\n`;
  };

  const details = (step: StepResult): string => {
    if (step.result !== 'fail') return '';
    const lines = failedChecks(step).map((line) => `      ${red(line)}`);
    for (const [index, script] of step.scripts.entries()) {
      if (!script.output) continue;
      lines.push(`      ${dim(`script ${index + 1} output:`)}`);
      lines.push(...indent(script.output, '        '));
    }
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  };

  const heading = (label: string, environment: string) =>
    `\n${bold(label)} ${dim(`· environment "${environment}"`)}\n`;
  const retrying = (attempt: number) =>
    `  ${dim(`↻ the run failed; retrying (retry_on_failure), attempt ${attempt}`)}\n`;

  return {
    events: live
      ? {
          runStarted({ definition, attempt }, label) {
            clearPending();
            write(attempt === 1 ? heading(label, definition.environment.name) : retrying(attempt));
          },
          stepStarted({ step }) {
            if (!color) return;
            clearPending();
            write(`  ${dim(`… ${pendingLabel(step)}`)}`);
            pending = true;
          },
          stepFinished({ result }) {
            clearPending();
            write(stepLine(result) + details(result));
          },
        }
      : {},

    runFinished(run: TestRun) {
      clearPending();
      const { outcome } = run;
      if (!live) {
        const steps = (requests: readonly StepResult[]) =>
          requests.map((step) => stepLine(step) + details(step)).join('');
        write(heading(runLabel(run), run.environment_name));
        if (outcome.previous_attempt) write(steps(outcome.previous_attempt.requests) + retrying(2));
        write(steps(outcome.requests));
      }
      const count = (status: StepResult['result']) =>
        outcome.requests.filter((r) => r.result === status).length;
      const time = Math.round((outcome.finished_at - outcome.started_at) * 1000);
      const lines: string[] = [];
      if (outcome.environment_script?.result === 'fail' && outcome.environment_script.output) {
        lines.push(
          `  ${dim('environment script output:')}`,
          ...indent(outcome.environment_script.output, '    '),
        );
      }
      if (outcome.error !== null) lines.push(`  ${red(`run error: ${outcome.error}`)}`);
      const passed = outcome.result === 'pass';
      const verdict = passed
        ? green(`${SYMBOLS.pass} passed`)
        : red(`${SYMBOLS.fail} ${outcome.result === 'canceled' ? 'canceled' : 'failed'}`);
      lines.push(
        `${verdict} ${bold(runLabel(run))} ${dim(`(${run.file})`)}: ${plural(outcome.requests.length, 'step')}, ` +
          `${count('pass')} passed, ${count('fail')} failed, ${count('skipped')} skipped ${dim(`in ${time} ms`)}`,
      );
      write(`${lines.join('\n')}\n`);
    },

    end(_runs, totals) {
      clearPending();
      const parts = [
        totals.passed > 0 ? green(`${totals.passed} passed`) : `${totals.passed} passed`,
        totals.failed > 0 ? red(`${totals.failed} failed`) : `${totals.failed} failed`,
      ];
      if (totals.not_run > 0) parts.push(`${totals.not_run} not run (--bail)`);
      write(`\n${parts.join(', ')}\n`);
      return null;
    },
  };
}

/** What a step is about to do, before its templates are resolved. */
function pendingLabel(step: Step): string {
  switch (step.step_type) {
    case 'request':
      return `${step.method} ${step.url}`;
    case 'pause':
      return `pause ${step.duration} s`;
    case 'condition':
      return `condition ${step.left_value} ${step.comparison} ${step.right_value}`;
    case 'subtest':
      return `subtest ${step.test_uuid}`;
    case 'partner-inspector':
      return `browser test ${step.test_id}`;
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function indent(text: string, prefix: string): string[] {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${prefix}${line}`);
}
