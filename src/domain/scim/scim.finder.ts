/**
 * GET /Users of a group's SCIM API (the Service's ScimFinder): every SCIM identity of the group,
 * or those an `eq` filter names. `id` and `externalId` match the extern_uid; `userName` matches
 * an extern_uid first (identity providers often send the NameID as userName), then the account
 * with that username, or, for an email, the account with that email or whose username is its
 * local part.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { listScimIdentities, userIdsByName, type ScimUserRow } from './scim.queries.ts';

export type ScimUserQuery = { kind: 'all' } | { kind: 'externUid'; value: string } | { kind: 'userName'; value: string };

export async function findScimUsers(
  db: Kysely<DB>, groupId: number, query: ScimUserQuery, offset: number, limit: number,
): Promise<{ total: number; rows: ScimUserRow[] }> {
  if (query.kind === 'all') return listScimIdentities(db, groupId, { kind: 'all' }, offset, limit);
  const byUid = await listScimIdentities(db, groupId, { kind: 'externUid', value: query.value }, offset, limit);
  if (query.kind === 'externUid' || byUid.total > 0) return byUid;
  return listScimIdentities(db, groupId, { kind: 'userIds', ids: await userIdsByName(db, query.value) }, offset, limit);
}
