/**
 * Reading OAuth parameters from a query or form body. RFC 6749 §3.1/§3.2: a parameter sent more
 * than once, or as a nested Rails-style value, is not a value at all; blank counts as absent, as
 * Doorkeeper's `.blank?` checks do.
 */
import type { FastifyRequest } from 'fastify';

type Bag = Record<string, unknown>;

function bag(value: unknown): Bag {
  return value && typeof value === 'object' && !Buffer.isBuffer(value) && !Array.isArray(value) ? value as Bag : {};
}

export function stringParam(source: Bag, name: string): string | undefined {
  const v = source[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Body parameters first, then query parameters (Rails merges them the same way). */
export function oauthParams(request: FastifyRequest): (name: string) => string | undefined {
  const body = bag(request.body);
  const query = bag(request.query);
  return (name) => stringParam(body, name) ?? stringParam(query, name);
}
