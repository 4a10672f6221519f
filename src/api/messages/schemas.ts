import { Type } from '@sinclair/typebox';
import { Nullable } from '../shared/envelope.js';

const Lists = Type.Record(Type.String(), Type.Array(Type.String()));

const requestProperties = {
  method: Type.String(),
  url: Type.String(),
  scheme: Type.String(),
  host: Type.String(),
  path: Type.String(),
  params: Lists,
  headers: Lists,
  form: Nullable(Type.Object({}, { additionalProperties: Type.Array(Type.String()) })),
  timestamp: Type.Number(),
  body_encoding: Type.String(),
  size_bytes: Type.Integer(),
};

const responseProperties = {
  status: Type.Integer(),
  reason: Type.String(),
  headers: Lists,
  timestamp: Type.Number(),
  response_time: Nullable(Type.Number()),
  body_encoding: Type.String(),
  size_bytes: Type.Integer(),
};

const messageProperties = {
  uuid: Type.String(),
  bucket_key: Type.String(),
  source: Type.String(),
  unique_identifier: Nullable(Type.String()),
  received_at: Type.Number(),
  timestamp: Type.Number(),
  shared: Type.Boolean(),
  shared_at: Nullable(Type.Number({ description: 'When it was shared (the Shared list orders by it)' })),
  note: Nullable(Type.String()),
};

const { params: _params, headers: _requestHeaders, form: _form, ...requestSummary } = requestProperties;
const { headers: _responseHeaders, ...responseSummary } = responseProperties;

/** A list item (spec 4.5): the exchange without bodies, headers and parameters (the detail has them). */
export const MessageListItem = Type.Object({
  ...messageProperties,
  request: Type.Union([Type.Object(requestSummary), Type.Null()]),
  response: Type.Union([Type.Object(responseSummary), Type.Null()]),
});

/** The detail (spec 2.8) with bodies: plain text, or Base64 with `body_encoding: base64`. */
export const MessageDetail = Type.Object({
  ...messageProperties,
  request: Type.Union([Type.Object({ ...requestProperties, body: Type.String() }), Type.Null()]),
  response: Type.Union([Type.Object({ ...responseProperties, body: Type.String() }), Type.Null()]),
});

export const SharedMessage = Type.Object({ ...MessageDetail.properties, public_url: Type.String() });

/** An item of the Shared view: a list item and the public link it is shared under. */
export const SharedListItem = Type.Object({
  ...MessageListItem.properties,
  share_url: Type.String({
    description: 'The public link of the message: the `public_url` its last share answered',
  }),
});

/**
 * What a public link shows: the exchange, without the bucket key (which would let anyone with the
 * link send traffic into the bucket).
 */
const { bucket_key: _bucketKey, ...publicProperties } = MessageDetail.properties;
export const PublicMessage = Type.Object(publicProperties);

const Problem = Type.Object({ code: Type.Integer(), message: Type.String(), more_info: Type.String() });

export const ItemResultOut = Type.Object({
  status: Type.String(),
  unique_identifier: Type.Optional(Type.String()),
  uuid: Type.Optional(Type.String()),
  warning: Type.Optional(Problem),
  error: Type.Optional(Problem),
});

/** The list filters (docs/capture.md); the service checks their forms and names a bad one. */
export const MessageFilterQuery = {
  method: Type.Optional(Type.String({ maxLength: 32, description: 'HTTP method, any case (GET)' })),
  host: Type.Optional(
    Type.String({ maxLength: 255, description: 'Exact host (with a non-default port), any case' }),
  ),
  path: Type.Optional(Type.String({ maxLength: 2048, description: 'Path prefix; must start with /' })),
  status: Type.Optional(
    Type.String({ maxLength: 8, description: 'A class 1xx … 5xx, an exact code 100–599, or none' }),
  ),
  q: Type.Optional(
    Type.String({ maxLength: 500, description: 'Case-insensitive text in host + path + query' }),
  ),
};

export const MessagesQuery = Type.Object({
  ...MessageFilterQuery,
  count: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Default 50, at most 1000 (larger values are capped)' }),
  ),
  since: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only messages after this Unix time (seconds)' }),
  ),
  before: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only messages before this Unix time (seconds)' }),
  ),
});

export const MessageParams = Type.Object({ bucket_key: Type.String(), message_uuid: Type.String() });

export const UsageOut = Type.Object({
  bucket_key: Type.String(),
  messages_received: Type.Integer({ description: 'Every message ever saved, deleted ones included' }),
  messages_stored: Type.Integer(),
  messages_shared: Type.Integer(),
});
