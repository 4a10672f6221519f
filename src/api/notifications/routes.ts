import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { RunParams } from '../runs/schemas.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, ok, TestParams } from '../shared/envelope.js';
import { presentNotification, presentOutbox } from './present.js';
import {
  NotificationOut,
  OutboxOut,
  OutboxQuery,
  PreviewInput,
  PreviewOut,
  SigningSecretOut,
} from './schemas.js';

/** Notifications of a run, the bucket's signing secret, and the outbox of kept mails (DESIGN §5). */
export const notificationRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { notifications } = ctx.services;
    const tags = ['notifications'];

    app.get(
      '/buckets/:bucket_key/tests/:test_id/results/:test_run_id/notifications',
      {
        schema: {
          tags,
          summary: 'Notifications of a run with every delivery attempt',
          params: RunParams,
          response: { 200: Envelope(Type.Array(NotificationOut)), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id, test_run_id } = request.params;
        const { items, integrations } = await notifications.listForRun(
          principalOf(request),
          bucket_key,
          test_id,
          test_run_id,
        );
        return ok(items.map((item) => presentNotification(item, integrations)));
      },
    );

    app.post(
      '/buckets/:bucket_key/tests/:test_id/notification-preview',
      {
        // Writes nothing, but a template is worked on by those who edit the test's notifications.
        config: { scope: 'test:write' },
        schema: {
          tags,
          summary:
            "What a channel would send for the test's newest finished result, from a template or the standard message",
          params: TestParams,
          body: PreviewInput,
          response: { 200: Envelope(PreviewOut), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, test_id } = request.params;
        return ok(await notifications.preview(principalOf(request), bucket_key, test_id, request.body));
      },
    );

    // The secret is a credential: reading it needs the same scope as changing it.
    app.get(
      '/buckets/:bucket_key/signing-secret',
      {
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: 'The key that signs webhook payloads (X-Vigil-Signature)',
          params: BucketParams,
          response: { 200: Envelope(SigningSecretOut), ...errorResponses },
        },
      },
      async (request) =>
        ok({
          signing_secret: await notifications.signingSecret(principalOf(request), request.params.bucket_key),
        }),
    );

    app.post(
      '/buckets/:bucket_key/signing-secret',
      {
        config: { scope: 'bucket:write' },
        schema: {
          tags,
          summary: 'Rotate the signing secret (the old one stops signing at once)',
          params: BucketParams,
          response: { 200: Envelope(SigningSecretOut), ...errorResponses },
        },
      },
      async (request) =>
        ok({
          signing_secret: await notifications.rotateSigningSecret(
            principalOf(request),
            request.params.bucket_key,
          ),
        }),
    );

    app.get(
      '/account/outbox',
      {
        schema: {
          tags,
          summary: 'Notification e-mails kept instead of sent (no SMTP_URL), newest first',
          querystring: OutboxQuery,
          response: { 200: Envelope(Type.Array(OutboxOut)), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await notifications.outbox(principal, request.query);
        return ok(rows.map((row) => presentOutbox(row, principal)));
      },
    );
  };
