import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { actorOf, principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, ok, TestParams } from '../shared/envelope.js';
import { presentTest } from '../tests/present.js';
import { TestDetail } from '../tests/schemas.js';
import { ReorderBody, StepInput, StepOut, StepParams, StepPatch } from './schemas.js';

export const stepRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { steps } = ctx.services;
    const write = { scope: 'test:write' as const };

    app.get(
      '/buckets/:bucket_key/tests/:test_id/steps',
      {
        schema: {
          tags: ['steps'],
          summary: 'The steps of the test, in order',
          params: TestParams,
          response: { 200: Envelope(Type.Array(StepOut)), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id } = request.params;
        return ok(await steps.list(principalOf(request), bucket_key, test_id));
      },
    );

    // The spec answers a new step with the full test; the original service (API_COMPAT=runscope)
    // answered the test's step list, whose last element its clients read.
    const stepList = ctx.apiCompat === 'runscope';
    app.post(
      '/buckets/:bucket_key/tests/:test_id/steps',
      {
        config: write,
        schema: {
          tags: ['steps'],
          summary: stepList
            ? 'Add a step at the end of the test; answers the step list (API_COMPAT=runscope)'
            : 'Add a step at the end of the test; `step_type` selects the type',
          params: TestParams,
          body: StepInput,
          response: {
            201: stepList ? Envelope(Type.Array(StepOut)) : Envelope(TestDetail),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request);
        const aggregate = await steps.add(
          actor,
          request.params.bucket_key,
          request.params.test_id,
          request.body,
        );
        reply.code(201);
        return ok(stepList ? aggregate.steps : presentTest(aggregate, actor, ctx.publicUrl));
      },
    );

    app.put(
      '/buckets/:bucket_key/tests/:test_id/steps',
      {
        config: write,
        schema: {
          tags: ['steps'],
          summary: 'Reorder the steps: every step id once; a condition as {id, steps:[ids]}',
          params: TestParams,
          body: ReorderBody,
          response: { 200: Envelope(TestDetail), ...errorResponses },
        },
      },
      async (request) => {
        const actor = actorOf(request);
        const aggregate = await steps.reorder(
          actor,
          request.params.bucket_key,
          request.params.test_id,
          request.body,
        );
        return ok(presentTest(aggregate, actor, ctx.publicUrl));
      },
    );

    app.get(
      '/buckets/:bucket_key/tests/:test_id/steps/:step_id',
      {
        schema: {
          tags: ['steps'],
          summary: 'One step',
          params: StepParams,
          response: { 200: Envelope(StepOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, step_id } = request.params;
        return ok(await steps.get(principalOf(request), bucket_key, test_id, step_id));
      },
    );

    app.put(
      '/buckets/:bucket_key/tests/:test_id/steps/:step_id',
      {
        config: write,
        schema: {
          tags: ['steps'],
          summary: 'Change properties of a step (same shape as adding one of its type); answers the step',
          params: StepParams,
          body: StepPatch,
          response: { 200: Envelope(StepOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, step_id } = request.params;
        return ok(await steps.update(actorOf(request), bucket_key, test_id, step_id, request.body));
      },
    );

    app.delete(
      '/buckets/:bucket_key/tests/:test_id/steps/:step_id',
      {
        config: write,
        schema: {
          tags: ['steps'],
          summary: 'Delete a step (a condition goes with its embedded steps)',
          params: StepParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, test_id, step_id } = request.params;
        await steps.delete(actorOf(request), bucket_key, test_id, step_id);
        return noContent(reply);
      },
    );
  };
