import { renderHtmlReport } from '../../reports/html.js';
import type { Reporter } from './reporter.js';

/** One self-contained HTML document of every run (src/reports/html.ts), written at the end. */
export function createHtmlReporter(now: () => number = () => Date.now() / 1000): Reporter {
  return {
    events: {},
    runFinished() {},
    end(runs, totals) {
      return renderHtmlReport({
        title: 'vigil run',
        generated_at: now(),
        not_run: totals.not_run,
        runs: runs.map((run) => ({
          test_name: run.test_name,
          iteration: run.row === null ? null : `row ${run.row}`,
          environment_name: run.environment_name,
          source: run.file,
          outcome: run.outcome,
        })),
      });
    },
  };
}
