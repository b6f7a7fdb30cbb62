/** The audit events table (migration 2026-11-24T1620_audit_events). */
import type { Generated, Selectable } from 'kysely';

export interface AuditEventsTable {
  id: Generated<number>;
  author_id: number;
  /** The User, Project or Group the event belongs to. */
  entity_id: number;
  entity_type: string;
  /** JSON object: author_name, target_*, custom_message or add/remove/as, ip_address, entity_path. */
  details: string;
  ip_address: string | null;
  created_at: string;
}
export type AuditEventRow = Selectable<AuditEventsTable>;

declare module '../types.ts' {
  interface DB {
    audit_events: AuditEventsTable;
  }
}
