/**
 * Recording what an operation did (the Service's Gitlab::Audit::Auditor / AuditEventService): the
 * author by id and name, the entity the event belongs to (the User, Project or Group), the target
 * it changed, a message or the membership change (add/remove … as …), and the caller's address.
 * Called by the routes right after the operation succeeded.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { insertAuditEvent, type NewAuditEvent } from './audit-events.queries.ts';

export interface AuditAuthor {
  id: number;
  name: string;
  /** The administrator acting through sudo, when not the author. */
  impersonatedBy?: { name: string } | null;
}

export interface AuditSubject {
  entityType: NewAuditEvent['entityType'];
  entityId: number;
  /** The entity's full path (a username for users). */
  entityPath: string;
  target?: { id: number; type: string; details: string };
  /** A sentence saying what happened, or a membership change. */
  message?: string;
  change?: { kind: 'add' | 'remove'; what: string; as?: string } | { kind: 'change'; what: string; from?: string; to?: string };
}

export async function recordAuditEvent(
  db: Kysely<DB> | Transaction<DB>, author: AuditAuthor, ip: string | null, s: AuditSubject,
): Promise<void> {
  const details: Record<string, unknown> = {};
  if (s.change) {
    details[s.change.kind] = s.change.what;
    if (s.change.kind === 'change') {
      details.from = s.change.from;
      details.to = s.change.to;
    } else if (s.change.as) {
      details.as = s.change.as;
    }
  }
  if (s.message) details.custom_message = s.message;
  details.author_name = author.name;
  details.author_class = 'User';
  if (s.target) {
    details.target_id = s.target.id;
    details.target_type = s.target.type;
    details.target_details = s.target.details;
  }
  if (author.impersonatedBy) details.impersonated_by = author.impersonatedBy.name;
  details.ip_address = ip;
  details.entity_path = s.entityPath;
  await insertAuditEvent(db, { authorId: author.id, entityType: s.entityType, entityId: s.entityId, details, ipAddress: ip });
}
