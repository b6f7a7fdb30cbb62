/** The Member entity (lib/api/entities/member.rb): the user (UserBasic) plus the membership. */
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/types.ts';
import { presentUserBasic, UserBasicSchema } from './user.ts';

export const MemberSchema = Type.Object({
  ...UserBasicSchema.properties,
  access_level: Type.Integer(),
  created_at: Type.String(),
  created_by: Type.Optional(UserBasicSchema),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  membership_state: Type.String(),
}, { title: 'Member' });

export type Member = Static<typeof MemberSchema>;

export interface MemberRowWithUser extends UserRow {
  member_id: number;
  access_level: number;
  expires_at: string | null;
  member_created_at: string;
  member_created_by_id: number | null;
}

export function presentMember(row: MemberRowWithUser, createdBy: UserRow | undefined, externalUrl: string): Member {
  const o = { externalUrl, canReadProfile: true };
  return {
    ...presentUserBasic(row, {}, o),
    access_level: row.access_level,
    created_at: row.member_created_at,
    ...(createdBy ? { created_by: presentUserBasic(createdBy, {}, o) } : {}),
    expires_at: row.expires_at,
    membership_state: 'active',
  };
}
