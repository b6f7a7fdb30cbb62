/**
 * The lookups behind Markdown references (references.ts): each takes the bounded lists the
 * renderer found (reference-filter.ts caps them) and reads by an index: users by
 * `lower(username)`, issues by (project_id, iid), labels and milestones by owner and title or iid.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { isStorableText } from '../../db/constraints.ts';

type Db = Kysely<DB> | Transaction<DB>;

const storable = (values: string[]) => values.filter((v) => isStorableText(v));

export function activeUsersByUsernames(db: Db, lowerUsernames: string[]) {
  const names = storable(lowerUsernames);
  if (names.length === 0) return Promise.resolve([]);
  return db.selectFrom('users').select(['id', 'username', 'name'])
    .where(sql<string>`lower(username)`, 'in', names)
    .where('state', '=', 'active')
    .execute();
}

export async function projectIssuesByIids(db: Db, projectId: number, iids: number[]) {
  if (iids.length === 0) return [];
  const issues = await db.selectFrom('issues')
    .select(['id', 'iid', 'title', 'author_id', 'confidential', 'discussion_locked', 'issue_type'])
    .where('project_id', '=', projectId).where('iid', 'in', iids)
    .execute();
  if (issues.length === 0) return [];
  const assignees = await db.selectFrom('issue_assignees').select(['issue_id', 'user_id'])
    .where('issue_id', 'in', issues.map((i) => i.id))
    .execute();
  return issues.map((i) => ({ ...i, assignee_ids: assignees.filter((a) => a.issue_id === i.id).map((a) => a.user_id) }));
}

export function projectMergeRequestsByIids(db: Db, projectId: number, iids: number[]) {
  if (iids.length === 0) return Promise.resolve([]);
  return db.selectFrom('merge_requests').select(['id', 'iid', 'title']).where('project_id', '=', projectId).where('iid', 'in', iids)
    .execute();
}

/** The project's labels and its groups' that `ids` or `titles` name. */
export function labelsByIdsOrTitles(db: Db, projectId: number, groupIds: number[], ids: number[], titles: string[]) {
  const names = storable(titles);
  if (ids.length === 0 && names.length === 0) return Promise.resolve([]);
  return db.selectFrom('labels').select(['id', 'title', 'color', 'description', 'project_id', 'group_id'])
    .where((eb) => eb.or([
      eb('project_id', '=', projectId),
      ...(groupIds.length > 0 ? [eb('group_id', 'in', groupIds)] : []),
    ]))
    .where((eb) => eb.or([
      ...(ids.length > 0 ? [eb('id', 'in', ids)] : []),
      ...(names.length > 0 ? [eb('title', 'in', names)] : []),
    ]))
    .execute();
}

/** The project's milestones and its groups' that `iids` or `titles` name. */
export function milestonesByIidsOrTitles(db: Db, projectId: number, groupIds: number[], iids: number[], titles: string[]) {
  const names = storable(titles);
  if (iids.length === 0 && names.length === 0) return Promise.resolve([]);
  return db.selectFrom('milestones').select(['id', 'iid', 'title', 'project_id', 'group_id'])
    .where((eb) => eb.or([
      eb('project_id', '=', projectId),
      ...(groupIds.length > 0 ? [eb('group_id', 'in', groupIds)] : []),
    ]))
    .where((eb) => eb.or([
      ...(iids.length > 0 ? [eb('iid', 'in', iids)] : []),
      ...(names.length > 0 ? [eb('title', 'in', names)] : []),
    ]))
    .execute();
}
