/** GpgKey (reference §2.2): the armored public key as it was added. */
import { Type, type Static } from 'typebox';
import type { GpgKeyRow } from '../../db/tables/keys.ts';

export const GpgKeySchema = Type.Object({
  id: Type.Integer(),
  key: Type.String(),
  created_at: Type.String(),
}, { title: 'GpgKey' });

export type GpgKey = Static<typeof GpgKeySchema>;

export function presentGpgKey(row: GpgKeyRow): GpgKey {
  return { id: row.id, key: row.key, created_at: row.created_at };
}
