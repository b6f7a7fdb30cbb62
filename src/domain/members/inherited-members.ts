/**
 * The members of a project or group including those who hold access through its ancestor groups
 * and the groups it (or they) are shared with: GET /:source/:id/members/all and the members
 * pages of the web interface read them through this one function.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MemberSourceType } from '../../db/tables/projects.ts';
import { activeGroupLinks, activeProjectLinks } from '../group-links/group-links.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { allMembersQuery } from './members.queries.ts';

export interface MemberSource {
  type: MemberSourceType;
  id: number;
  /** A group's lineage (the group included), or a project's namespace's (ancestors first). */
  lineage: number[];
}

export async function inheritedMembersQuery(db: Kysely<DB>, source: MemberSource) {
  // A group's lineage holds the group itself; a project's, the groups above it (none for a
  // project in a user's namespace, whose namespace has no members). The groups the project or
  // those groups are shared with bring their members (and their ancestors') too.
  const links = [
    ...source.type === 'Project' ? await activeProjectLinks(db, source.id) : [], ...await activeGroupLinks(db, source.lineage),
  ];
  const paths = links.length > 0 ? await namespacePathsById(db, [...new Set(links.map((l) => l.groupId))]) : new Map();
  return allMembersQuery(db, {
    projectId: source.type === 'Project' ? source.id : null, groupIds: source.lineage,
    links: links.map((l) => ({ groupIds: (paths.get(l.groupId)?.lineage ?? []) as number[], access: l.access })),
  });
}
