/** AuditEvent (the Service's API::Entities::AuditEvent): id, author_id, entity_id, entity_type, details, created_at. */
import { Type, type Static } from 'typebox';
import type { AuditEventRow } from '../../db/tables/audit-events.ts';

export const AuditEventSchema = Type.Object({
  id: Type.Integer(),
  author_id: Type.Integer(),
  entity_id: Type.Integer(),
  entity_type: Type.String(),
  details: Type.Object({}, {
    additionalProperties: true,
    description: 'author_name, target_id, target_type, target_details, custom_message or add/remove/as, ip_address, entity_path',
  }),
  created_at: Type.String(),
}, { title: 'AuditEvent' });
export type AuditEvent = Static<typeof AuditEventSchema>;

export function presentAuditEvent(row: AuditEventRow): AuditEvent {
  return {
    id: row.id,
    author_id: row.author_id,
    entity_id: row.entity_id,
    entity_type: row.entity_type,
    details: JSON.parse(row.details) as Record<string, unknown>,
    created_at: row.created_at,
  };
}
