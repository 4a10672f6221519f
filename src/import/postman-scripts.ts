import { parse } from 'acorn';
import type {
  CallExpression,
  Expression,
  Literal,
  Node,
  Pattern,
  PrivateIdentifier,
  SpreadElement,
  Statement,
  Super,
} from 'acorn';
import type { AssertionInput, VariableInput } from '../domain/assertions.js';
import { isVariableName } from './result.js';

/**
 * Postman test scripts → assertions and variable extractions, read from the script's syntax tree
 * (acorn), never by pattern-matching the text. What is translated: status code, JSON property
 * comparisons, header present, response time below/above, and `pm.environment.set` /
 * `pm.collectionVariables.set` of a response value. A `pm.test` block is translated whole or not at
 * all; whatever is left is handed back as source text.
 */

export interface ScriptTranslation {
  assertions: AssertionInput[];
  variables: VariableInput[];
  /** Statements not translated, as written; null when everything was. */
  leftover: string | null;
}

type AnyNode = Expression | Pattern | Statement | SpreadElement | Super | PrivateIdentifier;

/** Chai's words that only read well and change nothing. */
const LANGUAGE_CHAINS = new Set([
  'to',
  'be',
  'been',
  'is',
  'that',
  'which',
  'and',
  'has',
  'have',
  'with',
  'at',
  'of',
  'same',
  'but',
  'does',
  'still',
  'also',
  'deep',
]);

const SETTERS = new Set([
  'pm.environment.set',
  'pm.collectionVariables.set',
  'pm.globals.set',
  'pm.variables.set',
  'postman.setEnvironmentVariable',
  'postman.setGlobalVariable',
]);

/** `a.b.c` of a member chain of plain names; null for anything else. */
function dotted(node: AnyNode | null | undefined): string | null {
  if (!node) return null;
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier') {
    const object = dotted(node.object);
    return object === null ? null : `${object}.${node.property.name}`;
  }
  return null;
}

/** The node as a call of `callee` (with `args` arguments when given); null when it is not one. */
function callOf(node: AnyNode | undefined, callee: string, args?: number): CallExpression | null {
  return node?.type === 'CallExpression' &&
    dotted(node.callee) === callee &&
    (args === undefined || node.arguments.length === args)
    ? node
    : null;
}

type Value = string | number | boolean | null;

/** A literal value: strings, numbers (also negative), booleans, null, templates without `${}`. */
function literal(node: AnyNode | undefined): { value: Value } | null {
  if (!node) return null;
  if (node.type === 'Literal') {
    const v = (node as Literal).value;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null)
      return { value: v };
    return null;
  }
  if (node.type === 'UnaryExpression' && node.operator === '-' && node.argument.type === 'Literal') {
    const v = node.argument.value;
    return typeof v === 'number' ? { value: -v } : null;
  }
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0)
    return { value: node.quasis[0]?.value.cooked ?? '' };
  return null;
}

const GETTERS = new Set([
  'pm.environment.get',
  'pm.collectionVariables.get',
  'pm.globals.get',
  'pm.variables.get',
  'postman.getEnvironmentVariable',
  'postman.getGlobalVariable',
]);

/** `pm.environment.get("x")` and its relatives as the template `{{x}}` (assertion targets are templated). */
function variableValue(node: AnyNode | undefined): { value: string } | null {
  if (node?.type !== 'CallExpression' || node.arguments.length !== 1) return null;
  if (!GETTERS.has(dotted(node.callee) ?? '')) return null;
  const name = literal(node.arguments[0])?.value;
  return typeof name === 'string' && isVariableName(name) ? { value: `{{${name}}}` } : null;
}

/** Where an expression reads from the response, as an assertion or variable source. */
type Subject = Pick<AssertionInput, 'source' | 'property'>;

class Translator {
  /** Names bound to the parsed response body (`var jsonData = pm.response.json()`). */
  readonly bodyNames = new Set<string>();

  /** The JSON path an expression reads from the response body; null when it does not. */
  jsonPath(node: AnyNode): string | null {
    if (node.type === 'Identifier') return this.bodyNames.has(node.name) ? '' : null;
    if (callOf(node, 'pm.response.json', 0)) return '';
    if (
      node.type === 'CallExpression' &&
      dotted(node.callee) === 'JSON.parse' &&
      node.arguments.length === 1 &&
      (dotted(node.arguments[0]) === 'responseBody' || callOf(node.arguments[0], 'pm.response.text', 0))
    )
      return '';
    if (node.type !== 'MemberExpression') return null;
    const base = this.jsonPath(node.object);
    if (base === null) return null;
    if (!node.computed && node.property.type === 'Identifier') {
      const key = node.property.name;
      return base === '' ? key : `${base}.${key}`;
    }
    const key = literal(node.property);
    if (!key) return null;
    if (typeof key.value === 'number' && Number.isInteger(key.value)) return `${base}[${key.value}]`;
    if (typeof key.value === 'string') {
      if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key.value))
        return base === '' ? key.value : `${base}.${key.value}`;
      return `${base}[${JSON.stringify(key.value)}]`;
    }
    return null;
  }

  subject(node: AnyNode): Subject | null {
    const name = dotted(node);
    if (name === 'pm.response.code' || name === 'responseCode.code')
      return { source: 'response_status', property: '' };
    if (name === 'pm.response.responseTime' || name === 'responseTime')
      return { source: 'response_time', property: '' };
    if (callOf(node, 'pm.response.text', 0) || name === 'responseBody')
      return { source: 'response_text', property: '' };
    const header = callOf(node, 'pm.response.headers.get', 1) ?? callOf(node, 'postman.getResponseHeader', 1);
    const headerName = literal(header?.arguments[0])?.value;
    if (typeof headerName === 'string') return { source: 'response_headers', property: headerName };
    const path = this.jsonPath(node);
    return path === null ? null : { source: 'response_json', property: path };
  }

  /** `pm.expect(x).to.…(v)` and the `pm.response.to.have.…` forms. */
  assertion(node: AnyNode): AssertionInput | null {
    if (node.type !== 'CallExpression') return null;
    const status = callOf(node, 'pm.response.to.have.status', 1);
    if (status) {
      const code = literal(status.arguments[0]);
      return typeof code?.value === 'number'
        ? { source: 'response_status', comparison: 'equal', value: code.value }
        : null;
    }
    if (callOf(node, 'pm.response.to.have.header')) {
      const [name, value] = node.arguments.map((a) => literal(a));
      if (typeof name?.value !== 'string' || node.arguments.length > 2) return null;
      if (node.arguments.length === 1)
        return { source: 'response_headers', property: name.value, comparison: 'not_empty' };
      if (value === null || value === undefined || value.value === null) return null;
      return {
        source: 'response_headers',
        property: name.value,
        comparison: 'equal',
        value: typeof value.value === 'number' ? value.value : String(value.value),
      };
    }
    // pm.expect(subject).<chain>.<matcher>(value)
    const words: string[] = [];
    let callee: AnyNode = node.callee;
    while (callee.type === 'MemberExpression' && !callee.computed && callee.property.type === 'Identifier') {
      words.unshift(callee.property.name);
      callee = callee.object;
    }
    const expect = callOf(callee, 'pm.expect', 1);
    if (!expect) return null;
    const subject = this.subject(expect.arguments[0]!);
    if (!subject) return null;
    const meaningful = words.filter((w) => !LANGUAGE_CHAINS.has(w));
    const negated = meaningful[0] === 'not';
    const matcher = negated ? meaningful.slice(1) : meaningful;
    if (matcher.length !== 1 || node.arguments.length !== 1) return null;
    const target = literal(node.arguments[0]) ?? variableValue(node.arguments[0]);
    if (!target) return null;
    const v = target.value;
    const comparable = v === null ? '' : typeof v === 'number' ? v : String(v);
    switch (matcher[0]) {
      case 'eql':
      case 'equal':
      case 'equals':
      case 'eq':
        if (v === null) return negated ? null : { ...subject, comparison: 'is_null' };
        return { ...subject, comparison: negated ? 'not_equal' : 'equal', value: comparable };
      case 'below':
      case 'lessThan':
      case 'lt':
        return typeof v === 'number' && !negated
          ? { ...subject, comparison: 'is_less_than', value: v }
          : null;
      case 'above':
      case 'greaterThan':
      case 'gt':
        return typeof v === 'number' && !negated
          ? { ...subject, comparison: 'is_greater_than', value: v }
          : null;
      case 'least':
      case 'gte':
        return typeof v === 'number' && !negated
          ? { ...subject, comparison: 'is_greater_than_or_equal', value: v }
          : null;
      case 'most':
      case 'lte':
        return typeof v === 'number' && !negated
          ? { ...subject, comparison: 'is_less_than_or_equal', value: v }
          : null;
      case 'include':
      case 'includes':
      case 'contain':
      case 'contains':
        return v === null
          ? null
          : { ...subject, comparison: negated ? 'does_not_contain' : 'contains', value: comparable };
      default:
        return null;
    }
  }

  /** `pm.environment.set("name", <response value>)` and its relatives. */
  variable(node: AnyNode): VariableInput | null {
    if (node.type !== 'CallExpression' || node.arguments.length !== 2) return null;
    if (!SETTERS.has(dotted(node.callee) ?? '')) return null;
    const name = literal(node.arguments[0]);
    if (typeof name?.value !== 'string' || !isVariableName(name.value)) return null;
    const subject = this.subject(node.arguments[1]!);
    return subject ? { name: name.value, ...subject } : null;
  }

  /** Binds `var x = pm.response.json()`; false when a declaration is anything else. */
  declaration(node: Statement): boolean {
    if (node.type !== 'VariableDeclaration') return false;
    for (const d of node.declarations) {
      if (d.id.type !== 'Identifier' || !d.init || this.jsonPath(d.init) !== '') return false;
    }
    for (const d of node.declarations) if (d.id.type === 'Identifier') this.bodyNames.add(d.id.name);
    return true;
  }

  /** One statement into `into`; false when it (or any part of it) cannot be translated. */
  statement(node: Statement, into: Pick<ScriptTranslation, 'assertions' | 'variables'>): boolean {
    if (node.type === 'EmptyStatement') return true;
    if (this.declaration(node)) return true;
    if (node.type !== 'ExpressionStatement') return false;
    const e = node.expression;
    // tests["name"] = responseCode.code === 200;
    if (
      e.type === 'AssignmentExpression' &&
      e.left.type === 'MemberExpression' &&
      dotted(e.left.object) === 'tests' &&
      e.right.type === 'BinaryExpression' &&
      (e.right.operator === '===' || e.right.operator === '==')
    ) {
      const subject = this.subject(e.right.left);
      const value = literal(e.right.right);
      if (!subject || !value || value.value === null || typeof value.value === 'boolean') return false;
      into.assertions.push({ ...subject, comparison: 'equal', value: value.value });
      return true;
    }
    const test = callOf(e, 'pm.test', 2);
    if (test) {
      const fn = test.arguments[1]!;
      if (fn.type !== 'FunctionExpression' && fn.type !== 'ArrowFunctionExpression') return false;
      if (fn.params.length > 0) return false;
      const body: Statement[] =
        fn.body.type === 'BlockStatement'
          ? fn.body.body
          : [{ type: 'ExpressionStatement', expression: fn.body } as Statement];
      const inner = { assertions: [] as AssertionInput[], variables: [] as VariableInput[] };
      for (const s of body) if (!this.statement(s, inner)) return false;
      into.assertions.push(...inner.assertions);
      into.variables.push(...inner.variables);
      return true;
    }
    const assertion = this.assertion(e);
    if (assertion) {
      into.assertions.push(assertion);
      return true;
    }
    const variable = this.variable(e);
    if (variable) {
      into.variables.push(variable);
      return true;
    }
    return false;
  }
}

/** Translates a Postman "test" script; what is not translated comes back in `leftover`. */
export function translateTestScript(source: string): ScriptTranslation {
  const result: ScriptTranslation = { assertions: [], variables: [], leftover: null };
  if (source.trim() === '') return result;
  let program;
  try {
    program = parse(source, {
      ecmaVersion: 'latest',
      allowReturnOutsideFunction: true,
      sourceType: 'script',
    });
  } catch {
    return { ...result, leftover: source };
  }
  const translator = new Translator();
  const left: string[] = [];
  for (const statement of program.body as Node[]) {
    const s = statement as Statement;
    if (!translator.statement(s, result)) left.push(source.slice(s.start, s.end));
  }
  result.leftover = left.length ? left.join('\n') : null;
  return result;
}

/** Source kept for a person to port, inert: every line commented out under a heading. */
export function keptScript(heading: string, source: string): string {
  const lines = source.split(/\r?\n/).map((line) => `// ${line}`.trimEnd());
  return [`// ${heading}`, ...lines].join('\n');
}
