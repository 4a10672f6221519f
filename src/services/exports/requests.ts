import { resolveSettings, type StoredSettings } from '../../domain/environments.js';
import type { RequestStep, Step } from '../../domain/steps.js';
import type { TestExport } from '../test-transfer.js';

/** A request step of a test in run order, with what another tool cannot do of the steps around it. */
export interface ExportedRequest {
  step: RequestStep;
  /** 1-based position among the test's steps. */
  number: number;
  /** The condition it is embedded in (`{{a}} equal b`), which other tools do not evaluate. */
  condition: string | null;
}

/** The test's request steps (embedded ones included), and a note for every step left out. */
export function requestsOf(steps: readonly Step[]): { requests: ExportedRequest[]; leftOut: string[] } {
  const requests: ExportedRequest[] = [];
  const leftOut: string[] = [];
  const visit = (step: Step, number: number, condition: string | null) => {
    switch (step.step_type) {
      case 'request':
        if (step.skipped) leftOut.push(`step ${number}: skipped in the test`);
        else requests.push({ step, number, condition });
        return;
      case 'condition': {
        const text = `${step.left_value} ${step.comparison} ${step.right_value}`;
        for (const embedded of step.steps) visit(embedded, number, text);
        return;
      }
      case 'pause':
        leftOut.push(`step ${number}: pause of ${step.duration} s`);
        return;
      case 'subtest':
        leftOut.push(`step ${number}: subtest of test ${step.test_uuid}`);
        return;
      case 'partner-inspector':
        leftOut.push(`step ${number}: browser test ${step.test_id}`);
        return;
    }
  };
  steps.forEach((step, i) => visit(step, i + 1, null));
  return { requests, leftOut };
}

/** The initial variables of the test's default environment, its parents' merged in (child wins). */
export function defaultVariables(test: TestExport): Record<string, string> {
  const all = [...test.environments, ...test.shared_environments];
  const chain: StoredSettings[] = [];
  const seen = new Set<string>();
  let environment = all.find((e) => e.id === test.default_environment_id);
  while (environment && !seen.has(environment.id)) {
    seen.add(environment.id);
    chain.push(environment);
    const parentId = environment.parent_environment_id;
    environment = parentId === null ? undefined : all.find((e) => e.id === parentId);
  }
  return resolveSettings(chain).initial_variables;
}

/** Form fields as name/value pairs, a field of several values once per value. */
export function formPairs(form: RequestStep['form']): [string, string][] {
  return Object.entries(form).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]),
  );
}
