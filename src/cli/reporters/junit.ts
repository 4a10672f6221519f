import type { StepResult } from '../../domain/results.js';
import { failedChecks, type Reporter, runLabel, stepLabel, stepTimeMs, type TestRun } from './reporter.js';

/**
 * JUnit XML, as CI servers read it: one `<testsuite>` per test, one `<testcase>` per step result.
 * A run error no step accounts for (environment script, run time limit, cancel) is one more failed
 * test case named `run`.
 */
export function createJunitReporter(): Reporter {
  return {
    events: {},
    runFinished() {},
    end(runs) {
      const suites = runs.map(suite);
      const sum = (key: keyof SuiteCounts) => suites.reduce((n, s) => n + s.counts[key], 0);
      const time = runs.reduce((t, r) => t + (r.outcome.finished_at - r.outcome.started_at), 0);
      return [
        '<?xml version="1.0" encoding="UTF-8"?>',
        `<testsuites${attributes({
          name: 'vigil run',
          tests: sum('tests'),
          failures: sum('failures'),
          errors: 0,
          skipped: sum('skipped'),
          time: seconds(time),
        })}>`,
        ...suites.map((s) => s.xml),
        '</testsuites>',
        '',
      ].join('\n');
    },
  };
}

interface SuiteCounts {
  tests: number;
  failures: number;
  skipped: number;
}

function suite(run: TestRun): { xml: string; counts: SuiteCounts } {
  const { outcome } = run;
  const cases = outcome.requests.map((step) => testCase(run, step));
  if (outcome.error !== null) {
    cases.push(
      [
        `    <testcase${attributes({ name: 'run', classname: runLabel(run), time: '0' })}>`,
        `      <failure${attributes({ message: outcome.error, type: 'run' })}/>`,
        '    </testcase>',
      ].join('\n'),
    );
  }
  const counts: SuiteCounts = {
    tests: cases.length,
    failures: outcome.requests.filter((r) => r.result === 'fail').length + (outcome.error !== null ? 1 : 0),
    skipped: outcome.requests.filter((r) => r.result === 'skipped').length,
  };
  const properties = Object.entries({
    file: run.file,
    test_id: run.test_id,
    environment: run.environment_name,
    result: outcome.result,
  })
    .map(([name, value]) => `      <property${attributes({ name, value })}/>`)
    .join('\n');
  const xml = [
    `  <testsuite${attributes({
      name: runLabel(run),
      tests: counts.tests,
      failures: counts.failures,
      errors: 0,
      skipped: counts.skipped,
      time: seconds(outcome.finished_at - outcome.started_at),
      timestamp: new Date(outcome.started_at * 1000).toISOString(),
      file: run.file,
    })}>`,
    `    <properties>\n${properties}\n    </properties>`,
    ...cases,
    '  </testsuite>',
  ].join('\n');
  return { xml, counts };
}

function testCase(run: TestRun, step: StepResult): string {
  const open = `    <testcase${attributes({
    name: `${step.step_type} ${stepLabel(step)}`,
    classname: runLabel(run),
    time: seconds(stepTimeMs(step) / 1000),
  })}`;
  const body: string[] = [];
  if (step.result === 'skipped') body.push('      <skipped/>');
  if (step.result === 'fail') {
    const checks = failedChecks(step);
    const message = checks.length > 0 ? checks.join('; ') : 'the step failed';
    body.push(`      <failure${attributes({ message, type: 'step' })}>${text(checks.join('\n'))}</failure>`);
  }
  const output = step.scripts
    .map((s, i) => (s.output ? `script ${i + 1}:\n${s.output}` : ''))
    .filter((o) => o !== '')
    .join('\n');
  if (output) body.push(`      <system-out>${text(output)}</system-out>`);
  return body.length === 0 ? `${open}/>` : [`${open}>`, ...body, '    </testcase>'].join('\n');
}

function seconds(value: number): string {
  return (Math.round(Math.max(0, value) * 1000) / 1000).toFixed(3);
}

/** Characters XML 1.0 allows nowhere (control characters, lone surrogates, U+FFFE/U+FFFF). */
const FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Character data: the forbidden characters dropped, markup characters escaped. */
export function text(value: string): string {
  return value.replace(FORBIDDEN, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value: as text, plus quotes and the white space a parser would otherwise fold. */
export function attribute(value: string): string {
  return text(value)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([name, value]) => ` ${name}="${attribute(String(value))}"`)
    .join('');
}
