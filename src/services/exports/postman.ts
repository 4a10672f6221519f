/**
 * A test as a Postman collection (format v2.1): one request per request step, with headers, body
 * and basic auth, `{{variables}}` kept as they are (Postman writes them the same way), assertions
 * and extracted variables as `pm` test scripts where they translate, and the default environment's
 * initial variables as collection variables. Pure.
 */
import type { Assertion, Variable } from '../../domain/assertions.js';
import type { RequestStep } from '../../domain/steps.js';
import type { TestExport } from '../test-transfer.js';
import { defaultVariables, type ExportedRequest, formPairs, requestsOf } from './requests.js';

export const POSTMAN_SCHEMA = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

interface KeyValue {
  key: string;
  value: string;
}

export interface PostmanItem {
  name: string;
  request: {
    method: string;
    header: KeyValue[];
    url: string;
    description?: string;
    body?: { mode: 'raw'; raw: string } | { mode: 'urlencoded'; urlencoded: KeyValue[] };
    auth?: { type: 'basic'; basic: (KeyValue & { type: 'string' })[] } | { type: 'noauth' };
  };
  event: { listen: 'test'; script: { type: 'text/javascript'; exec: string[] } }[];
}

export interface PostmanCollection {
  info: { _postman_id: string; name: string; description: string; schema: typeof POSTMAN_SCHEMA };
  item: PostmanItem[];
  variable: KeyValue[];
}

export function postmanCollection(test: TestExport): PostmanCollection {
  const { requests, leftOut } = requestsOf(test.steps);
  const description = [
    test.description ?? '',
    'Exported from Vigil. Assertions and extracted variables are test scripts; ' +
      "the default environment's initial variables are collection variables.",
    ...(leftOut.length > 0 ? [`Not exported (no Postman equivalent): ${leftOut.join('; ')}.`] : []),
  ]
    .filter((line) => line !== '')
    .join('\n\n');
  return {
    info: { _postman_id: test.id, name: test.name, description, schema: POSTMAN_SCHEMA },
    item: requests.map(item),
    variable: Object.entries(defaultVariables(test)).map(([key, value]) => ({ key, value })),
  };
}

function item({ step, number, condition }: ExportedRequest): PostmanItem {
  const notes = [
    ...(step.note ? [step.note] : []),
    ...(condition ? [`Runs in Vigil only when ${condition}.`] : []),
    ...(step.before_scripts.length + step.scripts.length > 0
      ? ['The step has Vigil scripts, which are not exported.']
      : []),
    ...(step.auth.auth_type === 'oauth_1' ? ['OAuth 1.0a signing is not exported.'] : []),
  ];
  const request: PostmanItem['request'] = {
    method: step.method,
    header: Object.entries(step.headers).flatMap(([key, values]) => values.map((value) => ({ key, value }))),
    url: step.url,
    ...(notes.length > 0 && { description: notes.join('\n') }),
  };
  const form = formPairs(step.form);
  if (step.body !== '') request.body = { mode: 'raw', raw: step.body };
  else if (form.length > 0) {
    request.body = { mode: 'urlencoded', urlencoded: form.map(([key, value]) => ({ key, value })) };
  }
  if (step.auth.auth_type === 'basic') {
    request.auth = {
      type: 'basic',
      basic: [
        { key: 'username', value: step.auth.username, type: 'string' },
        { key: 'password', value: step.auth.password, type: 'string' },
      ],
    };
  }
  const exec = testScript(step);
  return {
    name: `${number}. ${step.note || `${step.method} ${step.url}`}`,
    request,
    event: exec.length > 0 ? [{ listen: 'test', script: { type: 'text/javascript', exec } }] : [],
  };
}

/** The step's extracted variables, then its assertions, as lines of a Postman test script. */
function testScript(step: RequestStep): string[] {
  const lines: string[] = [];
  for (const variable of step.variables) {
    const read = reader(variable);
    lines.push(
      read === null
        ? `// Variable ${variable.name} (${variable.source} ${variable.property}) is not exported.`
        : `pm.collectionVariables.set(${js(variable.name)}, String(${read}));`,
    );
  }
  for (const assertion of step.assertions) lines.push(...assertionTest(assertion));
  return lines;
}

/** A JavaScript expression reading the source in Postman's sandbox, or null when none fits. */
function reader({ source, property }: Pick<Variable, 'source' | 'property'>): string | null {
  switch (source) {
    case 'response_status':
      return 'pm.response.code';
    case 'response_headers':
      return `pm.response.headers.get(${js(property)})`;
    case 'response_json':
      return property === '' ? 'pm.response.json()' : `_.get(pm.response.json(), ${js(property)})`;
    case 'response_text':
      return 'pm.response.text()';
    case 'response_time':
      return 'pm.response.responseTime';
    case 'response_size':
      return 'pm.response.size().body';
    case 'response_xml':
      return null;
  }
}

function assertionTest(assertion: Assertion): string[] {
  const read = reader(assertion);
  const where = assertion.property ? `${assertion.source} ${assertion.property}` : assertion.source;
  const title = `${where} ${assertion.comparison} ${assertion.value}`.trim();
  const check = read === null ? null : expectation(assertion, read);
  if (check === null) return [`// Assertion not exported: ${title.replace(/\n/g, ' ')}`];
  return [`pm.test(${js(title)}, function () {`, `  ${check}`, '});'];
}

/** `pm.expect(…)` for the comparison, or null for one without a plain Chai equivalent. */
function expectation(assertion: Assertion, read: string): string | null {
  const target = String(assertion.value);
  // A target with {{variables}} is resolved by Postman at run time.
  const text = target.includes('{{') ? `pm.variables.replaceIn(${js(target)})` : js(target);
  const number = `Number(${text})`;
  const actual = `String(${read})`;
  switch (assertion.comparison) {
    case 'equal':
    case 'is_equal':
      return `pm.expect(${actual}).to.eql(${text});`;
    case 'not_equal':
      return `pm.expect(${actual}).to.not.eql(${text});`;
    case 'contains':
      return `pm.expect(${actual}).to.include(${text});`;
    case 'does_not_contain':
      return `pm.expect(${actual}).to.not.include(${text});`;
    case 'empty':
      return `pm.expect(${read}).to.be.empty;`;
    case 'not_empty':
      return `pm.expect(${read}).to.not.be.empty;`;
    case 'is_null':
      return `pm.expect(${read}).to.be.null;`;
    case 'is_a_number':
      return `pm.expect(Number.isFinite(Number(${read}))).to.be.true;`;
    case 'equal_number':
      return `pm.expect(Number(${read})).to.eql(${number});`;
    case 'is_less_than':
      return `pm.expect(Number(${read})).to.be.below(${number});`;
    case 'is_less_than_or_equal':
      return `pm.expect(Number(${read})).to.be.at.most(${number});`;
    case 'is_greater_than':
      return `pm.expect(Number(${read})).to.be.above(${number});`;
    case 'is_greater_than_or_equal':
      return `pm.expect(Number(${read})).to.be.at.least(${number});`;
    case 'has_key':
      return `pm.expect(${read}).to.have.property(${text});`;
    case 'has_value':
      return null;
  }
}

/** A JavaScript string literal. */
function js(value: string): string {
  return JSON.stringify(value)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
