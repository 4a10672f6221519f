import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { actorOf, principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, ok, TestParams } from '../shared/envelope.js';
import { presentSchedule } from '../tests/present.js';
import { ScheduleCreate, ScheduleOut, ScheduleParams, SchedulePatch } from './schemas.js';

export const scheduleRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { schedules } = ctx.services;
    const tags = ['schedules'];
    const write = { scope: 'test:write' as const };
    const base = '/buckets/:bucket_key/tests/:test_id/schedules';

    app.get(
      base,
      {
        schema: {
          tags,
          summary: 'Schedules of the test',
          params: TestParams,
          response: { 200: Envelope(Type.Array(ScheduleOut)), ...errorResponses },
        },
      },
      async (request) => {
        const rows = await schedules.list(
          principalOf(request),
          request.params.bucket_key,
          request.params.test_id,
        );
        return ok(rows.map(presentSchedule));
      },
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary: 'Schedule the test',
          params: TestParams,
          body: ScheduleCreate,
          response: { 201: Envelope(ScheduleOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const row = await schedules.create(
          actorOf(request),
          request.params.bucket_key,
          request.params.test_id,
          request.body,
        );
        reply.code(201);
        return ok(presentSchedule(row));
      },
    );

    app.get(
      `${base}/:schedule_id`,
      {
        schema: {
          tags,
          summary: 'One schedule',
          params: ScheduleParams,
          response: { 200: Envelope(ScheduleOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, schedule_id } = request.params;
        return ok(
          presentSchedule(await schedules.get(principalOf(request), bucket_key, test_id, schedule_id)),
        );
      },
    );

    app.put(
      `${base}/:schedule_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a schedule',
          params: ScheduleParams,
          body: SchedulePatch,
          response: { 200: Envelope(ScheduleOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, schedule_id } = request.params;
        return ok(
          presentSchedule(
            await schedules.update(actorOf(request), bucket_key, test_id, schedule_id, request.body),
          ),
        );
      },
    );

    app.delete(
      `${base}/:schedule_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a schedule',
          params: ScheduleParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, test_id, schedule_id } = request.params;
        await schedules.delete(actorOf(request), bucket_key, test_id, schedule_id);
        return noContent(reply);
      },
    );
  };
