/** Builds the policy's Actor for a user on a project or group: their effective membership level. */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { Actor } from './access.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { groupAccessLevel, projectAccessLevel } from '../members/members.queries.ts';

// Access levels are remembered until the next write, as user rows are (db/read-cache.ts): every
// request on a project or group asks, and memberships change far less often than they are read.

export async function projectActor(db: Kysely<DB>, user: UserRow | null, projectId: number, namespaceLineage: number[]): Promise<Actor> {
  if (!user) return { user: null, accessLevel: 0 };
  const accessLevel = await cachedRead(db, `project-access:${user.id}:${projectId}:${namespaceLineage.join('.')}`,
    () => projectAccessLevel(db, user.id, projectId, namespaceLineage));
  return { user, accessLevel };
}

export async function groupActor(db: Kysely<DB>, user: UserRow | null, lineage: number[]): Promise<Actor> {
  if (!user) return { user: null, accessLevel: 0 };
  const accessLevel = await cachedRead(db, `group-access:${user.id}:${lineage.join('.')}`, () => groupAccessLevel(db, user.id, lineage));
  return { user, accessLevel };
}
