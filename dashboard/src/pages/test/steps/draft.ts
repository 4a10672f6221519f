/**
 * The editor's draft of a test's steps: the steps as served, each with a client key (the step id
 * once saved, `new-…` before), headers and form fields as editable rows. Pure functions only; the
 * view keeps one draft in state and replaces it through these.
 */
import type {
  Assertion,
  Comparison,
  ConditionStep,
  EmbeddedStep,
  PartnerInspectorStep,
  PauseStep,
  RequestStep,
  Source,
  Step,
  StepType,
  SubtestStep,
} from '../../../api/resources';
import { canonicalComparison } from '../../../../../src/domain/vocabulary';

export interface Row {
  name: string;
  value: string;
}

export type DraftRequest = Omit<RequestStep, 'headers' | 'form'> & {
  key: string;
  headers: Row[];
  form: Row[];
};
export type DraftPause = PauseStep & { key: string };
export type DraftSubtest = SubtestStep & { key: string };
export type DraftPartner = PartnerInspectorStep & { key: string };
export type DraftEmbedded = DraftRequest | DraftPause | DraftSubtest | DraftPartner;
export type DraftCondition = Omit<ConditionStep, 'steps'> & { key: string; steps: DraftEmbedded[] };
export type DraftStep = DraftEmbedded | DraftCondition;

export interface Draft {
  name: string;
  description: string;
  steps: DraftStep[];
}

let counter = 0;
export const newKey = (): string => `new-${++counter}`;

/** Sources whose `property` names something (a header, a JSON path, an XPath). */
export const SOURCES_WITH_PROPERTY: readonly Source[] = ['response_headers', 'response_json', 'response_xml'];
/** Comparisons that take no value. */
export const VALUELESS: readonly Comparison[] = ['empty', 'not_empty', 'is_a_number', 'is_null'];
const NUMERIC: readonly Comparison[] = [
  'equal_number',
  'is_less_than',
  'is_less_than_or_equal',
  'is_greater_than',
  'is_greater_than_or_equal',
];

export const STEP_LABELS: Record<StepType, string> = {
  request: 'Request',
  pause: 'Pause',
  condition: 'Condition',
  subtest: 'Subtest',
  'partner-inspector': 'Partner inspector',
};

function rowsOf(map: Record<string, string | string[]>): Row[] {
  return Object.entries(map).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((v) => ({ name, value: v })),
  );
}

function mapOf(rows: Row[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const row of rows) {
    if (!row.name && !row.value) continue;
    (out[row.name] ??= []).push(row.value);
  }
  return out;
}

/** The query of a URL as rows, kept as written (templates such as `{{id}}` stay intact). */
export function queryRows(url: string): Row[] {
  const query = /\?([^#]*)/.exec(url)?.[1];
  if (!query) return [];
  return query.split('&').map((pair) => {
    const at = pair.indexOf('=');
    return at < 0 ? { name: pair, value: '' } : { name: pair.slice(0, at), value: pair.slice(at + 1) };
  });
}

export function withQuery(url: string, rows: Row[]): string {
  const hashAt = url.indexOf('#');
  const hash = hashAt >= 0 ? url.slice(hashAt) : '';
  const base = (hashAt >= 0 ? url.slice(0, hashAt) : url).split('?')[0]!;
  const query = rows.map((r) => `${r.name}=${r.value}`).join('&');
  return rows.length ? `${base}?${query}${hash}` : `${base}${hash}`;
}

/** The URL without query rows left empty in the table. */
function cleanUrl(url: string): string {
  const rows = queryRows(url);
  const kept = rows.filter((r) => r.name || r.value);
  return kept.length === rows.length ? url : withQuery(url, kept);
}

/** The comparison a new assertion or condition starts with: equality, by its canonical name. */
export const DEFAULT_COMPARISON: Comparison = 'equal';

/** A new assertion on the status code (the default request step's expects `value`). */
export function newAssertion(value = ''): Assertion {
  return { source: 'response_status', property: '', comparison: DEFAULT_COMPARISON, value };
}

/** Assertions by the canonical name of their comparison (`is_equal`, the default step's, is `equal`). */
function canonicalAssertions(assertions: Assertion[]): Assertion[] {
  return assertions.map((a) => ({ ...a, comparison: canonicalComparison(a.comparison) }));
}

function embeddedFrom(step: EmbeddedStep): DraftEmbedded {
  if (step.step_type === 'request') {
    return {
      ...step,
      key: step.id,
      headers: rowsOf(step.headers),
      form: rowsOf(step.form),
      assertions: canonicalAssertions(step.assertions),
    };
  }
  if (step.step_type === 'subtest' || step.step_type === 'partner-inspector') {
    return { ...step, key: step.id, assertions: canonicalAssertions(step.assertions) };
  }
  return { ...step, key: step.id };
}

/**
 * The draft of a test as served. Comparisons take their canonical name, the one the editor offers,
 * so a step shows and saves each meaning by one name.
 */
export function draftOf(test: { name: string; description: string | null; steps: Step[] }): Draft {
  return {
    name: test.name,
    description: test.description ?? '',
    steps: test.steps.map((step) =>
      step.step_type === 'condition'
        ? {
            ...step,
            key: step.id,
            comparison: canonicalComparison(step.comparison),
            steps: step.steps.map(embeddedFrom),
          }
        : embeddedFrom(step),
    ),
  };
}

/** An assertion as sent: numbers for numeric comparisons, no value where the comparison takes none. */
function assertionInput(assertion: Assertion): Assertion {
  let value = assertion.value;
  if (VALUELESS.includes(assertion.comparison)) value = '';
  else if (
    NUMERIC.includes(assertion.comparison) &&
    typeof value === 'string' &&
    /^-?\d+(\.\d+)?$/.test(value)
  )
    value = Number(value);
  return { ...assertion, value };
}

function withoutKey<T extends { key: string; id: string }>(step: T): Omit<T, 'key'> {
  const { key: _key, id, ...rest } = step;
  return (id ? { id, ...rest } : rest) as Omit<T, 'key'>;
}

function embeddedInput(step: DraftEmbedded): Record<string, unknown> {
  switch (step.step_type) {
    case 'request': {
      const form = mapOf(step.form);
      return {
        ...withoutKey(step),
        url: cleanUrl(step.url),
        headers: mapOf(step.headers),
        form: Object.fromEntries(
          Object.entries(form).map(([name, values]) => [name, values.length === 1 ? values[0]! : values]),
        ),
        assertions: step.assertions.map(assertionInput),
      };
    }
    case 'pause':
      return withoutKey(step);
    case 'subtest':
    case 'partner-inspector':
      return { ...withoutKey(step), assertions: step.assertions.map(assertionInput) };
  }
}

/** The steps as the API takes them (PUT …/tests/<id> `steps`): new steps without an id. */
export function stepsInput(steps: DraftStep[]): Record<string, unknown>[] {
  return steps.map((step) =>
    step.step_type === 'condition'
      ? { ...withoutKey(step), steps: step.steps.map(embeddedInput) }
      : embeddedInput(step),
  );
}

export function saveBody(draft: Draft) {
  return {
    name: draft.name,
    description: draft.description === '' ? null : draft.description,
    steps: stepsInput(draft.steps),
  };
}

/** Whether two drafts would save the same test. */
export function sameDraft(a: Draft, b: Draft): boolean {
  return JSON.stringify(saveBody(a)) === JSON.stringify(saveBody(b));
}

export function newStep(type: StepType): DraftStep {
  const base = { key: newKey(), id: '' };
  switch (type) {
    case 'request':
      return {
        ...base,
        step_type: 'request',
        method: 'GET',
        url: '',
        body: '',
        form: [],
        headers: [],
        auth: {},
        assertions: [newAssertion('200')],
        variables: [],
        scripts: [],
        before_scripts: [],
        skipped: false,
        note: '',
      };
    case 'pause':
      return { ...base, step_type: 'pause', duration: 1 };
    case 'condition':
      return {
        ...base,
        step_type: 'condition',
        left_value: '',
        comparison: DEFAULT_COMPARISON,
        right_value: '',
        steps: [],
      };
    case 'subtest':
      return {
        ...base,
        step_type: 'subtest',
        test_uuid: '',
        environment_uuid: '',
        bucket_key: '',
        assertions: [],
        variables: [],
        params: [],
      };
    case 'partner-inspector':
      return {
        ...base,
        step_type: 'partner-inspector',
        integration_id: '',
        suite_id: '',
        test_id: '',
        is_custom_start_url: false,
        start_url: '',
        assertions: [],
        variables: [],
      };
  }
}

/** Where a step sits: its list (null = the test's own list, else the condition's key) and index. */
export interface Place {
  parent: string | null;
  index: number;
}

export function placeOf(steps: DraftStep[], key: string): Place | undefined {
  const index = steps.findIndex((s) => s.key === key);
  if (index >= 0) return { parent: null, index };
  for (const step of steps) {
    if (step.step_type !== 'condition') continue;
    const inner = step.steps.findIndex((s) => s.key === key);
    if (inner >= 0) return { parent: step.key, index: inner };
  }
  return undefined;
}

export function findDraftStep(steps: DraftStep[], key: string): DraftStep | undefined {
  const place = placeOf(steps, key);
  if (!place) return undefined;
  if (place.parent === null) return steps[place.index];
  const parent = steps.find((s) => s.key === place.parent) as DraftCondition;
  return parent.steps[place.index];
}

export function listOf(steps: DraftStep[], parent: string | null): DraftStep[] {
  if (parent === null) return steps;
  const condition = steps.find((s) => s.key === parent);
  return condition?.step_type === 'condition' ? condition.steps : [];
}

function withList(steps: DraftStep[], parent: string | null, list: DraftStep[]): DraftStep[] {
  if (parent === null) return list;
  return steps.map((s) =>
    s.key === parent && s.step_type === 'condition' ? { ...s, steps: list as DraftEmbedded[] } : s,
  );
}

export function replaceStep(steps: DraftStep[], key: string, next: DraftStep): DraftStep[] {
  const place = placeOf(steps, key);
  if (!place) return steps;
  const list = [...listOf(steps, place.parent)];
  list[place.index] = next;
  return withList(steps, place.parent, list);
}

export function removeStep(steps: DraftStep[], key: string): DraftStep[] {
  const place = placeOf(steps, key);
  if (!place) return steps;
  const list = listOf(steps, place.parent).filter((s) => s.key !== key);
  return withList(steps, place.parent, list);
}

/** Inserts `step` into a list; a condition never goes inside a condition. */
export function insertStep(
  steps: DraftStep[],
  step: DraftStep,
  parent: string | null,
  index: number,
): DraftStep[] {
  if (parent !== null && step.step_type === 'condition') return steps;
  const list = [...listOf(steps, parent)];
  list.splice(Math.max(0, Math.min(index, list.length)), 0, step);
  return withList(steps, parent, list);
}

/** Moves a step to `index` of list `parent` (the index counted after the step left its place). */
export function moveStep(steps: DraftStep[], key: string, parent: string | null, index: number): DraftStep[] {
  const step = findDraftStep(steps, key);
  if (!step || (parent !== null && step.step_type === 'condition') || parent === key) return steps;
  return insertStep(removeStep(steps, key), step, parent, index);
}

/** A copy with new keys and no ids (the server assigns them). */
export function cloneStep(step: DraftStep): DraftStep {
  const copy = structuredClone(step);
  copy.key = newKey();
  copy.id = '';
  if (copy.step_type === 'condition') copy.steps = copy.steps.map((s) => ({ ...s, key: newKey(), id: '' }));
  return copy;
}

/** Keys of the draft in order, condition children after their condition. */
export function keysOf(steps: DraftStep[]): string[] {
  return steps.flatMap((s) =>
    s.step_type === 'condition' ? [s.key, ...s.steps.map((i) => i.key)] : [s.key],
  );
}

/** A one-line summary of a step for its collapsed header. */
export function summaryOf(step: DraftStep): string {
  switch (step.step_type) {
    case 'request':
      return `${step.method} ${step.url || '(no URL)'}`;
    case 'pause':
      return `${step.duration} s`;
    case 'condition':
      return `${step.left_value || '""'} ${step.comparison} ${VALUELESS.includes(step.comparison) ? '' : step.right_value || '""'} · ${step.steps.length} step${step.steps.length === 1 ? '' : 's'}`;
    case 'subtest':
      return step.test_uuid ? `test ${step.test_uuid}` : '(no test chosen)';
    case 'partner-inspector':
      return step.test_id ? `partner test ${step.test_id}` : '(no partner test)';
  }
}

/**
 * The step an API error names (`/steps/2/url`, `/steps/2/steps/0/url`) as its key and the pointer
 * inside that step (`/url`), or undefined when the error is about no step in particular.
 */
export function stepOfField(steps: DraftStep[], field: string): { key: string; rest: string } | undefined {
  const match = /^\/steps\/(\d+)(?:\/steps\/(\d+))?(\/.*)?$/.exec(field);
  if (!match) return undefined;
  const outer = steps[Number(match[1])];
  if (!outer) return undefined;
  if (match[2] !== undefined) {
    const inner = outer.step_type === 'condition' ? outer.steps[Number(match[2])] : undefined;
    return inner ? { key: inner.key, rest: match[3] ?? '/' } : undefined;
  }
  return { key: outer.key, rest: match[3] ?? '/' };
}
