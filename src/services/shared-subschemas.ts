/**
 * Request body schemas repeat large parts: a test's steps appear in both forms of a create (one test
 * or an array of them), and in a condition step again, each with its assertions, variables, headers
 * and auth. Ajv writes the checks of a subschema out in full wherever it appears, so the validator of
 * a test create was close to a megabyte of generated code. Before compiling, every subschema that
 * appears more than once (and is not trivially small) is moved into `$defs` once and referred to by
 * `$ref`; compiled with `inlineRefs: false`, each becomes one function that every place calls.
 *
 * The branches of a `oneOf` with a `discriminator` stay where they are: the error for an unknown tag
 * lists the tags from them (validation.ts), and Ajv reads their tag values at compile time.
 */

/** Keywords whose value is a schema. */
const SCHEMA_VALUE = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** Subschemas whose JSON is shorter than this are left in place: a call would cost more than it saves. */
const MIN_SHARED_LENGTH = 200;
const DEF_PREFIX = 'vigil_shared_';

export type Schema = Record<string, unknown>;

export function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Calls `visit` for each direct subschema of `schema`, saying whether it is a discriminator branch. */
function eachChild(schema: Schema, visit: (child: Schema, branch: boolean) => void): void {
  mapSubschemas(schema, (child, branch) => {
    visit(child, branch);
    return child;
  });
}

/**
 * A shallow copy of `schema` whose direct subschemas are replaced by what `map` returns for them
 * (`branch`: the subschema is a branch of a `oneOf` with a `discriminator`). Other values are kept.
 */
export function mapSubschemas(schema: Schema, map: (child: Schema, branch: boolean) => Schema): Schema {
  const out: Schema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (SCHEMA_VALUE.has(keyword) && isSchema(value)) out[keyword] = map(value, false);
    else if (SCHEMA_VALUE.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((child: unknown) => (isSchema(child) ? map(child, false) : child));
    } else if (SCHEMA_LIST.has(keyword) && Array.isArray(value)) {
      const branch = keyword === 'oneOf' && schema.discriminator !== undefined;
      out[keyword] = value.map((child: unknown) => (isSchema(child) ? map(child, branch) : child));
    } else if (SCHEMA_MAP.has(keyword) && isSchema(value)) {
      const children: Schema = {};
      for (const [name, child] of Object.entries(value))
        children[name] = isSchema(child) ? map(child, false) : child;
      out[keyword] = children;
    } else out[keyword] = value;
  }
  return out;
}

/**
 * A copy of `schema` in which each repeated subschema is a `$ref` into the root's `$defs`. The
 * input is not changed; when nothing repeats, the copy has no `$defs` added.
 */
export function shareRepeatedSubschemas(schema: object): object {
  const texts = new WeakMap<Schema, string>();
  const textOf = (node: Schema): string => {
    let text = texts.get(node);
    if (text === undefined) {
      text = JSON.stringify(node);
      texts.set(node, text);
    }
    return text;
  };
  const counts = new Map<string, number>();
  const count = (node: Schema): void => {
    const text = textOf(node);
    counts.set(text, (counts.get(text) ?? 0) + 1);
    eachChild(node, count);
  };
  count(schema as Schema);

  const names = new Map<string, string>();
  const defs: Record<string, Schema> = {};
  const place = (node: Schema, branch: boolean): Schema => {
    const text = textOf(node);
    if (branch || text.length < MIN_SHARED_LENGTH || (counts.get(text) ?? 0) < 2) return copy(node);
    let name = names.get(text);
    if (name === undefined) {
      name = `${DEF_PREFIX}${names.size}`;
      names.set(text, name);
      defs[name] = copy(node);
    }
    return { $ref: `#/$defs/${name}` };
  };
  const copy = (node: Schema): Schema => mapSubschemas(node, place);

  const root = copy(schema as Schema);
  if (names.size === 0) return root;
  root.$defs = { ...(isSchema(root.$defs) ? root.$defs : {}), ...defs };
  return root;
}
