import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import { presentMaintenanceWindow } from './present.js';
import {
  MaintenanceParams,
  MaintenanceWindowInput,
  MaintenanceWindowOut,
  MaintenanceWindowPatch,
} from './schemas.js';

/** Maintenance windows of a bucket (docs/alerting.md); writes need the scope schedules need. */
export const maintenanceRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { maintenance } = ctx.services;
    const tags = ['maintenance windows'];
    const write = { scope: 'test:write' as const };
    const base = '/buckets/:bucket_key/maintenance_windows';

    app.get(
      base,
      {
        schema: {
          tags,
          summary: 'Maintenance windows of the bucket and of its tests',
          params: BucketParams,
          response: { 200: Envelope(Type.Array(MaintenanceWindowOut)), ...errorResponses },
        },
      },
      async (request) => {
        const rows = await maintenance.list(principalOf(request), request.params.bucket_key);
        return ok(rows.map((row) => presentMaintenanceWindow(row)));
      },
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary: 'Add a maintenance window',
          params: BucketParams,
          body: MaintenanceWindowInput,
          response: { 201: Envelope(MaintenanceWindowOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const row = await maintenance.create(principalOf(request), request.params.bucket_key, request.body);
        reply.code(201);
        return ok(presentMaintenanceWindow(row));
      },
    );

    app.get(
      `${base}/:window_id`,
      {
        schema: {
          tags,
          summary: 'One maintenance window',
          params: MaintenanceParams,
          response: { 200: Envelope(MaintenanceWindowOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, window_id } = request.params;
        return ok(
          presentMaintenanceWindow(await maintenance.get(principalOf(request), bucket_key, window_id)),
        );
      },
    );

    app.put(
      `${base}/:window_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a maintenance window',
          params: MaintenanceParams,
          body: MaintenanceWindowPatch,
          response: { 200: Envelope(MaintenanceWindowOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, window_id } = request.params;
        const row = await maintenance.update(principalOf(request), bucket_key, window_id, request.body);
        return ok(presentMaintenanceWindow(row));
      },
    );

    app.delete(
      `${base}/:window_id`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a maintenance window',
          params: MaintenanceParams,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, window_id } = request.params;
        await maintenance.delete(principalOf(request), bucket_key, window_id);
        return noContent(reply);
      },
    );
  };
