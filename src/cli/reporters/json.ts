import type { Reporter } from './reporter.js';

/** One JSON document: `{ runs: [{ file, test_id, test_name, environment_name, row, outcome }], passed, failed }`. */
export function createJsonReporter(): Reporter {
  return {
    events: {},
    runFinished() {},
    end(runs, totals) {
      return `${JSON.stringify({ runs, passed: totals.passed, failed: totals.failed }, null, 2)}\n`;
    },
  };
}
