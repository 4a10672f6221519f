/**
 * Step CI's runner (`@stepci/runner`): `run(workflow)` per run with the workflow of stepci.yml,
 * parsed once at load with the YAML parser Step CI itself uses (as a monitor would keep a parsed
 * test), and `base_url` passed in the `env` option.
 *
 * Connections: Step CI's HTTP step hands got a new ProxyAgent, so a new `http.Agent` without
 * keep-alive, for every request, and offers no option to change that. A run therefore opens one
 * connection per request (three) where the other contenders open one per run. Nothing outlives a
 * run, which is what the benchmark asks; the extra connects are part of Step CI's real cost.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { run, type Workflow } from '@stepci/runner';
import type { Contender, LoadContender } from './contender.js';

const WORKFLOW_FILE = new URL('stepci.yml', import.meta.url);
const STEPS = 3;

/** js-yaml as resolved from @stepci/runner, i.e. the parser of Step CI's own `runFromFile`. */
function stepCiYaml(): { load(text: string): unknown } {
  const require = createRequire(import.meta.url);
  const fromRunner = createRequire(require.resolve('@stepci/runner'));
  return fromRunner('js-yaml') as { load(text: string): unknown };
}

export const load: LoadContender = async () => {
  const workflow = stepCiYaml().load(fs.readFileSync(WORKFLOW_FILE, 'utf8')) as Workflow;
  const contender: Contender = {
    async run(baseUrl) {
      const { result } = await run(workflow, { env: { base_url: baseUrl } });
      const steps = result.tests[0]?.steps ?? [];
      return (
        result.passed &&
        steps.length === STEPS &&
        steps.every((step) => step.passed && !step.skipped && !step.errored)
      );
    },
  };
  return contender;
};
