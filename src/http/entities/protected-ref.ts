/**
 * The protected branch and tag entities of the Service 15.2 CE (lib/api/entities/protected_branch.rb,
 * protected_tag.rb, protected_ref_access.rb). Premium adds user_id/group_id to each access level and
 * unprotect_access_levels/code_owner_approval_required to a branch; CE shows none of them.
 */
import { Type, type Static } from 'typebox';
import type {
  ProtectedBranchAccessLevelRow, ProtectedBranchRow, ProtectedTagCreateAccessLevelRow, ProtectedTagRow,
} from '../../db/tables/protected-refs.ts';
import { accessLevelDescription } from '../../domain/protected-refs/access-levels.ts';

export const ProtectedRefAccessSchema = Type.Object({
  id: Type.Integer(),
  access_level: Type.Integer(),
  access_level_description: Type.String(),
}, { title: 'ProtectedRefAccess' });

export const ProtectedBranchSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  push_access_levels: Type.Array(ProtectedRefAccessSchema),
  merge_access_levels: Type.Array(ProtectedRefAccessSchema),
  allow_force_push: Type.Boolean(),
}, { title: 'ProtectedBranch' });
export type ProtectedBranch = Static<typeof ProtectedBranchSchema>;

export const ProtectedTagSchema = Type.Object({
  name: Type.String(),
  create_access_levels: Type.Array(ProtectedRefAccessSchema),
}, { title: 'ProtectedTag' });
export type ProtectedTag = Static<typeof ProtectedTagSchema>;

const presentAccess = (l: { id: number; access_level: number }) => ({
  id: l.id, access_level: l.access_level, access_level_description: accessLevelDescription(l.access_level),
});

export function presentProtectedBranch(row: ProtectedBranchRow, levels: ProtectedBranchAccessLevelRow[]): ProtectedBranch {
  const own = levels.filter((l) => l.protected_branch_id === row.id);
  return {
    id: row.id, name: row.name,
    push_access_levels: own.filter((l) => l.action === 'push').map(presentAccess),
    merge_access_levels: own.filter((l) => l.action === 'merge').map(presentAccess),
    allow_force_push: row.allow_force_push === 1,
  };
}

export function presentProtectedTag(row: ProtectedTagRow, levels: ProtectedTagCreateAccessLevelRow[]): ProtectedTag {
  return { name: row.name, create_access_levels: levels.filter((l) => l.protected_tag_id === row.id).map(presentAccess) };
}
