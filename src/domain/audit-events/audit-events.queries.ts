/** Every Kysely call about audit events. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { AuditEventRow } from '../../db/tables/audit-events.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface NewAuditEvent {
  authorId: number;
  entityType: 'User' | 'Project' | 'Group';
  entityId: number;
  details: Record<string, unknown>;
  ipAddress: string | null;
}

export async function insertAuditEvent(db: Db, e: NewAuditEvent): Promise<AuditEventRow> {
  return db.insertInto('audit_events').values({
    author_id: e.authorId, entity_type: e.entityType, entity_id: e.entityId,
    details: JSON.stringify(e.details), ip_address: e.ipAddress, created_at: nowIso(),
  }).returningAll().executeTakeFirstOrThrow();
}

export interface AuditEventFilters {
  entityType?: string;
  entityId?: number;
  createdAfter?: string;
  createdBefore?: string;
  /** Only events this user caused (what a member below Owner/Maintainer may read). */
  authorId?: number;
}

/** Unordered: the caller's pagination orders by id. */
export function auditEventsQuery(db: Db, f: AuditEventFilters) {
  let q = db.selectFrom('audit_events').selectAll();
  if (f.entityType) q = q.where('entity_type', '=', f.entityType);
  if (f.entityId !== undefined) q = q.where('entity_id', '=', isStorableId(f.entityId) ? f.entityId : 0);
  if (f.createdAfter) q = q.where('created_at', '>=', f.createdAfter);
  if (f.createdBefore) q = q.where('created_at', '<=', f.createdBefore);
  if (f.authorId !== undefined) q = q.where('author_id', '=', f.authorId);
  return q;
}

export async function findAuditEvent(db: Db, id: number, f: AuditEventFilters = {}): Promise<AuditEventRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return auditEventsQuery(db, f).where('id', '=', id).executeTakeFirst();
}
