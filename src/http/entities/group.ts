/**
 * The group entities of the Service: Group for lists and creation, GroupDetail (with the group's
 * projects, and its runner registration token for those who may administer it) for GET and PUT
 * /groups/:id; administrators also see the wiki's storage shard.
 */
import { Type, type Static } from 'typebox';
import type { NamespaceRow } from '../../db/types.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { ProjectSchema, SharedWithGroupSchema } from './project.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const GroupSchema = Type.Object({
  id: Type.Integer(),
  web_url: Type.String(),
  name: Type.String(),
  path: Type.String(),
  description: Type.String(),
  visibility: Type.String(),
  project_creation_level: Type.String(),
  subgroup_creation_level: Type.String(),
  avatar_url: NString,
  full_name: Type.String(),
  full_path: Type.String(),
  created_at: Type.String(),
  parent_id: Type.Union([Type.Integer(), Type.Null()]),
  repository_storage: Type.Optional(NString),
}, { title: 'Group' });

export const GroupDetailSchema = Type.Object({
  ...GroupSchema.properties,
  /** Groups this group is shared with: kiln has no group sharing, so none. */
  shared_with_groups: Type.Array(SharedWithGroupSchema),
  /** The group's runner registration token, for those who may administer it (Owners, administrators). */
  runners_token: Type.Optional(NString),
  /** Top-level groups only; the Service's default. */
  prevent_sharing_groups_outside_hierarchy: Type.Optional(Type.Boolean()),
  projects: Type.Array(ProjectSchema),
  shared_projects: Type.Array(ProjectSchema),
}, { title: 'GroupDetail' });

export type Group = Static<typeof GroupSchema>;
export type GroupDetail = Static<typeof GroupDetailSchema>;

export function presentGroup(
  g: NamespaceRow, paths: { fullPath: string; fullName: string }, o: { externalUrl: string; admin: boolean },
): Group {
  return {
    id: g.id,
    web_url: `${o.externalUrl}/groups/${paths.fullPath}`,
    name: g.name,
    path: g.path,
    description: g.description,
    visibility: visibilityName(g.visibility_level),
    // What the group policy enforces (group.policy.ts): the Service's defaults.
    project_creation_level: 'maintainer',
    subgroup_creation_level: 'maintainer',
    avatar_url: null,
    full_name: paths.fullName,
    full_path: paths.fullPath,
    created_at: g.created_at,
    parent_id: g.parent_id,
    ...(o.admin ? { repository_storage: g.repository_storage } : {}),
  };
}
