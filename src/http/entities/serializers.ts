/**
 * Compiled serialisers for entities whose variant depends on the viewer. A route documents the
 * union of its variants in its response schema, and picks the one serialiser it needs per
 * request with `reply.serializer(...)`, so no request pays for matching a union.
 */
import fastJson from 'fast-json-stringify';
import type { TSchema } from 'typebox';
import type { FastifyReply } from 'fastify';

export function compileSerializer(schema: TSchema): (doc: unknown) => string {
  return fastJson(schema as object) as (doc: unknown) => string;
}

/** Serialises this reply with `serializer`, as JSON. */
export function serializeWith(reply: FastifyReply, serializer: (doc: unknown) => string): void {
  reply.type('application/json').serializer(serializer);
}
