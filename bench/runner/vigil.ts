/**
 * Vigil's own test engine (`src/runner/engine.ts`) running vigil-test.json, the benchmark test in
 * Vigil's export format, with `base_url` set in its default environment for the upstream at hand.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import {
  type EnvironmentSettingsInput,
  normalizeSettings,
  resolveSettings,
} from '../../src/domain/environments.js';
import { normalizeStep, type StepInput } from '../../src/domain/steps.js';
import { createEngine, type Engine, type RunDefinition } from '../../src/runner/engine.js';
import { LazyScriptSandbox } from '../../src/runner/lazy-sandbox.js';
import type { Contender, LoadContender } from './contender.js';

const TEST_FILE = new URL('vigil-test.json', import.meta.url);
/** Request steps of a passing run, the one inside the condition included. */
const REQUESTS = 3;

/** The fields of an exported test this file reads or writes; the rest is passed on untouched. */
export interface VigilTestExport {
  default_environment_id: string;
  environments: { id: string; initial_variables: Record<string, string> }[];
  [field: string]: unknown;
}

/**
 * One run of the benchmark test on Vigil's engine; true when the run passed with every request
 * made. The engine opens its own connections for each run (one undici Client per origin, closed
 * when the run ends) and runs the post-response script in its worker-thread sandbox, as in
 * production.
 */
export async function runVigil(engine: Engine, definition: RunDefinition): Promise<boolean> {
  const outcome = await engine.run(definition);
  return outcome.result === 'pass' && outcome.requests_executed === REQUESTS;
}

/** The run definition of vigil-test.json with `base_url` set to the upstream at hand. */
function definitionFor(template: VigilTestExport, baseUrl: string): RunDefinition {
  const environment = template.environments.find((e) => e.id === template.default_environment_id);
  if (!environment) throw new Error('vigil-test.json: default_environment_id names no environment');
  const { id, name, parent_environment_id: _parent, ...settings } = environment as Record<string, unknown>;
  const stored = normalizeSettings(settings as EnvironmentSettingsInput);
  return {
    test: {
      id: String(template.id),
      name: String(template.name),
      steps: (template.steps as StepInput[]).map((step) => normalizeStep(step, (s) => s.id ?? randomUUID())),
    },
    environment: { id: String(id), name: String(name), settings: resolveSettings([stored]) },
    bucket: { key: 'bench', name: 'bench', verify_ssl: true },
    region: 'local',
    agent: null,
    variables: { base_url: baseUrl },
  };
}

/** Vigil on `template` (vigil-test.json unless another version of the test is given). */
export async function loadVigil(transform: (test: VigilTestExport) => VigilTestExport = (t) => t) {
  const scripts = new LazyScriptSandbox();
  const engine = createEngine({ scripts, egress: 'allow-all' });
  const template = transform(JSON.parse(fs.readFileSync(TEST_FILE, 'utf8')) as VigilTestExport);
  const definitions = new Map<string, RunDefinition>();
  const contender: Contender = {
    run(baseUrl) {
      let definition = definitions.get(baseUrl);
      if (!definition) definitions.set(baseUrl, (definition = definitionFor(template, baseUrl)));
      return runVigil(engine, definition);
    },
  };
  return contender;
}

export const load: LoadContender = () => loadVigil();
