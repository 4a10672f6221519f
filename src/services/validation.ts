import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError } from '../domain/errors.js';
import { shareRepeatedSubschemas } from './shared-subschemas.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** One Ajv configuration for request bodies: no type coercion, oneOf picked by discriminator tag. */
export function createBodyAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    discriminator: true,
    verbose: true,
    // Repeated subschemas are compiled once each, as functions that every place calls.
    inlineRefs: false,
    strict: false,
    // Infinity and NaN are no numbers in JSON; they must not pass as one (and then be stored as null).
    strictNumbers: true,
  });
  addFormats(ajv);
  return ajv;
}

/** Query strings and path parameters arrive as strings, so their validator coerces. */
export function createParamsAjv(): Ajv {
  const ajv = new Ajv({
    coerceTypes: 'array',
    useDefaults: true,
    removeAdditional: true,
    allErrors: false,
    strict: false,
    strictNumbers: true,
  });
  addFormats(ajv);
  return ajv;
}

function describe(error: ErrorObject): { field: string; why: string } {
  let field = error.instancePath;
  let why = error.message ?? 'is invalid';
  switch (error.keyword) {
    case 'required':
      field = `${field}/${(error.params as { missingProperty: string }).missingProperty}`;
      why = 'is required';
      break;
    case 'enum':
      why = `must be one of: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
      break;
    case 'discriminator': {
      const { tag, tagValue } = error.params as { tag: string; tagValue: unknown };
      field = `${field}/${tag}`;
      const branches = (error.parentSchema?.oneOf ?? []) as {
        properties?: Record<string, { const?: unknown }>;
      }[];
      const allowed = branches.map((b) => b.properties?.[tag]?.const).filter((v) => v !== undefined);
      why =
        typeof tagValue === 'string'
          ? `"${tagValue}" is not one of: ${allowed.join(', ')}`
          : `must be one of: ${allowed.join(', ')}`;
      break;
    }
    case 'format':
      why = `must be a valid ${(error.params as { format: string }).format}`;
      break;
    case 'pattern':
      why = `has characters or a form that is not allowed (pattern ${(error.params as { pattern: string }).pattern})`;
      break;
    case 'propertyNames':
      why = `has an invalid property name "${(error.params as { propertyName: string }).propertyName}"`;
      break;
    case 'anyOf':
      why = 'is not of an accepted type or format';
      break;
  }
  return { field, why };
}

const WRAPPER_KEYWORDS = new Set(['anyOf', 'oneOf', 'if']);

/** Turns the first Ajv error into our validation error, naming the field as a JSON pointer under `prefix`. */
export function toValidationError(errors: readonly ErrorObject[] | null | undefined, prefix = ''): AppError {
  // Of the branches of an anyOf/oneOf, the error deepest in the input tells most about what is wrong.
  const depth = (e: ErrorObject) => e.instancePath.split('/').length;
  const first =
    errors
      ?.filter((e) => !WRAPPER_KEYWORDS.has(e.keyword))
      .reduce<ErrorObject | undefined>(
        (best, e) => (!best || depth(e) > depth(best) ? e : best),
        undefined,
      ) ?? errors?.[0];
  if (!first) return new AppError('validation_failed', 'The request body is invalid');
  const { field, why } = describe(first);
  // Query and path parameters are named `?count` and `:test_id`; body fields by JSON pointer.
  const pointer =
    (prefix && field.startsWith('/') ? `${prefix}${field.slice(1)}` : `${prefix}${field}`) || '/';
  const name = pointer === '/' ? 'The request body' : pointer;
  return new AppError('validation_failed', `${name} ${why}`, pointer);
}

const bodyAjv = createBodyAjv();
const compiled = new WeakMap<object, ValidateFunction>();

/** The validator of a body schema, compiled once per schema object for the whole process. */
export function compileBodySchema(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = bodyAjv.compile(shareRepeatedSubschemas(schema));
    compiled.set(schema, validate);
  }
  return validate;
}

/** Validates a value against a TypeBox schema; throws a 400 naming the field on failure. */
export function assertValid<T>(schema: TSchema, value: unknown, prefix = ''): asserts value is T {
  const validate = compileBodySchema(schema);
  if (!validate(value)) throw toValidationError(validate.errors, prefix);
}
