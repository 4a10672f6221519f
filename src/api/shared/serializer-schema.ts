/**
 * Response schemas as the serialiser (fast-json-stringify) gets them. To choose between the forms of
 * an `anyOf` or the branches of an `if`, the serialiser validates the value with Ajv against that
 * part of the schema; and Ajv, asked for a part of a schema by JSON pointer, first compiles the whole
 * schema it belongs to. For a test's answer that was over 600 KB of generated validator source, and
 * a few hundred KB more for every other such route, held for the life of the process.
 *
 * The copy given to the serialiser says the same with nothing for Ajv to compile but a few small
 * schemas of their own:
 * - each `if` becomes a `$ref` to a schema of its own (a step's `if` tests one constant);
 * - `anyOf` of one form or null becomes one schema whose `type` also allows null;
 * - `anyOf` of an object and an array becomes `if` (an array) `then` / `else`;
 * - a part that appears more than once (a test in both forms of a create's answer, a step's
 *   assertions) is written once under `$defs` and referred to, so its code is generated once.
 * The route's own schema, which the OpenAPI document shows, is left as it is.
 */
import {
  isSchema,
  mapSubschemas,
  type Schema,
  shareRepeatedSubschemas,
} from '../../services/shared-subschemas.js';

export interface SerializerSchema {
  schema: object;
  /** Schemas the copy refers to by `$id`, for the serialiser's `schema` option. */
  externals: Record<string, object>;
}

const IF_PREFIX = 'vigil-serializer-if-';

const isNull = (schema: Schema): boolean => schema.type === 'null' && Object.keys(schema).length === 1;

export function serializerSchema(schema: object): SerializerSchema {
  const externals: Record<string, object> = {};
  const ids = new Map<string, string>();
  const own = (test: Schema): Schema => {
    const text = JSON.stringify(test);
    let id = ids.get(text);
    if (id === undefined) {
      id = `${IF_PREFIX}${ids.size}`;
      ids.set(text, id);
      externals[id] = { ...test, $id: id };
    }
    return { $ref: id };
  };

  const visit = (node: Schema): Schema => {
    let out = mapSubschemas(node, (child) => visit(child));
    const forms = out.anyOf;
    if (Array.isArray(forms) && forms.length === 2 && forms.every(isSchema)) {
      const { anyOf: _forms, ...rest } = out;
      const [first, second] = forms as [Schema, Schema];
      const nullable = isNull(second) ? first : isNull(first) ? second : null;
      if (nullable !== null && typeof nullable.type === 'string') {
        out = { ...rest, ...nullable, type: [nullable.type, 'null'] };
      } else if (first.type === 'object' && second.type === 'array') {
        out = { ...rest, if: { type: 'array' }, then: second, else: first };
      } else if (first.type === 'array' && second.type === 'object') {
        out = { ...rest, if: { type: 'array' }, then: first, else: second };
      }
    }
    if (isSchema(out.if) && out.if.$ref === undefined) out.if = own(out.if);
    return out;
  };

  return { schema: shareRepeatedSubschemas(visit(schema as Schema)), externals };
}
