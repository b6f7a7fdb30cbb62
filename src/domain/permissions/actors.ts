/** Builds the policy's Actor for a user on a project or group: their effective membership level. */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { Actor } from './access.ts';
import { groupAccessLevel, projectAccessLevel } from '../members/members.queries.ts';

export async function projectActor(db: Kysely<DB>, user: UserRow | null, projectId: number, namespaceLineage: number[]): Promise<Actor> {
  if (!user) return { user: null, accessLevel: 0 };
  return { user, accessLevel: await projectAccessLevel(db, user.id, projectId, namespaceLineage) };
}

export async function groupActor(db: Kysely<DB>, user: UserRow | null, lineage: number[]): Promise<Actor> {
  if (!user) return { user: null, accessLevel: 0 };
  return { user, accessLevel: await groupAccessLevel(db, user.id, lineage) };
}
