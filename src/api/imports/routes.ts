import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ImportPreview } from '../../services/imports.js';
import type { ApiContext } from '../context.js';
import { actorOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, ok } from '../shared/envelope.js';
import { ImportBody, ImportOut } from './schemas.js';

function presentSteps(test: ImportPreview['tests'][number]) {
  return (test.steps as Record<string, unknown>[]).map((step) => ({
    step_type: String(step.step_type),
    ...(typeof step.method === 'string' && { method: step.method }),
    ...(typeof step.url === 'string' && { url: step.url }),
    ...(typeof step.note === 'string' && step.note !== '' && { note: step.note }),
    assertions: Array.isArray(step.assertions) ? step.assertions.length : 0,
    variables: Array.isArray(step.variables) ? step.variables.length : 0,
  }));
}

export const importRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { imports } = ctx.services;

    app.post(
      '/buckets/:bucket_key/imports',
      {
        config: { scope: 'test:write' },
        schema: {
          tags: ['tests'],
          summary:
            'Create tests from a Postman collection, OpenAPI/Swagger document, curl lines, HAR file or captured messages',
          description:
            'The format is recognised when `format` is left out. `dry_run: true` answers the tests that would ' +
            'be created (names, steps, notes) and creates nothing; otherwise the tests are created as by ' +
            '`POST …/tests` and answered with their ids. `format: "messages"` makes one test of captured ' +
            'messages of the bucket (`message_ids`, `chain`). See docs/import.md.',
          params: BucketParams,
          body: ImportBody,
          response: { 200: Envelope(ImportOut), 201: Envelope(ImportOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request);
        const { bucket_key } = request.params;
        if (request.body.dry_run === true) {
          const preview = await imports.preview(actor, bucket_key, request.body);
          return ok({
            dry_run: true,
            format: preview.format,
            tests: preview.tests.map((t) => ({
              name: t.name,
              step_count: t.steps.length,
              steps: presentSteps(t),
            })),
            notes: preview.notes,
          });
        }
        const { preview, created } = await imports.create(actor, bucket_key, request.body);
        reply.code(201);
        return ok({
          dry_run: false,
          format: preview.format,
          tests: created.map((aggregate, i) => ({
            id: aggregate.test.id,
            name: aggregate.test.name,
            step_count: aggregate.steps.length,
            steps: presentSteps(preview.tests[i]!),
          })),
          notes: preview.notes,
        });
      },
    );
  };
