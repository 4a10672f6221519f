/**
 * `vigil run FILE…`: runs exported tests with the test engine, locally, without a server or a store
 * (DESIGN §4). Files are validated as a whole before anything runs; reporters follow the engine's
 * events. Exit code 0 when every run passed, 1 when one failed, 2 for usage and file errors.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import { VARIABLE_NAME_PATTERN } from '../domain/assertions.js';
import {
  EnvironmentInput,
  EnvironmentPatch,
  normalizeSettings,
  resolveSettings,
  type StoredSettings,
} from '../domain/environments.js';
import { type DataRow, dataFormatOf, DataRowsError, parseDataRows } from '../domain/data-rows.js';
import { AppError } from '../domain/errors.js';
import { normalizeStep, type Step, StepInput } from '../domain/steps.js';
import { createEngine, type RunDefinition, type RunEvents, type SubtestPort } from '../runner/engine.js';
import type { EgressPolicy } from '../net/egress.js';
import { LazyScriptSandbox } from '../runner/lazy-sandbox.js';
import { assertValid } from '../services/validation.js';
import { createCliReporter } from './reporters/cli.js';
import { createJsonReporter } from './reporters/json.js';
import { createHtmlReporter } from './reporters/html.js';
import { createJunitReporter } from './reporters/junit.js';
import {
  DEFAULT_REPORT_FILES,
  type DocumentReporterName,
  type Reporter,
  type ReporterName,
  REPORTERS,
  runLabel,
  type TestRun,
} from './reporters/reporter.js';

export const RUN_USAGE = `Usage: vigil run [options] FILE…

Runs exported tests (the file GET …/tests/<id>/export downloads, or a JSON array of them; the
API's envelope {"data": …} around a test is taken too) one after the other, here, without a server. Subtest steps run the test of that id among the FILEs given.

Options:
  --env FILE                an environment JSON object (initial_variables, stop_on_failure,
                            verify_ssl, …) laid over the test's environment, which it inherits from
  --environment NAME_OR_ID  the environment of the file to use (default: the test's default one)
  --var NAME=VALUE          a variable over the environment's (repeatable)
  --reporter NAME[,NAME…]   cli, json, junit, html (default cli; repeatable). cli prints progress
                            on stdout; each other reporter writes one document: to stdout when it is
                            the only reporter, else to its file (vigil-report.json, vigil-report.xml,
                            vigil-report.html by default). html always writes a file
  --reporter-json-output FILE, --reporter-junit-output FILE, --reporter-html-output FILE
                            where that reporter writes (progress is then printed on stdout)
  --output FILE             the file of the one json, junit or html reporter chosen
  --data FILE               run each test once per row of FILE (.csv with a header row, or .json:
                            an array of flat objects); the row's columns are initial variables,
                            over --var and the environment's
  --parallel N              with --data, run up to N rows at a time (default 1)
  --timeout SECONDS         time limit of each request (default 60)
  --bail                    stop after the first test that fails
  -h, --help                this help

Exit code: 0 when every test passed, 1 when one failed, 2 for usage or file errors.
EGRESS_POLICY=public-only refuses requests to loopback, private and link-local addresses.
`;

/** Where `vigil run` reads and writes; the real process or a test's capture. */
export interface RunIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  /** Relative FILE paths are read from here (default: the process's working directory). */
  cwd?: string;
  /** EGRESS_POLICY and NO_COLOR are read from here (default: the process's environment). */
  env?: Record<string, string | undefined>;
  /** Aborting it cancels the test running and skips the rest. */
  signal?: AbortSignal;
}

const FileEnvironment = Type.Composite([
  Type.Object({ id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }),
  EnvironmentInput,
]);

/** One test of a file: the export format; only `name` and `steps` are needed. */
const TestFile = Type.Object({
  vigil_export_version: Type.Optional(Type.Literal(1)),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  default_environment_id: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  environments: Type.Optional(Type.Array(FileEnvironment, { maxItems: 100 })),
  shared_environments: Type.Optional(Type.Array(FileEnvironment, { maxItems: 100 })),
  steps: Type.Array(StepInput, { maxItems: 200 }),
});
type TestFile = Static<typeof TestFile>;

const TestFileBody = Type.Unsafe<TestFile | TestFile[]>({
  if: { type: 'array' },
  then: Type.Array(TestFile, { minItems: 1, maxItems: 1000 }),
  else: TestFile,
});

interface LoadedEnvironment {
  id: string;
  name: string;
  parentId: string | null;
  settings: StoredSettings;
  /** JSON pointer in the file, for messages. */
  at: string;
}

interface LoadedTest {
  file: string;
  at: string;
  id: string;
  name: string;
  steps: Step[];
  /** The test's own environments first, then the shared ones. */
  environments: LoadedEnvironment[];
  defaultEnvironmentId: string;
}

interface RunOptions {
  files: string[];
  envFile: string | undefined;
  environment: string | undefined;
  variables: Record<string, string>;
  /** Progress on stdout. */
  progress: boolean;
  /** Each document reporter chosen, and its file (null: stdout). */
  documents: { name: DocumentReporterName; file: string | null }[];
  dataFile: string | undefined;
  parallel: number;
  timeoutMs: number;
  bail: boolean;
}

/** Rows a data file may hold. */
export const DATA_ROW_LIMIT = 10_000;
/** Rows run at a time at most under --parallel. */
export const PARALLEL_LIMIT = 64;

/** A usage or file error: the message is printed and the exit code is 2. */
class RunError extends Error {}

const BUCKET: RunDefinition['bucket'] = { key: 'local', name: 'local', verify_ssl: true };
const REGION = 'local';

/** `vigil run` for the real process: stdout, stderr, and Ctrl-C cancels the run in progress. */
export async function run(argv: string[], egress?: EgressPolicy): Promise<number> {
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once('SIGINT', onInterrupt);
  try {
    return await runCommand(argv, {
      stdout: process.stdout,
      stderr: process.stderr,
      env: egress ? { ...process.env, EGRESS_POLICY: egress } : process.env,
      signal: controller.signal,
    });
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}

export async function runCommand(argv: string[], io: RunIo): Promise<number> {
  const cwd = io.cwd ?? process.cwd();
  const env = io.env ?? process.env;
  let plan: Plan | 'help';
  try {
    plan = await prepare(argv, cwd, env);
  } catch (error) {
    if (error instanceof RunError) {
      io.stderr.write(`vigil run: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (plan === 'help') {
    io.stdout.write(RUN_USAGE);
    return 0;
  }
  const { options } = plan;

  const progress = options.progress
    ? createCliReporter({
        write: (text) => io.stdout.write(text),
        color: io.stdout.isTTY === true && !env.NO_COLOR,
        live: options.parallel === 1,
      })
    : null;
  const documents = options.documents.map(({ name, file }) => ({ file, reporter: documentReporter(name) }));
  const reporters: Reporter[] = [...(progress ? [progress] : []), ...documents.map((d) => d.reporter)];
  const runs = await runAll(plan, reporters, io.signal);

  const passed = runs.filter((r) => r.outcome.result === 'pass').length;
  const planned = plan.tests.length * (plan.rows?.length ?? 1);
  const totals = { passed, failed: runs.length - passed, not_run: planned - runs.length };
  let exitCode = totals.failed > 0 || totals.not_run > 0 ? 1 : 0;
  progress?.end(runs, totals);
  for (const { reporter, file } of documents) {
    const document = reporter.end(runs, totals);
    if (document === null) continue;
    if (file === null) {
      io.stdout.write(document);
      continue;
    }
    try {
      await fs.writeFile(path.resolve(cwd, file), document);
    } catch (error) {
      io.stderr.write(`vigil run: cannot write ${file}: ${reason(error)}\n`);
      exitCode = 2;
    }
  }
  return exitCode;
}

function documentReporter(name: DocumentReporterName): Reporter {
  switch (name) {
    case 'json':
      return createJsonReporter();
    case 'junit':
      return createJunitReporter();
    case 'html':
      return createHtmlReporter();
  }
}

/** Everything checked before the first test runs: options, files, the environment overlay. */
interface Plan {
  options: RunOptions;
  tests: LoadedTest[];
  overlay: Overlay | null;
  /** The rows of --data, or null: each test then runs once. */
  rows: DataRow[] | null;
  egress: EgressPolicy;
}

interface Overlay {
  name: string | undefined;
  settings: StoredSettings;
}

async function prepare(
  argv: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<Plan | 'help'> {
  const options = parseOptions(argv);
  if (options === 'help') return 'help';
  const egress = egressPolicy(env.EGRESS_POLICY);
  const tests: LoadedTest[] = [];
  for (const file of options.files) tests.push(...(await loadTestFile(file, cwd)));
  checkIds(tests);
  const overlay = options.envFile === undefined ? null : await loadOverlay(options.envFile, cwd);
  if (options.environment !== undefined) {
    for (const test of tests) pickEnvironment(test, options.environment);
  }
  const rows = options.dataFile === undefined ? null : await loadRows(options.dataFile, cwd);
  return { options, tests, overlay, rows, egress };
}

async function loadRows(file: string, cwd: string): Promise<DataRow[]> {
  const format = dataFormatOf(file);
  if (format === null) throw new RunError(`--data ${file}: the file name must end in .csv or .json`);
  const text = await readText(file, cwd);
  try {
    return parseDataRows(text, format, { maxRows: DATA_ROW_LIMIT });
  } catch (error) {
    if (error instanceof DataRowsError) throw new RunError(`${file}: ${error.message}`);
    throw error;
  }
}

/**
 * Runs the tests one after the other (each once per data row), up to `--parallel` at a time; under
 * `--bail` nothing new starts after a run fails. The runs come back in the order of the plan.
 */
async function runAll(plan: Plan, reporters: readonly Reporter[], signal?: AbortSignal): Promise<TestRun[]> {
  const { options, tests, overlay, rows } = plan;
  const scripts = new LazyScriptSandbox();
  const engine = createEngine({
    scripts,
    egress: plan.egress,
    subtests: subtestPort(tests),
    limits: { requestTimeoutMs: options.timeoutMs },
  });
  const planned = tests.flatMap((test): { test: LoadedTest; row: number | null; values: DataRow }[] =>
    rows === null
      ? [{ test, row: null, values: {} }]
      : rows.map((values, index) => ({ test, row: index + 1, values })),
  );
  const runs: (TestRun | undefined)[] = [];
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < planned.length && !signal?.aborted && !(failed && options.bail)) {
      const index = next++;
      const { test, row, values } = planned[index]!;
      const label = runLabel({ test_name: test.name, row });
      const events: RunEvents = {
        runStarted: (event) => reporters.forEach((r) => r.events.runStarted?.(event, label)),
        stepStarted: (event) => reporters.forEach((r) => r.events.stepStarted?.(event)),
        stepFinished: (event) => reporters.forEach((r) => r.events.stepFinished?.(event)),
      };
      const chosen = pickEnvironment(test, options.environment ?? test.defaultEnvironmentId);
      const definition = definitionOf(test, chosen, overlay, { ...options.variables, ...values });
      const outcome = await engine.run(definition, { signal, events });
      const testRun: TestRun = {
        file: test.file,
        test_id: test.id,
        test_name: test.name,
        environment_name: definition.environment.name,
        row,
        outcome,
      };
      runs[index] = testRun;
      reporters.forEach((r) => r.runFinished(testRun));
      if (outcome.result !== 'pass') failed = true;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.parallel, planned.length) }, worker));
  } finally {
    await scripts.close();
  }
  return runs.filter((r): r is TestRun => r !== undefined);
}

function parseOptions(argv: string[]): RunOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        env: { type: 'string' },
        environment: { type: 'string' },
        var: { type: 'string', multiple: true },
        reporter: { type: 'string', multiple: true },
        output: { type: 'string' },
        'reporter-json-output': { type: 'string' },
        'reporter-junit-output': { type: 'string' },
        'reporter-html-output': { type: 'string' },
        data: { type: 'string' },
        parallel: { type: 'string' },
        timeout: { type: 'string' },
        bail: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new RunError(`${reason(error)}\n\n${RUN_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length === 0) throw new RunError(`no test file given\n\n${RUN_USAGE}`);

  const { progress, documents } = reportersOf(values);

  let parallel = 1;
  if (values.parallel !== undefined) {
    parallel = Number(values.parallel);
    if (!/^\d+$/.test(values.parallel) || parallel < 1 || parallel > PARALLEL_LIMIT) {
      throw new RunError(
        `--parallel must be a whole number from 1 to ${PARALLEL_LIMIT}, got "${values.parallel}"`,
      );
    }
    if (values.data === undefined)
      throw new RunError('--parallel needs --data (rows are what run in parallel)');
  }

  const variables: Record<string, string> = {};
  const namePattern = new RegExp(VARIABLE_NAME_PATTERN);
  for (const assignment of values.var ?? []) {
    const equals = assignment.indexOf('=');
    const name = equals < 0 ? assignment : assignment.slice(0, equals);
    if (equals < 0 || !namePattern.test(name)) {
      throw new RunError(
        `--var "${assignment}" must be NAME=VALUE, NAME of letters, digits, _ . - (not starting with a digit)`,
      );
    }
    variables[name] = assignment.slice(equals + 1);
  }

  let timeoutMs = 60_000;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (values.timeout.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
      throw new RunError(
        `--timeout must be a number of seconds above 0 (at most 86400), got "${values.timeout}"`,
      );
    }
    timeoutMs = Math.max(1, Math.round(seconds * 1000));
  }

  return {
    files: positionals,
    envFile: values.env,
    environment: values.environment,
    variables,
    progress,
    documents,
    dataFile: values.data,
    parallel,
    timeoutMs,
    bail: values.bail ?? false,
  };
}

/**
 * The reporters of `--reporter` (repeatable, comma-separated) and where each writes: a document
 * reporter named alone writes to stdout (json, junit), unless a file is named for it; otherwise to
 * its file. Progress is printed when `cli` is named, or when no document takes stdout.
 */
function reportersOf(values: {
  reporter?: string[] | undefined;
  output?: string | undefined;
  'reporter-json-output'?: string | undefined;
  'reporter-junit-output'?: string | undefined;
  'reporter-html-output'?: string | undefined;
}): Pick<RunOptions, 'progress' | 'documents'> {
  const names: ReporterName[] = [];
  for (const name of (values.reporter ?? ['cli']).flatMap((v) => v.split(',')).map((v) => v.trim())) {
    if (!isReporter(name)) {
      throw new RunError(`--reporter must be one of ${REPORTERS.join(', ')}, got "${name}"`);
    }
    if (!names.includes(name)) names.push(name);
  }
  const chosen = names.filter((n): n is DocumentReporterName => n !== 'cli');
  const files: Record<DocumentReporterName, string | undefined> = {
    json: values['reporter-json-output'],
    junit: values['reporter-junit-output'],
    html: values['reporter-html-output'],
  };
  for (const name of Object.keys(files) as DocumentReporterName[]) {
    if (files[name] !== undefined && !chosen.includes(name)) {
      throw new RunError(`--reporter-${name}-output needs --reporter ${name}`);
    }
  }
  if (values.output !== undefined) {
    if (chosen.length !== 1) {
      throw new RunError(
        chosen.length === 0
          ? '--output needs --reporter json, junit or html (the cli reporter prints to stdout)'
          : `--output names one file for ${chosen.join(', ')}: use --reporter-<name>-output for each`,
      );
    }
    const only = chosen[0]!;
    if (files[only] !== undefined) throw new RunError(`give --output or --reporter-${only}-output, not both`);
    files[only] = values.output;
  }
  const alone = names.length === 1 && chosen.length === 1 && chosen[0] !== 'html';
  const documents = chosen.map((name) => ({
    name,
    file: files[name] ?? (alone ? null : DEFAULT_REPORT_FILES[name]),
  }));
  return { progress: names.includes('cli') || documents.every((d) => d.file !== null), documents };
}

function isReporter(name: string): name is ReporterName {
  return (REPORTERS as readonly string[]).includes(name);
}

function egressPolicy(value: string | undefined): EgressPolicy {
  const policy = value || 'allow-all';
  if (policy !== 'allow-all' && policy !== 'public-only') {
    throw new RunError(`EGRESS_POLICY must be allow-all or public-only, got "${policy}"`);
  }
  return policy;
}

async function readText(file: string, cwd: string): Promise<string> {
  try {
    return await fs.readFile(path.resolve(cwd, file), 'utf8');
  } catch (error) {
    throw new RunError(`${file}: cannot read the file: ${reason(error)}`);
  }
}

async function readJson(file: string, cwd: string): Promise<unknown> {
  const text = await readText(file, cwd);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RunError(`${file}: not valid JSON: ${reason(error)}`);
  }
}

/** Validates `value` against `schema`; the error names the file and the JSON pointer of the field. */
function validate<T>(schema: Parameters<typeof assertValid>[0], value: unknown, file: string): T {
  try {
    assertValid<T>(schema, value);
    return value as T;
  } catch (error) {
    if (error instanceof AppError) {
      const message =
        error.field === '/' ? error.message.replace(/^The request body/, 'the document') : error.message;
      throw new RunError(`${file}: ${message}`);
    }
    throw error;
  }
}

async function loadTestFile(file: string, cwd: string): Promise<LoadedTest[]> {
  const document = await readJson(file, cwd);
  if (typeof document !== 'object' || document === null) {
    throw new RunError(`${file}: the document must be an exported test (a JSON object) or an array of them`);
  }
  // A file saved from the API's answer rather than downloaded: the test is the envelope's `data`.
  const unwrapped = isEnvelope(document) ? document.data : document;
  const body = validate<TestFile | TestFile[]>(TestFileBody, unwrapped, file);
  return Array.isArray(body) ? body.map((t, i) => loadTest(t, file, `/${i}`)) : [loadTest(body, file, '')];
}

/** `{data, meta?, error?}` around a test, as the API's other answers come; a test has no `data`. */
function isEnvelope(document: object): document is { data: unknown } {
  return !Array.isArray(document) && 'data' in document && !('steps' in document);
}

function loadTest(input: TestFile, file: string, at: string): LoadedTest {
  const environments: LoadedEnvironment[] = [
    ...(input.environments ?? []).map((e, i) => loadEnvironment(e, `${at}/environments/${i}`)),
    ...(input.shared_environments ?? []).map((e, i) => loadEnvironment(e, `${at}/shared_environments/${i}`)),
  ];
  if (environments.length === 0) {
    environments.push({ id: randomUUID(), name: 'Test Settings', parentId: null, settings: {}, at: '' });
  }
  for (const environment of environments) {
    if (environment.parentId !== null && !environments.some((e) => e.id === environment.parentId)) {
      throw new RunError(
        `${file}: ${environment.at}/parent_environment_id names environment ${environment.parentId}, ` +
          'which is not in the file',
      );
    }
  }
  let defaultEnvironmentId = environments[0]!.id;
  if (input.default_environment_id) {
    if (!environments.some((e) => e.id === input.default_environment_id)) {
      throw new RunError(
        `${file}: ${at}/default_environment_id names environment ${input.default_environment_id}, ` +
          'which is not in the file',
      );
    }
    defaultEnvironmentId = input.default_environment_id;
  }
  return {
    file,
    at,
    id: input.id ?? randomUUID(),
    name: input.name,
    steps: input.steps.map((step) => normalizeStep(step, (s) => s.id ?? randomUUID())),
    environments,
    defaultEnvironmentId,
  };
}

function loadEnvironment(input: Static<typeof FileEnvironment>, at: string): LoadedEnvironment {
  return {
    id: input.id ?? randomUUID(),
    name: input.name,
    parentId: input.parent_environment_id ?? null,
    settings: normalizeSettings(input),
    at,
  };
}

/** Subtests find tests by id, so two tests of one id would make them ambiguous. */
function checkIds(tests: readonly LoadedTest[]): void {
  const seen = new Map<string, LoadedTest>();
  for (const test of tests) {
    const first = seen.get(test.id);
    if (first) {
      throw new RunError(
        `${test.file}: ${test.at}/id ${test.id} is also the id of test "${first.name}" in ${first.file}`,
      );
    }
    seen.set(test.id, test);
  }
}

async function loadOverlay(file: string, cwd: string): Promise<Overlay> {
  const document = await readJson(file, cwd);
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new RunError(`${file}: the document must be an environment (a JSON object)`);
  }
  const input = validate<Static<typeof EnvironmentPatch>>(EnvironmentPatch, document, file);
  return { name: input.name, settings: normalizeSettings(input) };
}

/** The environment of a test by id, else by name; its own environments before the shared ones. */
function pickEnvironment(test: LoadedTest, nameOrId: string): LoadedEnvironment {
  const found =
    test.environments.find((e) => e.id === nameOrId) ?? test.environments.find((e) => e.name === nameOrId);
  if (!found) {
    const names = test.environments.map((e) => `"${e.name}"`).join(', ');
    throw new RunError(
      `${test.file}: test "${test.name}" has no environment "${nameOrId}" (it has ${names})`,
    );
  }
  return found;
}

/** The settings chain of an environment, nearest first, following `parent_environment_id` in the file. */
function settingsChain(test: LoadedTest, environment: LoadedEnvironment): StoredSettings[] {
  const chain = [environment.settings];
  const seen = new Set([environment.id]);
  let parentId = environment.parentId;
  while (parentId !== null && !seen.has(parentId)) {
    seen.add(parentId);
    const parent = test.environments.find((e) => e.id === parentId);
    if (!parent) break;
    chain.push(parent.settings);
    parentId = parent.parentId;
  }
  return chain;
}

function definitionOf(
  test: LoadedTest,
  environment: LoadedEnvironment,
  overlay: Overlay | null,
  variables: Record<string, string>,
): RunDefinition {
  const chain = settingsChain(test, environment);
  return {
    test: { id: test.id, name: test.name, steps: test.steps },
    environment: {
      id: environment.id,
      name: overlay?.name ?? environment.name,
      settings: resolveSettings(overlay ? [overlay.settings, ...chain] : chain),
    },
    bucket: BUCKET,
    region: REGION,
    agent: null,
    variables: { ...variables },
  };
}

/** Subtests run the test of that id among the files given, with its own environment; nothing is recorded. */
function subtestPort(tests: readonly LoadedTest[]): SubtestPort {
  return {
    async resolve(step, parent, variables) {
      const test = tests.find((t) => t.id === step.test_uuid);
      if (!test) {
        return { error: `test_uuid: no test ${step.test_uuid} among the files given to vigil run` };
      }
      const environmentId = step.environment_uuid || test.defaultEnvironmentId;
      const environment = test.environments.find((e) => e.id === environmentId);
      if (!environment) {
        return { error: `environment_uuid: no environment ${environmentId} of test ${test.name}` };
      }
      return {
        test: { id: test.id, name: test.name, steps: test.steps },
        environment: {
          id: environment.id,
          name: environment.name,
          settings: resolveSettings(settingsChain(test, environment)),
        },
        bucket: parent.bucket,
        region: parent.region,
        agent: parent.agent,
        variables,
      };
    },
  };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
