import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from '../../domain/schema.js';
import { IMPORT_FORMATS, SPLITS } from '../../import/formats.js';
import { IMPORT_LIMITS } from '../../import/result.js';

const DryRun = Type.Optional(
  Type.Boolean({ description: 'true: answer the tests that would be created, creating nothing' }),
);

const FileImport = Type.Object({
  format: Type.Optional(
    StringEnum(IMPORT_FORMATS, { description: 'Recognised from the content when left out' }),
  ),
  content: Type.Union(
    [
      Type.String({ minLength: 1, maxLength: IMPORT_LIMITS.contentLength, pattern: '\\S' }),
      Type.Object({}, { additionalProperties: true }),
      Type.Array(Type.Unknown(), { maxItems: IMPORT_LIMITS.tests }),
    ],
    { description: 'The file: its text (JSON, YAML or curl command lines) or its parsed JSON' },
  ),
  environment: Type.Optional(
    Type.Object({}, { additionalProperties: true, description: 'Postman: an exported environment file' }),
  ),
  options: Type.Optional(
    Type.Object(
      {
        split: Type.Optional(
          StringEnum(SPLITS, {
            description: 'Postman: folder (default) or request; OpenAPI: tag (default) or operation',
          }),
        ),
        chain: Type.Optional(
          Type.Boolean({ description: 'HAR: answer values reused by later requests become variables' }),
        ),
        base_url: Type.Optional(
          Type.String({
            maxLength: 2_048,
            pattern: '^(https?://|\\{\\{)',
            description: 'OpenAPI: the base_url of the environment instead of the document’s server',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  dry_run: DryRun,
});

const MessagesImport = Type.Object({
  format: Type.Literal('messages'),
  message_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: IMPORT_LIMITS.messages,
    description: 'Messages of this bucket, in the order of the steps',
  }),
  chain: Type.Optional(
    Type.Boolean({ description: 'Answer values reused by later requests become variables' }),
  ),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  dry_run: DryRun,
});

/** A file import, or captured messages made into a test (`format: "messages"`). */
export const ImportBody = Type.Unsafe<Static<typeof FileImport> | Static<typeof MessagesImport>>({
  type: 'object',
  if: { type: 'object', required: ['format'], properties: { format: { const: 'messages' } } },
  then: MessagesImport,
  else: FileImport,
});

const ImportedStepOut = Type.Object({
  step_type: Type.String(),
  method: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  note: Type.Optional(Type.String()),
  assertions: Type.Integer(),
  variables: Type.Integer(),
});

export const ImportOut = Type.Object({
  dry_run: Type.Boolean(),
  format: Type.String(),
  tests: Type.Array(
    Type.Object({
      id: Type.Optional(Type.String({ description: 'The created test (not on a dry run)' })),
      name: Type.String(),
      step_count: Type.Integer(),
      steps: Type.Array(ImportedStepOut),
    }),
  ),
  notes: Type.Array(Type.String()),
});
