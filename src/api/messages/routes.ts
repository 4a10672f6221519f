import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { MESSAGE_VIEWS } from '../../domain/messages.js';
import type { ApiContext } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { BucketParams, Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import { presentListItem, problemWithLink, publicUrl } from './present.js';
import {
  ItemResultOut,
  MessageDetail,
  MessageListItem,
  MessageParams,
  MessagesQuery,
  SharedListItem,
  SharedMessage,
  UsageOut,
} from './schemas.js';

/** Message ids are UUIDs; the pattern keeps paths like `…/messages.har` apart. */
const MESSAGE_ID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** The shape of one message; its fields are checked per item, so that one bad item fails alone. */
const MESSAGE_INPUT = {
  type: 'object',
  properties: {
    request: { description: 'method, url, headers, form, body, body_encoding, timestamp' },
    response: { description: 'status, reason, headers, body, body_encoding, response_time, timestamp' },
    unique_identifier: { description: 'Links a request and a response sent in separate calls' },
  },
};

export const messageRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { messages } = ctx.services;
    const tags = ['messages'];
    const write = { scope: 'message:write' as const };
    const base = '/buckets/:bucket_key';
    const moreInfo = `${ctx.publicUrl}/errors`;

    app.post(
      `${base}/messages`,
      {
        config: { ...write, idempotent: true },
        schema: {
          tags,
          summary: 'Create messages: one object or an array of at most 50; a result per item, in order',
          params: BucketParams,
          body: Type.Unsafe<unknown>({
            description:
              'A message (request, response or both, unique_identifier) or an array of at most 50 of them; fields are checked item by item',
            anyOf: [
              MESSAGE_INPUT,
              {
                type: 'array',
                items: { description: 'A message; an item that is not an object fails alone (51001)' },
              },
            ],
            // Checked by the service after the bucket, so that a foreign bucket answers 404 first.
            'x-optional-body': true,
          }),
          response: {
            201: Type.Object({
              data: Type.Array(ItemResultOut),
              meta: Type.Object({
                status: Type.Literal('success'),
                success_count: Type.Integer(),
                warning_count: Type.Integer(),
                error_count: Type.Integer(),
              }),
              error: Type.Null(),
            }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const { results, meta } = await messages.ingest(
          principalOf(request),
          request.params.bucket_key,
          request.body,
        );
        reply.code(201);
        return {
          data: results.map(({ warning, error, ...rest }) => ({
            ...rest,
            ...(warning ? { warning: problemWithLink(warning, moreInfo) } : {}),
            ...(error ? { error: problemWithLink(error, moreInfo) } : {}),
          })),
          meta: { status: 'success' as const, ...meta },
          error: null,
        };
      },
    );

    for (const view of MESSAGE_VIEWS) {
      app.get(
        `${base}/${view}`,
        {
          schema: {
            tags,
            summary: {
              messages: 'All messages of the bucket, newest first (no bodies)',
              errors: 'Messages whose response status is 400 or more, or that have no response',
              shared: 'Shared messages, newest share first',
              captures: 'Requests recorded through the capture URL',
            }[view],
            params: BucketParams,
            querystring: MessagesQuery,
            response: {
              200: Envelope(Type.Array(view === 'shared' ? SharedListItem : MessageListItem)),
              ...errorResponses,
            },
          },
        },
        async (request) => {
          const principal = principalOf(request);
          const { bucket_key } = request.params;
          if (view === 'shared') {
            const shared = await messages.listShared(principal, bucket_key, request.query);
            return ok(
              shared.map(({ message, token }) => ({
                ...presentListItem(message),
                share_url: publicUrl(ctx.publicUrl, token),
              })),
            );
          }
          const list = await messages.list(principal, bucket_key, view, request.query);
          return ok(list.map(presentListItem));
        },
      );
    }

    app.delete(
      `${base}/messages`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete every message of the bucket',
          params: BucketParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        await messages.clear(principalOf(request), request.params.bucket_key);
        return noContent(reply);
      },
    );

    app.get(
      `${base}/messages/:message_uuid(${MESSAGE_ID})`,
      {
        schema: {
          tags,
          summary: 'One message with its bodies (Base64 for binary)',
          params: MessageParams,
          response: { 200: Envelope(MessageDetail), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, message_uuid } = request.params;
        return ok(await messages.detail(principalOf(request), bucket_key, message_uuid));
      },
    );

    app.delete(
      `${base}/messages/:message_uuid(${MESSAGE_ID})`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a message (it still counts in usage)',
          params: MessageParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, message_uuid } = request.params;
        await messages.delete(principalOf(request), bucket_key, message_uuid);
        return noContent(reply);
      },
    );

    app.put(
      `${base}/shared/:message_uuid(${MESSAGE_ID})`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Share a message: the detail plus a public URL with a new random token',
          params: MessageParams,
          response: { 200: Envelope(SharedMessage), ...errorResponses },
        },
      },
      async (request) => {
        const { bucket_key, message_uuid } = request.params;
        const { message, token } = await messages.share(principalOf(request), bucket_key, message_uuid);
        return ok({ ...message, public_url: publicUrl(ctx.publicUrl, token) });
      },
    );

    app.delete(
      `${base}/shared/:message_uuid(${MESSAGE_ID})`,
      {
        config: write,
        schema: {
          tags,
          summary: 'Stop sharing a message: its public URL answers 404 from now on',
          params: MessageParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { bucket_key, message_uuid } = request.params;
        await messages.unshare(principalOf(request), bucket_key, message_uuid);
        return noContent(reply);
      },
    );

    app.get(
      `${base}/usage`,
      {
        schema: {
          tags,
          summary: 'Message counts of the bucket; deleted messages still count as received',
          params: BucketParams,
          response: { 200: Envelope(UsageOut), ...errorResponses },
        },
      },
      async (request) => ok(await messages.usage(principalOf(request), request.params.bucket_key)),
    );
  };
