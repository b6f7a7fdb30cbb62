/**
 * `check_unmodified_since!` of the Service's `destroy_conditionally!` (reference §6.1, §11): a
 * DELETE sent with If-Unmodified-Since is refused with 412 when the resource changed after it.
 * An unparseable header is ignored, as the Service ignores it.
 */
import type { FastifyRequest } from 'fastify';
import { preconditionFailed } from './errors.ts';

export function checkUnmodifiedSince(request: FastifyRequest, lastModified: string | null): void {
  const header = request.headers['if-unmodified-since'];
  if (typeof header !== 'string' || lastModified === null) return;
  const since = Date.parse(header);
  if (Number.isNaN(since)) return;
  if (Date.parse(lastModified) > since) throw preconditionFailed();
}
