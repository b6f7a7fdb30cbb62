/**
 * The Service's `authenticated_as_admin!` (reference §6.4): runs in the handler, after parameter
 * validation, so a non-administrator with invalid parameters gets the 400 first.
 */
import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../../db/types.ts';
import { forbidden, unauthorized } from '../errors.ts';

/** The calling administrator; 401 for anonymous callers, 403 `403 Forbidden` for everyone else. */
export function authenticatedAsAdmin(request: FastifyRequest): UserRow {
  const user = request.caller?.user;
  if (!user) throw unauthorized();
  if (user.admin !== 1) throw forbidden();
  return user;
}
