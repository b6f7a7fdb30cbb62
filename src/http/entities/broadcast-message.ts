/** BroadcastMessage (lib/api/entities/broadcast_message.rb). */
import { Type, type Static } from 'typebox';
import type { BroadcastMessageRow } from '../../db/tables/instance-administration.ts';
import { broadcastMessageActive } from '../../domain/broadcast-messages/broadcast-messages.ts';

export const BroadcastMessageSchema = Type.Object({
  id: Type.Integer(),
  message: Type.String(),
  starts_at: Type.String(),
  ends_at: Type.String(),
  color: Type.Union([Type.String(), Type.Null()]),
  font: Type.Union([Type.String(), Type.Null()]),
  target_access_levels: Type.Array(Type.Integer()),
  target_path: Type.Union([Type.String(), Type.Null()]),
  broadcast_type: Type.String(),
  dismissable: Type.Union([Type.Boolean(), Type.Null()]),
  active: Type.Boolean(),
}, { title: 'BroadcastMessage' });

export function presentBroadcastMessage(row: BroadcastMessageRow, now = Date.now()): Static<typeof BroadcastMessageSchema> {
  return {
    id: row.id, message: row.message, starts_at: row.starts_at, ends_at: row.ends_at, color: row.color, font: row.font,
    target_access_levels: row.target_access_levels ? row.target_access_levels.split(' ').map(Number) : [],
    target_path: row.target_path, broadcast_type: row.broadcast_type,
    dismissable: row.dismissable === null ? null : row.dismissable === 1,
    active: broadcastMessageActive(row, now),
  };
}
