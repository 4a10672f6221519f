import { Type } from '@sinclair/typebox';
import { MESSAGE_VIEWS } from '../../domain/messages.js';
import { VIEW_NAME_LENGTH, VIEW_WINDOWS } from '../../services/views.js';
import { MessageFilterQuery } from '../messages/schemas.js';

/** The filters of a view: those of the message lists, and a time window. */
const ViewFilters = Type.Object({
  ...MessageFilterQuery,
  window: Type.Optional(Type.Union(VIEW_WINDOWS.map((w) => Type.Literal(w)))),
});

export const ViewBody = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: VIEW_NAME_LENGTH,
    description: 'Trimmed; unique in the bucket, ignoring case',
  }),
  stream: Type.Union(MESSAGE_VIEWS.map((v) => Type.Literal(v))),
  filters: Type.Optional(ViewFilters),
});

export const ViewOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  bucket_key: Type.String(),
  name: Type.String(),
  stream: Type.String(),
  filters: Type.Object({
    method: Type.Optional(Type.String()),
    host: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    q: Type.Optional(Type.String()),
    window: Type.Optional(Type.String()),
  }),
  created_at: Type.Number(),
  updated_at: Type.Number(),
  created_by: Type.Object({ id: Type.String(), name: Type.String(), email: Type.String() }),
});

export const ViewParams = Type.Object({ bucket_key: Type.String(), view_id: Type.String() });
