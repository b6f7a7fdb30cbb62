/** Records an audit event for the calling user (domain/audit-events/record-audit-event.ts). */
import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { DB } from '../db/types.ts';
import { recordAuditEvent, type AuditSubject } from '../domain/audit-events/record-audit-event.ts';

export async function audit(request: FastifyRequest, subject: AuditSubject, trx?: Transaction<DB>): Promise<void> {
  const caller = request.caller;
  if (!caller) return;
  const impersonatedBy = caller.initialUser.id !== caller.user.id ? { name: caller.initialUser.name } : null;
  await recordAuditEvent(
    trx ?? request.server.kiln.db, { id: caller.user.id, name: caller.user.name, impersonatedBy }, request.ip,
    subject,
  );
}

/** The Service's role names for access levels, as membership events say them. */
export const ROLE_NAMES: Record<number, string> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };

/** An event about a user (the entity and the target both the user). */
export function auditUser(request: FastifyRequest, user: { id: number; username: string }, message: string): Promise<void> {
  return audit(request, {
    entityType: 'User', entityId: user.id, entityPath: user.username,
    target: { id: user.id, type: 'User', details: user.username }, message,
  });
}
