/**
 * Vigil on the benchmark test with its one post-response script replaced by declarative checks
 * (an assertion that `items` is not empty and a `count` variable read from the first item), so
 * that, set against the `vigil` row, the table separates the cost of a request step from the cost
 * of a script.
 */
import type { LoadContender } from './contender.js';
import { loadVigil, type VigilTestExport } from './vigil.js';

interface BenchStep {
  scripts?: string[];
  assertions?: unknown[];
  variables?: unknown[];
}

export const load: LoadContender = () =>
  loadVigil((test: VigilTestExport) => {
    const copy = structuredClone(test);
    for (const step of copy.steps as BenchStep[]) {
      if (!step.scripts || step.scripts.length === 0) continue;
      step.scripts = [];
      step.assertions = [
        ...(step.assertions ?? []),
        { source: 'response_json', property: 'items', comparison: 'not_empty', value: '' },
      ];
      step.variables = [
        ...(step.variables ?? []),
        { name: 'count', source: 'response_json', property: 'items[0].id' },
      ];
    }
    return copy;
  });
