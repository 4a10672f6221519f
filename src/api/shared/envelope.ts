import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';

const envelopes = new WeakMap<TSchema, TSchema>();

/**
 * The success envelope of spec 2.1 around a data schema. The same data schema always gets the same
 * envelope object, so routes that answer alike share one compiled serialiser.
 */
export function Envelope<T extends TSchema>(data: T) {
  const make = () =>
    Type.Object({
      data,
      meta: Type.Object({ status: Type.Literal('success') }, { additionalProperties: true }),
      error: Type.Null(),
    });
  let envelope = envelopes.get(data) as ReturnType<typeof make> | undefined;
  if (!envelope) {
    envelope = make();
    envelopes.set(data, envelope);
  }
  return envelope;
}

/**
 * `schema` or null, as a JSON Schema type list: serialisers handle it directly, where an anyOf would
 * make them validate the value against each branch.
 */
export function Nullable<T extends TSchema & { type: string }>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

export const ErrorEnvelope = Type.Object(
  {
    status: Type.Integer({ description: 'The HTTP status, as in error.status' }),
    data: Type.Null(),
    meta: Type.Object({ status: Type.Literal('error') }),
    error: Type.Object({
      status: Type.Integer(),
      code: Type.String(),
      message: Type.String(),
      more_info: Type.String(),
      field: Type.Optional(Type.String()),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

export const ok = <T>(data: T, meta: Record<string, unknown> = {}) =>
  ({ data, meta: { status: 'success' as const, ...meta }, error: null }) as const;

/** Error responses every authenticated route may give, for the OpenAPI document. */
export const errorResponses = {
  400: Type.Ref(ErrorEnvelope),
  401: Type.Ref(ErrorEnvelope),
  403: Type.Ref(ErrorEnvelope),
  404: Type.Ref(ErrorEnvelope),
  // The store cannot be reached (with Retry-After), or cannot take a write (docs/operations.md).
  503: Type.Ref(ErrorEnvelope),
  507: Type.Ref(ErrorEnvelope),
};

export const BucketParams = Type.Object({ bucket_key: Type.String() });
export const TestParams = Type.Object({ bucket_key: Type.String(), test_id: Type.String() });

/** 204 with no body (deletes, unshare). */
export function noContent(reply: unknown): FastifyReply {
  return (reply as FastifyReply).code(204).send();
}
