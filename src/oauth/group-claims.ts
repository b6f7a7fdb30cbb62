/**
 * The group claims the Service adds to OpenID Connect (reference gitlab-behavior §8.4, oauth.md
 * §2): `groups` lists the full path of every group the user is a member of, directly or through a
 * parent group (User#membership_groups); `groups_direct` (id_token only) the groups of their
 * direct memberships; the three `https://gitlab.org/claims/groups/<role>` claims (userinfo only)
 * the groups where their direct membership has exactly that role, each left out when empty.
 * The claim names are protocol data read by clients and stay as the Service spells them.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import { ACCESS_LEVELS } from '../domain/permissions/access.ts';
import { authorizedGroupLevels, directGroupMemberships } from '../domain/members/members.queries.ts';
import { namespacePathsById } from '../domain/namespaces/namespaces.queries.ts';

export const OWNER_GROUPS_CLAIM = 'https://gitlab.org/claims/groups/owner';
export const MAINTAINER_GROUPS_CLAIM = 'https://gitlab.org/claims/groups/maintainer';
export const DEVELOPER_GROUPS_CLAIM = 'https://gitlab.org/claims/groups/developer';

const ROLE_CLAIMS = [
  [OWNER_GROUPS_CLAIM, ACCESS_LEVELS.owner],
  [MAINTAINER_GROUPS_CLAIM, ACCESS_LEVELS.maintainer],
  [DEVELOPER_GROUPS_CLAIM, ACCESS_LEVELS.developer],
] as const;

export interface GroupClaims {
  /** Full paths of every membership group, inherited sub-groups included. */
  groups: string[];
  /** Full paths of the groups the user is a direct member of. */
  groupsDirect: string[];
  /** Role claim name → full paths of the direct memberships with that role (only non-empty ones). */
  byRole: Record<string, string[]>;
}

export async function loadGroupClaims(db: Kysely<DB>, userId: number): Promise<GroupClaims> {
  const [direct, reachable] = await Promise.all([directGroupMemberships(db, userId), authorizedGroupLevels(db, userId)]);
  const ids = [...new Set([...direct.map((m) => m.source_id), ...reachable.keys()])];
  const paths = await namespacePathsById(db, ids);
  const pathOf = (id: number): string | undefined => paths.get(id)?.fullPath;
  const present = (list: (string | undefined)[]): string[] => list.filter((p): p is string => p !== undefined);
  // Groups in id order, which is also creation order: parents come before their sub-groups.
  const groups = present([...reachable.keys()].sort((a, b) => a - b).map(pathOf));
  const byRole: Record<string, string[]> = {};
  for (const [claim, level] of ROLE_CLAIMS) {
    const list = present(direct.filter((m) => m.access_level === level).map((m) => pathOf(m.source_id)));
    if (list.length > 0) byRole[claim] = list;
  }
  return { groups, groupsDirect: present(direct.map((m) => pathOf(m.source_id))), byRole };
}
