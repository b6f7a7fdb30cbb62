/**
 * The search API's SQL (the Service's Gitlab::SearchResults, GroupSearchResults and
 * ProjectSearchResults, basic search): substring matches without regard to case, with the user's
 * own `%` and `_` taken literally. Each function returns an ordered query builder; the caller pages
 * it. Projects are found by the projects finder (domain/projects/project.finder.ts), as GET
 * /projects?search= finds them.
 */
import { sql, type Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { VISIBILITY_LEVELS } from '../permissions/access.ts';
import { containsPattern } from '../projects/project.finder.ts';
import { findUsers } from '../users/users.finder.ts';
import { descendantGroupIds } from '../namespaces/namespaces.queries.ts';

const like = (column: string, pattern: string) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;

/**
 * Personal snippets the viewer may read whose title, description or file name holds `text`
 * (Snippet.search over SnippetsFinder's personal snippets): administrators every one; others
 * public ones, internal ones unless external, and their own. Newest first, by id: the
 * snippets_visibility and primary key indexes serve that order (the Service sorts by
 * updated_at, which no index here leads).
 */
export function snippetTitlesMatching(db: Kysely<DB>, viewer: UserRow, text: string) {
  const pattern = containsPattern(text);
  let qb = db.selectFrom('snippets').selectAll('snippets').where('snippets.project_id', 'is', null);
  if (!viewer.admin) {
    const minVisible = viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal;
    qb = qb.where((eb) => eb.or([
      eb('snippets.visibility_level', '>=', minVisible),
      eb('snippets.author_id', '=', viewer.id),
    ]));
  }
  return qb.where((eb) => eb.or([
    like('snippets.title', pattern),
    like('snippets.file_name', pattern),
    eb(sql`lower(coalesce(snippets.description, ''))`, 'like', sql`${pattern} escape '\\'`),
  ])).orderBy('snippets.id', 'desc');
}

/**
 * Users whose name or username holds `text`, or whose public email is `text` (SearchResults#users
 * through UsersFinder: administrators see users of every state, others not the blocked or banned).
 * Newest first.
 */
export function usersMatching(db: Kysely<DB>, viewer: UserRow, text: string) {
  return findUsers(db, { admin: viewer.admin === 1, search: text, orderBy: 'id', sort: 'desc' });
}

/** Ids of the users holding a membership of one of `sources` (direct rows; a project's or groups'). */
function memberUserIds(db: Kysely<DB>, sources: { projectId: number | null; groupIds: number[] }) {
  return db.selectFrom('members').select('members.user_id').where((eb) => eb.or([
    ...(sources.projectId !== null
      ? [eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', '=', sources.projectId)])] : []),
    ...(sources.groupIds.length > 0
      ? [eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', sources.groupIds)])] : []),
  ]));
}

/**
 * Matching users who are members of the project, directly or through its namespace's groups
 * (ProjectSearchResults#users: `project.team.members`). `lineage` is the project's groups.
 */
export function projectMembersMatching(db: Kysely<DB>, viewer: UserRow, text: string, projectId: number, lineage: number[]) {
  return usersMatching(db, viewer, text).where('users.id', 'in', memberUserIds(db, { projectId, groupIds: lineage }));
}

/**
 * Matching users who are members of the group, of one of its ancestors or of one of its
 * sub-groups (GroupSearchResults#users: the group's direct and indirect users). Members of the
 * hierarchy's projects only are not counted.
 */
export async function groupMembersMatching(db: Kysely<DB>, viewer: UserRow, text: string, groupId: number, lineage: number[]) {
  const descendants = [...(await descendantGroupIds(db, [groupId])).keys()];
  const groupIds = [...new Set([...lineage, groupId, ...descendants])];
  return usersMatching(db, viewer, text).where('users.id', 'in', memberUserIds(db, { projectId: null, groupIds }));
}

/** The group and every sub-group below it: where a group search looks for projects (include_subgroups). */
export async function groupHierarchyIds(db: Kysely<DB>, groupId: number): Promise<number[]> {
  return [groupId, ...(await descendantGroupIds(db, [groupId])).keys()];
}

/**
 * Milestones whose title or description holds `text` (Milestone.search), of the projects in
 * `projectIds` (a query of the projects the viewer may read) and of the groups in `groupIds`
 * (groups the caller has already found readable), or `all` of them. Newest first.
 */
export function milestonesMatching(
  db: Kysely<DB>, text: string, o: { projectIds: { select: unknown } | null; groupIds: readonly number[] } | 'all',
) {
  const pattern = containsPattern(text);
  const base = db.selectFrom('milestones').selectAll('milestones');
  // An administrator's instance-wide search reads every milestone: no owner condition to scan projects for.
  const owned = o === 'all' ? base : base
    .where((eb) => eb.or([
      ...(o.projectIds ? [eb('milestones.project_id', 'in', o.projectIds as never)] : []),
      ...(o.groupIds.length > 0 ? [eb('milestones.group_id', 'in', [...o.groupIds])] : []),
      ...(o.projectIds || o.groupIds.length > 0 ? [] : [sql<boolean>`1 = 0`]),
    ]));
  return owned
    .where((eb) => eb.or([
      like('milestones.title', pattern),
      eb(sql`lower(coalesce(milestones.description, ''))`, 'like', sql`${pattern} escape '\\'`),
    ]))
    .orderBy('milestones.id', 'desc');
}

/**
 * The project's comments holding `text` that the viewer may read (ProjectSearchResults#notes over
 * NotesFinder): no system notes; internal notes only for Reporters and up; notes on issues only
 * where the issue is in `readableIssueIds` (a query of the issues the viewer may see), on commits
 * only when the code is readable, on project snippets by the snippet's visibility. Newest first.
 */
export function notesMatching(db: Kysely<DB>, viewer: UserRow, text: string, o: {
  projectId: number; readableIssueIds: { select: unknown }; canReadCode: boolean; canReadInternal: boolean;
  /** The lowest snippet visibility the viewer reads without being the author (20 public, 10 internal, 0 all). */
  snippetMinVisibility: number | null;
}) {
  const pattern = containsPattern(text);
  let qb = db.selectFrom('notes').selectAll('notes').where('notes.project_id', '=', o.projectId).where('notes.system', '=', 0)
    .where(like('notes.note', pattern));
  if (!o.canReadInternal) qb = qb.where('notes.internal', '=', 0);
  return qb.where((eb) => eb.or([
    eb.and([eb('notes.noteable_type', '=', 'Issue'), eb('notes.noteable_id', 'in', o.readableIssueIds as never)]),
    ...(o.canReadCode ? [eb('notes.noteable_type', '=', 'Commit')] : []),
    ...(o.snippetMinVisibility !== null ? [eb.and([
      eb('notes.noteable_type', '=', 'Snippet'),
      eb('notes.noteable_id', 'in', eb.selectFrom('snippets').select('snippets.id').where('snippets.project_id', '=', o.projectId)
        .where((s) => s.or([s('snippets.visibility_level', '>=', o.snippetMinVisibility!), s('snippets.author_id', '=', viewer.id)]))),
    ])] : []),
  ])).orderBy('notes.id', 'desc');
}
