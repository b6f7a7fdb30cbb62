/**
 * The Service's Entities::Trigger (15.2) through Ci::TriggerPresenter: `id`, `token` (whole for the
 * trigger's owner, its first four characters for anyone else), `description`, `created_at`,
 * `updated_at`, `last_used` and `owner` (UserBasic).
 */
import { Type, type Static } from 'typebox';
import type { CiTriggerRow } from '../../db/tables/ci-variables.ts';
import type { UserRow } from '../../db/types.ts';
import { shortToken } from '../../domain/triggers/manage-triggers.ts';
import { UserBasicSchema, presentUserBasic } from './user.ts';

export const TriggerSchema = Type.Object({
  id: Type.Integer(),
  token: Type.String(),
  description: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  last_used: Type.Union([Type.String(), Type.Null()]),
  owner: Type.Union([UserBasicSchema, Type.Null()]),
}, { title: 'Trigger' });

export function presentTrigger(
  row: CiTriggerRow, token: string, owner: UserRow | null, viewerId: number, externalUrl: string,
): Static<typeof TriggerSchema> {
  return {
    id: row.id,
    token: row.owner_id === viewerId ? token : shortToken(token),
    description: row.description,
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_used: row.last_used_at,
    owner: owner ? presentUserBasic(owner, {}, { externalUrl, canReadProfile: false }) : null,
  };
}
